"""Training throughput of PuffeRL beside a CleanRL-style PPO loop, measured in the same run.

Unit: agent steps per second of the whole training loop (rollout + update), i.e. env steps
collected per wall-clock second while training. Each case runs PuffeRL for `--epochs` epochs
after one warm-up epoch, then a CleanRL-style loop (the `cleanrl/ppo.py` structure: a Python
step loop filling preallocated tensors, a Python GAE loop, shuffled minibatches, Adam) over the
same env, the same policy network and the same batch; both are repeated `--repeats` times and
the medians are printed with their ratio. The CleanRL-style loop runs its own default of
4 update epochs and, for a like-for-like comparison, also 1 (PuffeRL's default here).

Cases: Ocean breakout (1024 envs, horizon 64, minibatch 8192) with the default MLP and with
MinGRU, and gym-CartPole-v1 (64 emulated envs, serial vectorizer, horizon 64).

`--action-masks` instead times PuffeRL with and without all-legal action masks on the native
cases (the masks are attached to the env, so the trainer's mask path runs: masks copied per
step, stored, applied in sampling and in the loss) and prints the ratio: the cost of the mask
path. Envs without masks never enter it.

Recommended: an otherwise idle machine; `--threads` 2 on a 2-core CPU.

    uv run python benchmarks/train.py --repeats 3
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time

import numpy as np
import torch

from puffer.core import mask_width
from puffer.train import Config, PolicyConfig, PuffeRL, TrainConfig, VecConfig, make_policy
from puffer.train.run import make_vecenv

CASES = {
    "breakout-mlp": ("breakout", {"num_envs": 1024}, "native", 1, PolicyConfig()),
    "breakout-mingru": (
        "breakout",
        {"num_envs": 1024},
        "native",
        1,
        PolicyConfig(recurrent="mingru"),
    ),
    "gym-CartPole-v1": ("gym-CartPole-v1", {}, "serial", 64, PolicyConfig()),
}


def _config(case: str, threads: int) -> Config:
    _, env_kwargs, backend, num_envs, policy = CASES[case]
    return Config(
        train=TrainConfig(
            horizon=64,
            minibatch_size=8192,
            total_timesteps=10**9,
            device="cpu",
            torch_threads=threads,
            data_dir=tempfile.mkdtemp(),
        ),
        policy=policy,
        vec=VecConfig(backend=backend, num_envs=num_envs),
        env=env_kwargs,
    )


def puffer_sps(case: str, epochs: int, threads: int, masked: bool = False) -> float:
    """PuffeRL steps/s over `epochs` epochs after one warm-up epoch (`masked`: all-legal
    action masks attached to the (native) env, so the mask path runs)."""
    config = _config(case, threads)
    env = make_vecenv(CASES[case][0], config)
    if masked:
        env.action_masks = np.ones((env.num_agents, mask_width(env.single_action_space)), bool)
    torch.manual_seed(0)
    trainer = PuffeRL(config, env, make_policy(config.policy, env))
    trainer.evaluate()
    trainer.train()
    start, steps = time.perf_counter(), trainer.global_step
    for _ in range(epochs):
        trainer.evaluate()
        trainer.train()
    sps = (trainer.global_step - steps) / (time.perf_counter() - start)
    trainer.close()
    env.close()
    return sps


def cleanrl_sps(case: str, epochs: int, threads: int, update_epochs: int) -> float:
    """A CleanRL-style PPO loop on the same env, net and batch: `cleanrl/ppo.py`'s structure,
    and `cleanrl/ppo_atari_lstm.py`'s (minibatches of whole envs, a Python time loop over the
    recurrent core) for recurrent policies."""
    config = _config(case, threads)
    torch.set_num_threads(threads)
    env = make_vecenv(CASES[case][0], config)
    torch.manual_seed(0)
    agent = make_policy(config.policy, env)
    optimizer = torch.optim.Adam(agent.parameters(), lr=2.5e-4, eps=1e-5)
    n, steps = env.num_agents, config.train.horizon
    gamma, lam, clip, minibatch = 0.99, 0.95, 0.2, config.train.minibatch_size
    obs = torch.zeros((steps, n, *env.single_observation_space.shape))
    actions = torch.zeros((steps, n), dtype=torch.long)
    logprobs, rewards, dones, values = (torch.zeros((steps, n)) for _ in range(4))
    next_obs, _ = env.reset(seed=0)
    next_obs = torch.as_tensor(next_obs, dtype=torch.float32)
    next_done = torch.zeros(n)
    rng = np.random.default_rng(0)

    state = agent.initial_state(n)

    def cut(state: tuple, done: torch.Tensor) -> tuple:
        return tuple(h * (1 - done).view(-1, *([1] * (h.dim() - 1))) for h in state)

    def replay(envs: np.ndarray, state0: tuple) -> tuple[torch.Tensor, torch.Tensor]:
        # cleanrl/ppo_atari_lstm.py: step the recurrent core over the rollout, cutting at dones.
        h, logits, values_ = tuple(x[envs] for x in state0), [], []
        for t in range(steps):
            h = cut(h, dones[t, envs])
            out, value, h = agent.forward_eval(obs[t, envs], h)
            logits.append(out)
            values_.append(value)
        return torch.cat(logits), torch.cat(values_)

    def iteration() -> None:
        nonlocal next_obs, next_done, state
        state0 = state
        for step in range(steps):
            obs[step], dones[step] = next_obs, next_done
            with torch.no_grad():
                state = cut(state, next_done)
                logits, value, state = agent.forward_eval(next_obs, state)
                dist = torch.distributions.Categorical(logits=logits)
                action = dist.sample()
            values[step], actions[step], logprobs[step] = value, action, dist.log_prob(action)
            o, r, term, trunc, _ = env.step(action.numpy().astype(np.int32))
            rewards[step] = torch.as_tensor(r)
            next_obs = torch.as_tensor(o, dtype=torch.float32)
            next_done = torch.as_tensor(term | trunc, dtype=torch.float32)
        with torch.no_grad():
            _, next_value, _ = agent.forward_eval(next_obs, cut(state, next_done))
            advantages = torch.zeros_like(rewards)
            lastgaelam = 0
            for t in reversed(range(steps)):
                nonterminal = 1.0 - (next_done if t == steps - 1 else dones[t + 1])
                nextvalues = next_value if t == steps - 1 else values[t + 1]
                delta = rewards[t] + gamma * nextvalues * nonterminal - values[t]
                advantages[t] = lastgaelam = delta + gamma * lam * nonterminal * lastgaelam
            returns = advantages + values
        b_obs = obs.reshape(-1, *env.single_observation_space.shape)
        b_logprobs, b_actions = logprobs.reshape(-1), actions.reshape(-1)
        b_adv, b_returns, b_values = advantages.reshape(-1), returns.reshape(-1), values.reshape(-1)
        batch = steps * n
        envs_per_mb = minibatch // steps
        flat = np.arange(batch).reshape(steps, n)
        for _ in range(update_epochs):
            b_inds = rng.permutation(batch)
            env_inds = rng.permutation(n)
            for start in range(0, batch, minibatch):
                if agent.is_recurrent:
                    chunk = start // steps
                    envs = env_inds[chunk : chunk + envs_per_mb]
                    mb = flat[:, envs].ravel()
                    logits, newvalue = replay(envs, state0)
                else:
                    mb = b_inds[start : start + minibatch]
                    logits, newvalue, _ = agent.forward_eval(b_obs[mb], ())
                dist = torch.distributions.Categorical(logits=logits)
                logratio = dist.log_prob(b_actions[mb]) - b_logprobs[mb]
                ratio = logratio.exp()
                mb_adv = b_adv[mb]
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                pg_loss = torch.max(-mb_adv * ratio, -mb_adv * ratio.clamp(1 - clip, 1 + clip))
                v_clipped = b_values[mb] + (newvalue - b_values[mb]).clamp(-clip, clip)
                v_loss = torch.max(
                    (newvalue - b_returns[mb]) ** 2, (v_clipped - b_returns[mb]) ** 2
                )
                loss = pg_loss.mean() - 0.01 * dist.entropy().mean() + 0.5 * 0.5 * v_loss.mean()
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                optimizer.step()

    iteration()
    start = time.perf_counter()
    for _ in range(epochs):
        iteration()
    sps = epochs * steps * n / (time.perf_counter() - start)
    env.close()
    return sps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="*", default=list(CASES), choices=list(CASES))
    parser.add_argument("--epochs", type=int, default=4, help="timed epochs per repeat")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (both loops)")
    parser.add_argument("--action-masks", action="store_true", help="time the mask path")
    args = parser.parse_args()
    print(
        f"cpus={os.cpu_count()} load={os.getloadavg()[0]:.1f} torch={torch.__version__} "
        f"python={platform.python_version()} threads={args.threads} "
        f"gpu={torch.cuda.get_device_name() if torch.cuda.is_available() else 'none'}"
    )
    if args.action_masks:
        for case in (c for c in args.cases if CASES[c][2] == "native"):
            plain, masked = [], []
            for _ in range(args.repeats):  # interleaved, so load drifts hit both alike
                plain.append(puffer_sps(case, args.epochs, args.threads))
                masked.append(puffer_sps(case, args.epochs, args.threads, masked=True))
            p, m = statistics.median(plain), statistics.median(masked)
            print(
                f"{case:18s} unmasked {p:10,.0f} steps/s | masked {m:10,.0f} steps/s, {m / p:.3f}x"
            )
        return
    for case in args.cases:
        ours = [puffer_sps(case, args.epochs, args.threads) for _ in range(args.repeats)]
        peer4 = [cleanrl_sps(case, args.epochs, args.threads, 4) for _ in range(args.repeats)]
        peer1 = [cleanrl_sps(case, args.epochs, args.threads, 1) for _ in range(args.repeats)]
        o, p4, p1 = (statistics.median(x) for x in (ours, peer4, peer1))
        print(
            f"{case:18s} puffer {o:10,.0f} steps/s | cleanrl-style (4 update epochs) "
            f"{p4:10,.0f} steps/s, ratio {o / p4:.2f}x | cleanrl-style (1 update epoch) "
            f"{p1:10,.0f} steps/s, ratio {o / p1:.2f}x"
        )


if __name__ == "__main__":
    main()
