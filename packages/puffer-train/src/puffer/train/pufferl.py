"""PuffeRL: collect segments (`collect`), update the policy (`train`), report (`mean_and_log`).

Data flow per iteration (the acting itself is `puffer.train.rollout.Rollout`):

    vecenv.recv() -> rewards/dones into the rows that acted last -> cut recurrent state,
      policy.forward_eval -> sample actions -> obs/actions/logprobs/values into this step's
      rows -> clip to the action space -> vecenv.send()
    ... until every agent filled its segments (the last reply, or each env buffer's, is held
    for the next iteration);
    then `train` (its phases are `puffer.train.update.Update`), per minibatch:
    puff_advantage(whole buffer) -> segment_priorities -> sample segments -> PPO loss -> step

The trainer never imports rich, wandb or argparse: it hands one flat metrics dict per iteration to
its sinks (`puffer.train.metrics.MetricsSink`).
"""

from __future__ import annotations

import math
import time
from collections import defaultdict, deque
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from puffer.core import APIUsageError, PufferError, mask_width
from puffer.train import checkpoint as ckpt
from puffer.train import distributed
from puffer.train.buffer import Cursor, ObservationWriter, RolloutBuffer
from puffer.train.config import Config, ConfigError, Sizes, TrainConfig
from puffer.train.evaluate import episode_weight
from puffer.train.host_memory import keep_freed_memory
from puffer.train.metrics import MetricsSink
from puffer.train.normalize import RewardScaler
from puffer.train.optim import make_optimizer
from puffer.train.paths import RunPaths
from puffer.train.policies import Policy
from puffer.train.rollout import Rollout, Step
from puffer.train.runtime import check_torch_settings, resolve_device
from puffer.train.update import Update

__all__ = ["TIME_SPLIT", "DivergedError", "PuffeRL"]

# Where an iteration's wall time goes (`time/<key>` metrics, fractions of the iteration;
# `time/other` is the rest: advantages, sampling, gathers, logging, checkpoints). env: inside the
# vecenv; rollout: acting (policy inference, sampling, state, stores); forward: the training forward
# and loss; backward; optimizer: gradient clip and step. On CUDA these are host times: kernels run
# asynchronously, so device work shows up where the host next waits for it (no syncs are added).
TIME_SPLIT = ("env", "rollout", "forward", "backward", "optimizer")

# Episodes kept per env statistic for the running means (e.g. the 100-episode mean return).
RECENT_EPISODES = 100


# Lockstep steps whose observations are staged and written to the buffer together on the CPU
# (`ObservationWriter`). Ocean breakout, 1,024 rows of 472 bytes, in the trainer on a 2-core
# Xeon: 92 us per step with staging and 146 without, and the MLP's collect() 69-70 ms against
# 74 ms per iteration; groups of 8 and 16 are no faster.
CPU_OBS_GROUP = 4


class DivergedError(PufferError):
    """An update made a loss or the gradient norm NaN or infinite (checked once per iteration)."""


class PuffeRL:
    """The PPO trainer over any vecenv with the async API.

    Args:
        config: the run's `Config` (or just its `TrainConfig`).
        vecenv: has `async_reset(seed)`, `send(actions)`, `recv()` returning `(obs, rewards,
            terminals, truncations, infos, agent_ids, masks)`, and `num_agents`,
            `single_observation_space`, `single_action_space`. A `puffer.core.PufferEnv` or a
            `puffer.vector` vectorizer both qualify. The trainer does not close it.
        policy: a `puffer.train.policies.Policy` built for this env, after
            `apply_torch_settings(config)`; moved to the device.
        sinks: metric sinks fed by `mean_and_log` (rank 0 only under DDP).
        run_dir: where `save_checkpoint` writes; None disables checkpoints.

    Raises:
        APIUsageError: the process's torch settings are not the config's
            (`puffer.train.apply_torch_settings` was not called before the policy was built).

    Example:
        >>> from puffer.core import make
        >>> from puffer.train import PolicyConfig, TrainConfig, apply_torch_settings, make_policy
        >>> env = make("gym-CartPole-v1")
        >>> config = TrainConfig(horizon=8, minibatch_size=8, total_timesteps=16, device="cpu")
        >>> apply_torch_settings(Config(train=config))
        >>> trainer = PuffeRL(config, env, make_policy(PolicyConfig(hidden_size=8), env))
        >>> trainer.collect(); _ = trainer.train(); trainer.global_step
        8
        >>> trainer.close(); env.close()
    """

    def __init__(
        self,
        config: Config | TrainConfig,
        vecenv: Any,
        policy: Policy,
        sinks: tuple[MetricsSink, ...] | list[MetricsSink] = (),
        run_dir: str | Path | None = None,
    ):
        self.config = config if isinstance(config, Config) else Config(train=config)
        cfg = self.config.train
        self.vecenv = vecenv
        self.sinks = list(sinks)
        self.run_dir = Path(run_dir) if run_dir is not None else None
        self.rank, self.world_size = distributed.rank_and_world()
        self.device = resolve_device(cfg.device)
        if self.device.type == "cuda" and self.world_size > 1:
            self.device = torch.device("cuda", distributed.local_rank())
        # The settings are made before the policy exists (its init depends on them), by
        # `apply_torch_settings`; here they are only checked.
        check_torch_settings(self.config)
        if self.device.type == "cpu":
            keep_freed_memory()  # no page faults on each pass's activations

        self.sizes = Sizes.derive(cfg, int(vecenv.num_agents), self.world_size)
        if cfg.sample_steps and policy.is_recurrent:
            raise ConfigError(
                "train.sample_steps is true but the policy is recurrent: its minibatches need "
                "whole segments to replay the state; set train.sample_steps false or use a "
                "feedforward policy (policy.recurrent 'none')"
            )
        self.policy = policy.to(self.device)
        distributed.broadcast_parameters(self.policy)
        self.optimizer = make_optimizer(self.policy, cfg)

        self.global_step = 0
        self.iteration = 0
        self.resets = 0
        self.stats: dict[str, list[float]] = defaultdict(list)
        self.recent: dict[str, deque[float]] = defaultdict(lambda: deque(maxlen=RECENT_EPISODES))
        self.losses: dict[str, float] = {}
        self.times: dict[str, float] = defaultdict(float)
        self._iteration_start = time.perf_counter()
        # Steps and seconds of the iterations this process trained: the run's average rate, which
        # the time left is read from (one iteration's rate swings with the machine's load).
        self._run_steps = 0
        self._run_seconds = 0.0
        self.closed = False

        self.rollout = Rollout(
            self.policy,
            vecenv,
            self.times,
            cfg.cuda_graphs,
            learn=True,
            precision=cfg.precision,
            action_masks=cfg.action_masks,
        )
        self.reward_scaler = None
        if cfg.normalize_reward:
            self.reward_scaler = RewardScaler(self.sizes.num_agents, cfg.gamma).to(self.device)
        obs_space = vecenv.single_observation_space
        obs_dtype = torch.from_numpy(np.zeros(0, dtype=obs_space.dtype)).dtype
        head = self.policy.head
        self.buffer = RolloutBuffer.allocate(
            self.sizes,
            tuple(obs_space.shape),
            obs_dtype,
            head.action_shape,
            head.action_dtype,
            self.rollout.state,
            self.device,
            mask_width(vecenv.single_action_space) if self.rollout.masked else None,
        )
        # The rollout writes each step into a time-major twin; collect() hands the iteration to
        # `buffer`, which training reads segment by segment.
        self.step_buffer = self.buffer.time_major_twin()
        # `EnvBuffers` replies one buffer of agents at a time, each in lockstep.
        self.cursor = Cursor(self.sizes, self.device, getattr(vecenv, "num_buffers", 1))
        self.obs_writer = ObservationWriter(
            self.buffer.observations, CPU_OBS_GROUP if self.device.type == "cpu" else 1
        )
        self.update = Update(
            cfg,
            self.sizes,
            self.policy,
            self.optimizer,
            self.buffer,
            self.times,
            self.device,
            graph=cfg.update_graph,
        )
        # The envs are reset by the first collect(), after a resume has had its say.
        self._started = False

    # Rollout ------------------------------------------------------------------------------

    def collect(self) -> None:
        """Collect one iteration of segments into the buffer (blocks on the env)."""
        self._check_open("collect")
        start, timed = time.perf_counter(), self.times["env"] + self.times["rollout"]
        if not self._started:
            self.rollout.reset(self._next_seed())
            self._started = True
        self.cursor.new_iteration()
        if self.config.train.recurrent_state == "zero":
            self.rollout.zero_state()
        held = self.rollout.take_held()
        if held is not None:
            self._act(held)
        while True:
            step = self.rollout.recv()
            self._add_stats(step.infos)
            self.rollout.forward(step)
            closing = self._store_reply(step)
            if closing is not None:
                self.buffer.next_values[closing] = step.value
            if self.cursor.finished_rows(step.ids):
                # These rows are full: hold the reply unsent; the next iteration acts on it (with
                # the other env buffers' last replies) with the updated policy.
                self.rollout.hold(step)
                if not self.cursor.done:
                    continue
                self.obs_writer.flush()
                self.buffer.copy_steps_from(self.step_buffer)
                # Acting time not yet counted (buffer stores, stats) is the rollout's too.
                spent = self.times["env"] + self.times["rollout"] - timed
                self.times["rollout"] += time.perf_counter() - start - spent
                return
            self._act(step)

    def _add_stats(self, infos: list[dict[str, Any]]) -> None:
        for info in infos:
            # Ocean envs report means over `n` episodes: weight them so running means are per
            # episode, as evaluation does.
            count, values = episode_weight(info)
            for key, value in values.items():
                self.stats[key].extend([float(value)] * count)

    def _store_reply(self, step: Step) -> Tensor | None:
        """Write r, d, u and V(final obs) into the rows that acted last; return the segments
        this step closes.

        A truncated row bootstraps from V(final obs) (`puff_advantage` reads it there); an env
        that keeps no final observation leaves V_t, the row's own value, to stand in for it.
        """
        index, closing = self.cursor.reply_index(step.ids)
        if index is not None:
            buf = self.step_buffer
            rewards = step.rewards
            if self.reward_scaler is not None:
                ids = torch.from_numpy(step.ids).to(self.device)
                done = step.terminals | step.truncations
                rewards = self.reward_scaler(rewards, done, ids, step.masks)
            if self.config.train.reward_clip > 0:
                clip = self.config.train.reward_clip
                rewards = rewards.clamp(-clip, clip)
            buf.rewards[index] = rewards
            buf.terminals[index] = step.terminals.float()
            buf.truncations[index] = step.truncations.float()
            if step.final_values is not None:
                buf.final_values[index] = step.final_values
            else:
                buf.final_values[index] = buf.values[index]
        return closing

    def _act(self, step: Step) -> None:
        """Sample actions for the step's rows, store o, a, log pi, V (and segment-start states),
        send the actions."""
        if step.params is None:
            self.rollout.forward(step)
        action, logprob = self.rollout.sample(step)
        index, opens = self.cursor.store_index(step.ids)
        buf = self.step_buffer
        self.obs_writer.store(index, step.obs)
        buf.actions[index] = action
        buf.logprobs[index] = logprob
        buf.values[index] = step.value
        buf.masks[index] = step.masks.float()
        if buf.action_masks is not None:
            buf.action_masks[index] = step.action_masks
        if self.policy.is_recurrent:
            # The (cut) state a segment starts from, so training replays the same sequence.
            rows = index[0]
            for stored, s in zip(buf.states, step.state, strict=True):
                if opens is True:
                    stored[rows] = s
                elif isinstance(opens, Tensor):
                    stored[rows[opens]] = s[opens]
        self.rollout.send(step, action)
        self.global_step += len(step.ids) * self.world_size

    def _next_seed(self) -> int:
        """The seed of this run's next env reset: `seed + rank` first, then a stream derived
        from it, so a resumed run meets new episodes rather than replaying the first ones."""
        resets, self.resets = self.resets, self.resets + 1
        seed = self.config.train.seed + self.rank
        if resets == 0:
            return seed
        return int(np.random.SeedSequence([seed % 2**64, resets]).generate_state(1)[0] >> 1)

    # Update -------------------------------------------------------------------------------

    def train(self) -> dict[str, float]:
        """One update over the collected iteration: prioritized minibatches of segments, in the
        phases `puffer.train.update.Update` names (schedule, advantages, minibatch selection,
        one minibatch's update, logging).

        Returns:
            the iteration's mean losses (also kept in `self.losses`).

        Raises:
            DivergedError: a loss statistic or the gradient norm came out NaN or infinite.
        """
        self._check_open("train")
        self.losses = self.update(self.iteration)
        diverged = sorted(key for key, value in self.losses.items() if not math.isfinite(value))
        if diverged:
            raise DivergedError(
                f"training diverged at iteration {self.iteration} (step {self.global_step:,}): "
                f"{', '.join(diverged)} not finite, so the policy's parameters are no longer "
                "usable; resume from the last checkpoint with a lower train.learning_rate or "
                "train.max_grad_norm"
            )
        self.iteration += 1
        return dict(self.losses)

    # Reporting ----------------------------------------------------------------------------

    def mean_and_log(self) -> dict[str, float]:
        """Average this iteration's env stats, add losses, speed and time split; feed the sinks.

        Returns:
            the flat metrics dict (`environment/*`, `losses/*`, `performance/*`, `time/*`).
        """
        now = time.perf_counter()
        elapsed = max(now - self._iteration_start, 1e-9)
        metrics: dict[str, float] = {}
        for key, values in self.stats.items():
            if values:
                metrics[f"environment/{key}"] = float(np.mean(values))
                self.recent[key].extend(values)
        # How many episodes this iteration's means cover, so means over many iterations (a whole
        # run's success rates, say) can be weighted by episode, not by iteration.
        metrics["performance/episodes"] = float(max(map(len, self.stats.values()), default=0))
        self.stats.clear()
        for key, value in self.losses.items():
            metrics[f"losses/{key}"] = value
        steps = self.sizes.batch_size * self.world_size
        metrics["performance/sps"] = steps / elapsed
        metrics["performance/iteration"] = float(self.iteration)
        metrics["performance/iterations"] = float(self.sizes.iterations)
        metrics["performance/global_step"] = float(self.global_step)
        self._run_steps += steps
        self._run_seconds += elapsed
        # What the run trains: whole iterations, which may pass total_timesteps
        # (`Sizes.iterations`).
        remaining = max(self.sizes.iterations * steps - self.global_step, 0)
        metrics["performance/time_left"] = remaining * self._run_seconds / self._run_steps
        for key in TIME_SPLIT:
            metrics[f"time/{key}"] = self.times.get(key, 0.0) / elapsed
        accounted = sum(self.times.get(key, 0.0) for key in TIME_SPLIT)
        metrics["time/other"] = max(0.0, elapsed - accounted) / elapsed
        self.times.clear()
        self._iteration_start = now
        if self.rank == 0:
            for sink in self.sinks:
                sink.log(metrics, self.global_step)
        return metrics

    def recent_mean(self, key: str = "episode_return") -> float:
        """Mean of `key` over the last `RECENT_EPISODES` finished episodes (nan if none)."""
        values = self.recent.get(key)
        return float(np.mean(values)) if values else float("nan")

    # Checkpoints --------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue: model, optimizer, counters, RNG streams, the held
        reply and recurrent state, the env's own state when it can save it, and the config.

        Call it between iterations (after `train()`), where a checkpoint is consistent.
        """
        env_state = None
        if self._started and hasattr(self.vecenv, "save_state"):
            env_state = torch.from_numpy(np.array(self.vecenv.save_state(), dtype=np.uint8))
        return {
            "model": self.policy.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "trainer": {
                "global_step": self.global_step,
                "iteration": self.iteration,
                "resets": self.resets,
                "recent": {key: list(values) for key, values in self.recent.items()},
            },
            "rng": ckpt.rng_state(),
            "rollout": self.rollout.held_state(),
            "env": env_state,
            "reward_scaler": None
            if self.reward_scaler is None
            else self.reward_scaler.state_dict(),
            "config": self.config.to_dict(),
            "num_agents": self.sizes.num_agents,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore `state_dict()` output; raises `CheckpointError` when it does not fit.

        With the env's saved state (native Ocean envs) the run continues exactly: the envs are
        put back where they stood and the held reply is acted on next. Without it the envs are
        reset at the next `collect()` with the next seed of the run's seed stream, and the
        held reply and recurrent state start afresh.
        """
        ckpt.check_compatible(state, self.config, self.sizes.num_agents)
        try:
            self.policy.load_state_dict(state["model"])
            self.optimizer.load_state_dict(state["optimizer"])
            if self.reward_scaler is not None and state.get("reward_scaler") is not None:
                self.reward_scaler.load_state_dict(state["reward_scaler"])
        except (RuntimeError, KeyError, ValueError, APIUsageError) as error:
            raise ckpt.CheckpointError(
                f"checkpoint model/optimizer do not fit this policy: {error}; resume with the "
                "policy and optimizer config the run was started with"
            ) from error
        trainer = state["trainer"]
        self.global_step = int(trainer["global_step"])
        self.iteration = int(trainer["iteration"])  # checkpoint.load renamed an old "epoch"
        self.resets = int(trainer.get("resets", 1))
        self.recent.clear()
        for key, values in trainer.get("recent", {}).items():
            self.recent[key].extend(values)
        ckpt.set_rng_state(state["rng"])
        env_state, rollout = state.get("env"), state.get("rollout")
        self._started = False
        if env_state is not None and rollout is not None and hasattr(self.vecenv, "load_state"):
            # A reset brings the env's Python side to "stepping"; load_state overwrites the rest.
            self.rollout.reset(self.config.train.seed + self.rank)
            self.rollout.recv()
            self.vecenv.load_state(env_state.numpy())
            self.rollout.load_held_state(rollout)
            self._started = True

    def save_checkpoint(self) -> Path | None:
        """Write `run_dir/checkpoint.pt` atomically (rank 0 only); returns its path."""
        if self.run_dir is None:
            raise APIUsageError(
                "PuffeRL.save_checkpoint() needs a run_dir; pass run_dir= to PuffeRL"
            )
        if self.rank != 0:
            return None
        return ckpt.save(self.run_dir / RunPaths.CHECKPOINT, self.state_dict())

    def close(self) -> None:
        """Close the sinks. Idempotent; the vecenv stays open (its owner closes it)."""
        if self.closed:
            return
        self.closed = True
        for sink in self.sinks:
            sink.close()

    def _check_open(self, call: str) -> None:
        if self.closed:
            raise APIUsageError(f"PuffeRL.{call}() called after close(); make a new trainer")
