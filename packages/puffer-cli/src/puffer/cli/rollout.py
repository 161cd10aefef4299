"""Run a trained policy (or random actions) in one env: checkpoints, episode stats.

`puffer eval` uses `find_checkpoint`, `load_policy` and `play`; `puffer bench` uses
`random_actions`. The acting itself is the trainer's (`puffer.train.rollout.Rollout`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import batch_space

from puffer.core import PufferEnv, action_dtype
from puffer.train import Config, Policy, make_policy
from puffer.train.checkpoint import CheckpointError, load
from puffer.train.config import env_defaults
from puffer.train.paths import RunPaths
from puffer.train.rollout import Rollout

__all__ = [
    "EpisodeStats",
    "find_checkpoint",
    "load_policy",
    "load_run_config",
    "one_instance",
    "play",
    "random_actions",
]


def find_checkpoint(path: str, data_dir: str | Path, env_name: str) -> Path:
    """Resolve `--load-model-path`: a checkpoint file, a run directory, or "latest".

    "latest" is the run of `env_name` under `data_dir` whose checkpoint was written last.

    Raises:
        CheckpointError: Nothing is found; the message says where it looked.
    """
    if path == "latest":
        latest = RunPaths.latest(data_dir, env_name)
        if latest is None:
            root = RunPaths.env_dir(data_dir, env_name)
            raise CheckpointError(
                f"--load-model-path latest: no {RunPaths.CHECKPOINT} under {root}/; train first "
                f"(`puffer train {env_name}`) or pass --train.data-dir where your runs are"
            )
        return latest.checkpoint
    candidate = Path(path)
    if candidate.is_dir():
        candidate = candidate / RunPaths.CHECKPOINT
    if not candidate.is_file():
        raise CheckpointError(
            f"--load-model-path {path}: no checkpoint there; pass a {RunPaths.CHECKPOINT}, its "
            "run directory, or 'latest'"
        )
    return candidate


def load_run_config(checkpoint: Path) -> Config:
    """The config a checkpoint was trained with.

    Raises:
        CheckpointError: The file is not a puffer checkpoint.
    """
    return Config.from_dict(load(checkpoint)["config"])


def load_policy(checkpoint: Path, env: PufferEnv) -> Policy:
    """Build the policy a checkpoint was trained with (its own [policy] section) and load it.

    Raises:
        CheckpointError: The file is not a puffer checkpoint or does not fit `env`.
    """
    state = load(checkpoint)
    saved = Config.from_dict(state["config"])
    policy = make_policy(saved.policy, env)
    try:
        policy.load_state_dict(state["model"])
    except RuntimeError as error:
        raise CheckpointError(
            f"{checkpoint} does not fit {env}: {error}; evaluate it on the env it was trained on"
        ) from error
    return policy.eval()


def one_instance(creator: Callable[..., PufferEnv], env_config: dict[str, Any]) -> PufferEnv:
    """One instance of an env to watch or play: `[env]` with `num_envs` 1 (where the creator
    takes it), RGB frames, and episode stats reported every step (`log_interval` 1)."""
    accepted = env_defaults(creator)
    kwargs = dict(env_config, render_mode="rgb_array")
    kwargs.update({k: 1 for k in ("num_envs", "log_interval") if k in accepted})
    return creator(**kwargs)


def random_actions(space: spaces.Space, num_agents: int, count: int, seed: int) -> np.ndarray:
    """`count` batches of uniformly random actions, shape (count, num_agents, *act_shape).

    The dtype is the buffer contract's action dtype (int32 or float32).
    """
    batched = batch_space(space, num_agents)
    batched.seed(seed)
    dtype = action_dtype(space)
    return np.stack([np.asarray(batched.sample(), dtype=dtype) for _ in range(count)])


@dataclass
class EpisodeStats:
    """Returns and lengths of finished episodes, plus the env's own logged stats.

    Attributes:
        returns: Undiscounted return of each finished episode (agent rows counted separately).
        lengths: Steps of each finished episode.
        logs: Every stat the env reported in its infos (e.g. score), one list per name.
    """

    returns: list[float] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    logs: dict[str, list[float]] = field(default_factory=dict)

    def means(self) -> dict[str, float]:
        """Mean of each stat, once: the env's own logs, and `episode_return` and
        `episode_length` counted here for an env that logs no such statistic."""
        out = {name: float(np.mean(values)) for name, values in self.logs.items()}
        counted = {"episode_return": self.returns, "episode_length": self.lengths}
        for name, values in counted.items():
            if name not in out:
                out[name] = float(np.mean(values)) if values else math.nan
        return out


def play(
    env: PufferEnv,
    policy: Policy,
    on_frame: Callable[[], bool] | None,
    episodes: int,
    max_steps: int,
    seed: int,
    on_step: Callable[[EpisodeStats, int], None] | None = None,
) -> EpisodeStats:
    """Step `env` with `policy` until `episodes` episodes end.

    The acting is the trainer's `Rollout`: actions sampled from the policy, recurrent state
    carried and cut at episode ends, Box actions mapped into the action space.

    Args:
        env: A PufferEnv (not closed here).
        policy: The policy to run (on the device of its parameters).
        on_frame: Called after reset and after every step to render; returning False stops.
        episodes: Stop once this many episodes (over all agent rows) have finished.
        max_steps: Stop after this many steps whatever happened.
        seed: Reset seed.
        on_step: Called after every step with the stats so far and the steps taken (to
            report progress).

    Returns:
        The `EpisodeStats` of the episodes that finished.
    """
    stats = EpisodeStats()
    rollout = Rollout(policy, env)
    rollout.reset(seed)
    step = rollout.recv()
    running = np.zeros(env.num_agents, dtype=np.float64)
    length = np.zeros(env.num_agents, dtype=np.int64)
    if on_frame is not None and not on_frame():
        return stats
    for steps in range(1, max_steps + 1):
        rollout.act(step)
        step = rollout.recv()
        masks = step.masks.cpu().numpy()
        running += np.where(masks, step.rewards.cpu().numpy(), 0.0)
        length += masks
        for info in step.infos:
            for name, value in info.items():
                if name != "n" and isinstance(value, int | float):
                    stats.logs.setdefault(name, []).append(float(value))
        done = (step.terminals | step.truncations).cpu().numpy()
        for row in np.flatnonzero(done & masks):
            stats.returns.append(float(running[row]))
            stats.lengths.append(int(length[row]))
            running[row] = 0.0
            length[row] = 0
        if on_step is not None:
            on_step(stats, steps)
        if on_frame is not None and not on_frame():
            break
        if len(stats.returns) >= episodes:
            break
    return stats
