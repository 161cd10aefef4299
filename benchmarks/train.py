"""Training throughput of PuffeRL beside its peers, measured in the same run.

Unit: agent steps per second of the whole training loop (rollout + update), i.e. env steps
collected per wall-clock second while training. Every trainer is set up once and kept alive
(PufferLib's in its own process, serving epochs on request); then `--repeats` rounds each time
one block per trainer, in turn: one untimed epoch, then `--epochs` epochs, more until
`--seconds` have passed. The medians are printed with the median of the rounds' ratios, then
each round's own ratio per row (with their min and max) and each trainer's blocks (in run
order, with their spread). Rows:

- `lstm-pl`: LSTM 128 on Ocean breakout, 1,024 envs, horizon 64, minibatch 32,768 (PufferLib
  3.0's shipped breakout config) vs PufferLib 3.0's own trainer on its breakout with that
  config (`--pufferlib VENV_DIR`, run in a subprocess on the same device and thread count).
  Our minibatch runs in forward/backward passes of 8,192 steps on the CPU (the default
  `train.microbatch_size`); `lstm-pl-1pass` is the same run with one pass per minibatch.
- `lstm`: our recurrent default (`--policy.recurrent lstm`, every other setting default) vs
  the same PufferLib run (its default for breakout).
- `mingru`: MinGRU vs LSTM at the same hidden size (128) and minibatch (our default).
- `mlp`, `cartpole`: our MLP default vs a CleanRL-style loop (the `cleanrl/ppo.py` structure: a
  Python step loop filling preallocated tensors, a Python GAE loop, shuffled minibatches, Adam)
  on the same env, network and batch, at its own 4 update epochs and at 1 (ours).

The breakouts differ: ours is `puffer.ocean`'s, PufferLib's is its own; both have 1,024 agents
and the same observation and action sizes, and the env is a small share of the loop's time
(see the time split printed with `--split`).

A row's ratio is the median over rounds of that round's own ratio, and a row's two trainers
run in adjacent blocks: the machine's speed drifts (a shared VM's by a third over minutes) and
swings within seconds, and blocks seconds apart share its state. (Until 2026-11-26 each repeat
set every trainer up anew and PufferLib's ran as a separate subprocess before ours, tens of
seconds from our blocks; one round's ratio then ranged over 1.24x-2.01x in one run.)

`--action-masks` instead times PuffeRL with and without all-legal action masks on the native
cases of the rows (the masks are attached to the env, so the trainer's mask path runs: masks
copied per step, stored, applied in sampling and in the loss) and prints the ratio: the cost of
the mask path. Envs without masks never enter it.

`--cpu-matmul onednn|mkl` picks the library of our policies' float32 products on the CPU
(`PUFFER_CPU_MATMUL`, `puffer.kernels.onednn`; by default oneDNN on a CPU that is not Intel's,
where MKL stays at AVX2, and MKL on Intel's); the header line names the one in use. The
CleanRL-style loop builds the same policy, so it runs on the same library; PufferLib's trainer
keeps torch's own (MKL).

`--cuda-graphs` (with `--device cuda`) times PuffeRL with `train.cuda_graphs` off and on, the
same way: what replaying the rollout forward from a CUDA graph gains.

`--matmul-precision medium` gives our trainers and the CleanRL-style loop bfloat16 matrix
products (`train.matmul_precision`; the CPU needs AMX or AVX512-BF16 for them to be fast).
PufferLib's trainer keeps its own setting, 'high' (float32 on a CPU without TF32), so its rows
then compare different arithmetic; the header line names the setting.

Recommended: an otherwise idle machine. `--threads` gives every trainer the same torch thread
count; 0 (the default) is the machine's cores, which is what ours picks by default for these
in-process envs and what PufferLib's trainer and the CleanRL-style loop get from torch.

    uv run python benchmarks/train.py --pufferlib /work/pl3 --repeats 3
    uv run python benchmarks/train.py --device cuda --rows lstm-pl lstm mingru mlp
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from peers import pufferlib_python

from puffer.cli.bench import header, timed
from puffer.core import mask_width
from puffer.kernels import cpu_matmul_library
from puffer.train import (
    Config,
    PolicyConfig,
    PuffeRL,
    TrainConfig,
    VecConfig,
    apply_torch_settings,
    make_policy,
)
from puffer.train.config import MATMUL_PRECISIONS
from puffer.train.pufferl import TIME_SPLIT
from puffer.train.run import make_vecenv
from puffer.train.runtime import torch_threads

BREAKOUT = ("breakout", {"num_envs": 1024}, "native", 1)
# Our trainers: (env, env kwargs, vec backend, vec envs, policy, minibatch, microbatch;
# None = default).
CASES = {
    "breakout-lstm-32k": (*BREAKOUT, PolicyConfig(recurrent="lstm"), 32768, None),
    "breakout-lstm-32k-1pass": (*BREAKOUT, PolicyConfig(recurrent="lstm"), 32768, 32768),
    "breakout-lstm": (*BREAKOUT, PolicyConfig(recurrent="lstm"), None, None),
    "breakout-mingru": (*BREAKOUT, PolicyConfig(recurrent="mingru"), None, None),
    "breakout-mlp": (*BREAKOUT, PolicyConfig(), None, None),
    "gym-CartPole-v1": ("gym-CartPole-v1", {}, "serial", 64, PolicyConfig(), None, None),
}
# Rows: (ours, peer): a case above, "pufferlib" or "cleanrl".
ROWS = {
    "lstm-pl": ("breakout-lstm-32k", "pufferlib"),
    "lstm-pl-1pass": ("breakout-lstm-32k-1pass", "pufferlib"),
    "lstm": ("breakout-lstm", "pufferlib"),
    "mingru": ("breakout-mingru", "breakout-lstm"),
    "mlp": ("breakout-mlp", "cleanrl"),
    "cartpole": ("gym-CartPole-v1", "cleanrl"),
}

# Run by PufferLib's interpreter from a scratch folder (its import writes ./resources): its
# trainer class with its shipped breakout config on our device and thread count. It serves
# epochs on request, so its blocks alternate with ours: one line in ("epoch"), one epoch run,
# one line out with this process's CPU seconds so far.
PUFFERLIB_SCRIPT = """
import json, sys, time, torch
threads, device = int(sys.argv[1]), sys.argv[2]
torch.set_num_threads(threads)
sys.argv = ["puffer", "--train.device", device, "--vec.backend", "Serial", "--vec.num-envs", "1",
            "--train.total-timesteps", str(10**9)]
from pufferlib import pufferl
args = pufferl.load_config("puffer_breakout")
vecenv = pufferl.load_env("puffer_breakout", args)
policy = pufferl.load_policy(args, vecenv)
trainer = pufferl.PuffeRL(dict(**args["train"], env="puffer_breakout"), vecenv, policy)
trainer.collect(); trainer.train()
steps = trainer.global_step
print("PUFFERLIB " + json.dumps({"steps": steps}), flush=True)
for _request in sys.stdin:
    trainer.collect(); trainer.train()
    print("PUFFERLIB " + json.dumps({"cpu": time.process_time()}), flush=True)
trainer.utilization.stop()
"""


def _config(case: str, threads: int, device: str, precision: str = "highest") -> Config:
    _, env_kwargs, backend, num_envs, policy, minibatch, microbatch = CASES[case]
    return Config(
        train=TrainConfig(
            horizon=64,
            minibatch_size=minibatch or TrainConfig().minibatch_size,
            microbatch_size=microbatch or TrainConfig().microbatch_size,
            total_timesteps=10**9,
            device=device,
            torch_threads=threads,
            matmul_precision=precision,
            data_dir=tempfile.mkdtemp(),
        ),
        policy=policy,
        vec=VecConfig(backend=backend, num_instances=num_envs),
        env=env_kwargs,
    )


@dataclass
class Run:
    """One trainer set up and warmed up (one epoch run): `epoch()` runs one more epoch of
    `steps` agent steps; `cpu_clock()` is the CPU seconds its process has used; `times()` is its
    cumulative time split in seconds (None where the trainer keeps none); `close()` frees it."""

    epoch: Callable[[], None]
    steps: int
    close: Callable[[], None]
    cpu_clock: Callable[[], float] = time.process_time
    times: Callable[[], dict[str, float]] | None = None


def puffer_run(
    case: str,
    threads: int,
    device: str,
    masked: bool = False,
    precision: str = "highest",
    cuda_graphs: bool = True,
) -> Run:
    """PuffeRL on `case` (`masked`: all-legal action masks attached to the (native) env, so the
    mask path runs; `cuda_graphs`: `train.cuda_graphs`, which only a CUDA device uses)."""
    config = _config(case, threads, device, precision)
    config.train.cuda_graphs = cuda_graphs
    apply_torch_settings(config)  # before the policy exists
    env = make_vecenv(CASES[case][0], config)
    if masked:
        env.action_masks = np.ones((env.num_agents, mask_width(env.single_action_space)), bool)
    torch.manual_seed(0)
    trainer = PuffeRL(config, env, make_policy(config.policy, env))

    def epoch() -> None:
        trainer.collect()
        trainer.train()

    def close() -> None:
        trainer.close()
        env.close()

    epoch()
    return Run(epoch, trainer.sizes.batch_size, close, times=lambda: dict(trainer.times))


def pufferlib_run(python: Path, threads: int, device: str) -> Run:
    """PufferLib 3.0's trainer on its breakout, kept running in a subprocess (scratch cwd) that
    runs one epoch per request; the epoch's steps are its batch, from its config."""
    scratch = tempfile.TemporaryDirectory()
    stderr = tempfile.TemporaryFile("w+")
    proc = subprocess.Popen(
        [str(python), "-c", PUFFERLIB_SCRIPT, str(threads), device],
        cwd=scratch.name,
        env={**os.environ, "OMP_NUM_THREADS": str(threads)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
    )

    def reply() -> dict:
        for line in proc.stdout:
            if line.startswith("PUFFERLIB "):
                return json.loads(line.removeprefix("PUFFERLIB "))
        stderr.seek(0)
        raise SystemExit(f"PufferLib's trainer failed ({proc.wait()}):\n{stderr.read()[-3000:]}")

    first_steps = reply()["steps"]  # after its warm-up epoch: one epoch's steps
    last_cpu = 0.0

    def epoch() -> None:
        nonlocal last_cpu
        proc.stdin.write("epoch\n")
        proc.stdin.flush()
        last_cpu = reply()["cpu"]

    def close() -> None:
        proc.stdin.close()
        proc.wait(timeout=60)
        stderr.close()
        scratch.cleanup()

    return Run(epoch, first_steps, close, cpu_clock=lambda: last_cpu)


def cleanrl_run(case: str, threads: int, update_epochs: int, precision: str = "highest") -> Run:
    """A CleanRL-style PPO loop on the same env, net and batch: `cleanrl/ppo.py`'s structure,
    and `cleanrl/ppo_atari_lstm.py`'s (minibatches of whole envs, a Python time loop over the
    recurrent core) for recurrent policies."""
    config = _config(case, threads, "cpu", precision)
    torch.set_num_threads(threads)
    torch.set_float32_matmul_precision(precision)
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
    return Run(iteration, steps * n, env.close)


@dataclass
class Block:
    """One timed block of one trainer: steps/s, steps per CPU second of its process, and its
    time split (fractions of the block's wall time; None where the trainer keeps none)."""

    sps: float
    cpu_sps: float
    split: dict[str, float] | None


def time_block(run: Run, epochs: int, seconds: float) -> Block:
    """One untimed epoch, then `epochs` epochs, more while under `seconds`.

    The untimed epoch is there because the block follows another trainer's: an epoch run right
    after another trainer's starts with cold caches, which cost our MLP 15 % of its steps/s
    (2-core Xeon, 4 alternating repeats of each way) against a few percent for the CleanRL-style
    loop's three-times-longer epochs.
    """
    run.epoch()
    before = run.times() if run.times else None

    def epoch() -> int:
        run.epoch()
        return run.steps

    rate = timed(epoch, seconds, calls=epochs, cpu_clock=run.cpu_clock)
    split = None
    if run.times:
        after = run.times()
        parts = {
            key: (after.get(key, 0.0) - before.get(key, 0.0)) / rate.wall for key in TIME_SPLIT
        }
        split = {**parts, "other": max(0.0, 1 - sum(parts.values()))}
    return Block(rate.per_wall, rate.per_cpu, split)


def time_alternating(
    makers: dict[str, Callable[[], Run]], repeats: int, epochs: int, seconds: float
) -> dict[str, list[Block]]:
    """Set up every trainer once, then `repeats` rounds of one block each, in turn.

    A shared VM's speed drifts by a third over minutes and swings within seconds, so the
    trainers compared in a row are timed in blocks of a few seconds, alternating, all alive at
    once: a row's ratio is then taken between blocks seconds apart, never between runs minutes
    apart.
    """
    runs: dict[str, Run] = {}
    try:
        for name, make in makers.items():
            runs[name] = make()
        blocks: dict[str, list[Block]] = {name: [] for name in runs}
        for _ in range(repeats):
            for name, run in runs.items():
                blocks[name].append(time_block(run, epochs, seconds))
        return blocks
    finally:
        for run in runs.values():
            run.close()


def time_a_switch(args: argparse.Namespace, switch: str) -> None:
    """PuffeRL with `switch` off and on ('masks': all-legal action masks; 'graphs':
    `train.cuda_graphs`) on the native cases of `args.rows`, in alternating blocks."""
    cases = dict.fromkeys(ROWS[row][0] for row in args.rows)
    for case in (c for c in cases if CASES[c][2] == "native"):
        makers = {
            on: lambda c=case, on=on: puffer_run(
                c,
                args.threads,
                args.device,
                masked=on and switch == "masks",
                cuda_graphs=on or switch != "graphs",
            )
            for on in (False, True)
        }
        blocks = time_alternating(makers, args.repeats, args.epochs, args.seconds)
        off_sps = statistics.median(b.sps for b in blocks[False])
        on_sps = statistics.median(b.sps for b in blocks[True])
        print(
            f"{case:18s} {switch} off {off_sps:10,.0f} steps/s | {switch} on {on_sps:10,.0f} "
            f"steps/s, {on_sps / off_sps:.3f}x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", nargs="*", default=list(ROWS), choices=list(ROWS))
    parser.add_argument("--epochs", type=int, default=4, help="least timed epochs per block")
    parser.add_argument("--seconds", type=float, default=3.0, help="least timed seconds per block")
    parser.add_argument("--repeats", type=int, default=3, help="rounds of one block per trainer")
    parser.add_argument(
        "--threads", type=int, default=0, help="torch threads (every trainer); 0: the cores"
    )
    parser.add_argument("--device", default="cpu", help="cpu or cuda (the CleanRL loop: cpu)")
    parser.add_argument("--pufferlib", metavar="DIR", help="PufferLib 3.0 venv (pufferlib rows)")
    parser.add_argument("--split", action="store_true", help="print our time split per case")
    parser.add_argument("--action-masks", action="store_true", help="time the mask path")
    parser.add_argument(
        "--cuda-graphs",
        action="store_true",
        help="time train.cuda_graphs off against on (with --device cuda)",
    )
    parser.add_argument(
        "--matmul-precision",
        default="highest",
        choices=MATMUL_PRECISIONS,
        help="train.matmul_precision of our trainers and the CleanRL loop (PufferLib's: 'high')",
    )
    parser.add_argument(
        "--cpu-matmul",
        choices=("auto", "onednn", "mkl"),
        default="auto",
        help="library of our float32 CPU products (PUFFER_CPU_MATMUL); auto: by CPU vendor",
    )
    args = parser.parse_args()
    args.threads = args.threads or torch_threads(Config())
    if args.cpu_matmul != "auto":
        os.environ["PUFFER_CPU_MATMUL"] = args.cpu_matmul
        cpu_matmul_library.cache_clear()
    print(header("torch"))
    print(
        f"threads={args.threads} device={args.device} "
        f"matmul_precision={args.matmul_precision} cpu_matmul={cpu_matmul_library()} "
        f"gpu={torch.cuda.get_device_name() if torch.cuda.is_available() else 'none'}"
    )
    if args.action_masks or args.cuda_graphs:
        time_a_switch(args, "masks" if args.action_masks else "graphs")
        return
    python = pufferlib_python(args.pufferlib) if args.pufferlib else None
    # In row order, each row's peer right after ours: a row's blocks are seconds apart.
    makers: dict[str, Callable[[], Run]] = {}
    for row in args.rows:
        ours, peer = ROWS[row]
        for name in (ours, peer):
            if name in CASES:
                makers[name] = lambda n=name: puffer_run(
                    n, args.threads, args.device, precision=args.matmul_precision
                )
            elif name == "pufferlib" and python is not None:
                makers[name] = lambda: pufferlib_run(python, args.threads, args.device)
        if peer == "cleanrl" and args.device == "cpu":
            for u in (4, 1):
                makers[f"{ours}/cleanrl{u}"] = lambda c=ours, u=u: cleanrl_run(
                    c, args.threads, u, args.matmul_precision
                )
    results = time_alternating(makers, args.repeats, args.epochs, args.seconds)
    sps = {name: statistics.median(b.sps for b in blocks) for name, blocks in results.items()}
    cpu = {name: statistics.median(b.cpu_sps for b in blocks) for name, blocks in results.items()}
    print(
        f"load after={os.getloadavg()[0]:.1f}; median steps/s (steps per CPU second); ratio: "
        "the median of the rounds' own ratios (each round's blocks are seconds apart)"
    )
    each_ratio: dict[str, list[float]] = {}
    for row in args.rows:
        ours, peer = ROWS[row]
        line = f"{row:8s} {ours:17s} {sps[ours]:8,.0f} ({cpu[ours]:7,.0f})"
        peers = [peer] if peer != "cleanrl" else [f"{ours}/cleanrl4", f"{ours}/cleanrl1"]
        for name in peers:
            if name in sps:
                pairs = list(zip(results[ours], results[name], strict=True))
                each_ratio[f"{row} vs {name}"] = [a.sps / b.sps for a, b in pairs]
                ratio = statistics.median(a.sps / b.sps for a, b in pairs)
                cpu_ratio = statistics.median(a.cpu_sps / b.cpu_sps for a, b in pairs)
                line += (
                    f" | {name} {sps[name]:8,.0f} ({cpu[name]:7,.0f}) ratio "
                    f"{ratio:.2f}x ({cpu_ratio:.2f}x)"
                )
            else:
                line += f" | {name}: not run (--pufferlib DIR / --device cpu)"
        print(line)
    # The machine's speed drifts between rounds (a shared VM's by up to a third): each
    # round's own ratio and each trainer's blocks in run order, so a ratio can be read against
    # its own noise.
    for name, ratios in each_ratio.items():
        print(
            f"ratios {name}: "
            + " ".join(f"{x:.2f}" for x in ratios)
            + f" (min {min(ratios):.2f}, max {max(ratios):.2f})"
        )
    for name, blocks in results.items():
        each = [b.sps for b in blocks]
        spread = max(each) / min(each) - 1
        print(f"repeats {name}: " + " ".join(f"{x:,.0f}" for x in each) + f" (spread {spread:.0%})")
    if args.split:
        for name, blocks in results.items():
            if name in CASES:
                split = blocks[-1].split  # the last round's
                print(f"split {name}: " + ", ".join(f"{k} {v:.0%}" for k, v in split.items()))


if __name__ == "__main__":
    main()
