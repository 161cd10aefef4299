"""Where a training epoch's time goes, phase by phase, and its steps/s, for an env's config.

Phases (seconds per epoch, then % of the epoch):
- env: inside the vecenv (`recv`/`send`);
- forward: the rollout's policy forward (`Rollout.forward`);
- sample: drawing actions and their log-probabilities (`Rollout.sample`);
- storage: the rest of collecting: buffer writes, casts, recurrent-state gathers, stats;
- advantage: the puff advantage and the prioritized draw of each minibatch;
- mb forward: the minibatch forward and loss;  backward;  optimizer: clip and the Muon step.

Each row builds the trainer once, runs `--warmup` untimed epochs, then `--epochs` timed ones;
`--repeats` rounds alternate the rows (`--rows`), so machine drift hits them alike, and the
table gives each row's median round. Rows:
- `shipped`: the env's shipped config (`puffer train ENV`), or `--config FILE` over it;
- `shipped-unfused`: the same, with MinGRU layers computed as the separate torch ops and linear
  scan of before the fused kernel (`puffer.kernels.mingru_scan`): the "before" of that kernel;
- `pufferlib4`: `benchmarks/configs/pufferlib4_breakout.toml` over breakout's config;
- `pufferlib3`: `benchmarks/configs/pufferlib3_breakout.toml`, PufferLib 3.0's config with
  the LSTM 128 (breakout's shipped config until PufferNet);
- `shipped-bf16`: the shipped config with `--train.precision bfloat16` (the policy's passes
  under bfloat16 autocast, float32 master weights and optimizer).

    uv run python benchmarks/profile_train.py breakout --rows shipped shipped-unfused --threads 2
    python benchmarks/profile_train.py breakout --rows shipped pufferlib3 --device cuda

`--write` also puts the table into docs/results/train.md (between its `profile_train` markers).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

import torch
from results_page import PAGES, write_table
from torch import Tensor

from puffer.kernels import linear_scan
from puffer.train import PuffeRL, apply_torch_settings, make_policy
from puffer.train.config import load_config
from puffer.train.policies import recurrent
from puffer.train.rollout import Rollout
from puffer.train.run import make_vecenv
from puffer.train.update import Update

HERE = Path(__file__).parent
PAGE = PAGES / "train.md"  # its table sits between the `profile_train` markers there
PHASES = ("env", "forward", "sample", "storage", "advantage", "mb forward", "backward", "optimizer")


def _unfused_step(core, x: Tensor, state):
    """`MinGRUCore.step` as torch ops (before `mingru_step`)."""
    (h_all,) = state
    new_h = []
    for i, layer in enumerate(core.layers):
        h_tilde, g, p = layer(x).chunk(3, dim=-1)
        z = torch.sigmoid(g)
        h = (1 - z) * h_all[:, i] + z * _phi(h_tilde)
        gate = torch.sigmoid(p)
        x = gate * h + (1 - gate) * x
        new_h.append(h)
    return x, (torch.stack(new_h, dim=1),)


def _unfused_sequence(core, x: Tensor, state, starts: Tensor) -> Tensor:
    """`MinGRUCore.sequence` as torch ops around `linear_scan` (before `mingru_scan`)."""
    (h0_all,) = state
    cut = starts.clone()
    cut[:, 0] = False
    cut = cut.unsqueeze(-1)
    for i, layer in enumerate(core.layers):
        h_tilde, g, p = layer(x).chunk(3, dim=-1)
        z = torch.sigmoid(g)
        a = torch.where(cut, 0.0, 1 - z)
        h = linear_scan(a, z * _phi(h_tilde), h0_all[:, i])
        gate = torch.sigmoid(p)
        x = gate * h + (1 - gate) * x
    return x


def _phi(z: Tensor) -> Tensor:
    return torch.where(z >= 0, z + 0.5, torch.sigmoid(z))


@contextmanager
def _unfused():
    step, sequence = recurrent.MinGRUCore.step, recurrent.MinGRUCore.sequence
    recurrent.MinGRUCore.step, recurrent.MinGRUCore.sequence = _unfused_step, _unfused_sequence
    try:
        yield
    finally:
        recurrent.MinGRUCore.step, recurrent.MinGRUCore.sequence = step, sequence


def _timed(cls, name: str, times: dict[str, float], phase: str) -> None:
    """Wrap `cls.name` so each call adds its seconds to `times[phase]` (restored by `_restore`)."""
    inner = getattr(cls, name)

    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            times[phase] += time.perf_counter() - start

    wrapper.__wrapped__ = inner
    setattr(cls, name, wrapper)


def _restore(cls, name: str) -> None:
    setattr(cls, name, getattr(cls, name).__wrapped__)


class Row:
    """One trainer of a row, built once; `epochs(n)` times n epochs phase by phase."""

    def __init__(self, row: str, env: str, config_file: str | None, threads: int, device: str):
        overrides = ["--train.torch-threads", str(threads), "--train.device", device]
        overrides += ["--train.data-dir", tempfile.mkdtemp(), "--train.total-timesteps", "1e12"]
        if row == "pufferlib4":
            config_file = str(HERE / "configs" / "pufferlib4_breakout.toml")
        if row == "pufferlib3":
            config_file = str(HERE / "configs" / "pufferlib3_breakout.toml")
        if row.endswith("-bf16"):
            overrides += ["--train.precision", "bfloat16"]
        config = load_config(env, config_file, overrides)
        self.row, self.unfused = row, row.endswith("-unfused")
        apply_torch_settings(config)  # before the policy exists
        self.env = make_vecenv(env, config)
        torch.manual_seed(0)
        self.trainer = PuffeRL(config, self.env, make_policy(config.policy, self.env))
        self.steps = self.trainer.sizes.batch_size
        self.parameters = sum(p.numel() for p in self.trainer.policy.parameters())

    def epochs(self, n: int) -> dict[str, float]:
        """Seconds per epoch in each phase and in all, over `n` epochs."""
        times: dict[str, float] = defaultdict(float)
        probes = [
            (Rollout, "forward", "forward"),
            (Rollout, "sample", "sample"),
            (Update, "advantages", "advantage"),
            (Update, "select_minibatch", "advantage"),
        ]
        for cls, name, phase in probes:
            _timed(cls, name, times, phase)
        kept = dict(self.trainer.times)
        try:
            with _unfused() if self.unfused else _nothing():
                start = time.perf_counter()
                collect = 0.0
                for _ in range(n):
                    tick = time.perf_counter()
                    self.trainer.collect()
                    collect += time.perf_counter() - tick
                    self.trainer.train()
                total = time.perf_counter() - start
        finally:
            for cls, name, _ in probes:
                _restore(cls, name)
        spent = {k: self.trainer.times[k] - kept.get(k, 0.0) for k in self.trainer.times}
        times["env"] = spent["env"]
        times["storage"] = collect - spent["env"] - times["forward"] - times["sample"]
        times["mb forward"] = spent["forward"]
        times["backward"] = spent["backward"]
        times["optimizer"] = spent["optimizer"]
        result = {phase: times[phase] / n for phase in PHASES}
        result["epoch"] = total / n
        return result

    def close(self) -> None:
        self.env.close()


def _wait_for_the_gpu_at_every_clock() -> None:
    """Make every `time.perf_counter()` read (the trainer's phase timers and this script's)
    wait for the GPU first, so that each phase is charged its own kernels, not the launches of
    the one before; the syncs slow the epoch a little, so its steps/s is a floor."""
    clock = time.perf_counter

    def synced() -> float:
        torch.cuda.synchronize()
        return clock()

    time.perf_counter = synced


@contextmanager
def _nothing():
    yield


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("env", help="env name, e.g. breakout")
    parser.add_argument("--config", default=None, help="TOML over the env's shipped config")
    parser.add_argument(
        "--rows",
        nargs="+",
        default=["shipped", "shipped-unfused"],
        choices=[
            "shipped",
            "shipped-unfused",
            "shipped-bf16",
            "pufferlib4",
            "pufferlib4-unfused",
            "pufferlib3",
        ],
    )
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    parser.add_argument("--device", default="cpu", help="train.device: cpu, or cuda")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--write", action="store_true", help=f"also write the table into {PAGE}")
    args = parser.parse_args()
    if args.device.startswith("cuda"):
        _wait_for_the_gpu_at_every_clock()
    rows = {name: Row(name, args.env, args.config, args.threads, args.device) for name in args.rows}
    for row in rows.values():
        row.epochs(args.warmup)
    rounds: dict[str, list[dict[str, float]]] = defaultdict(list)
    for r in range(args.repeats):
        for name, row in rows.items():
            rounds[name].append(row.epochs(args.epochs))
            epoch = rounds[name][-1]["epoch"]
            print(f"round {r + 1} {name}: {row.steps / epoch:,.0f} steps/s", flush=True)
    print(
        f"\n{args.env} on {args.device}, {args.threads} torch threads, {args.epochs} epochs x "
        f"{args.repeats} rounds"
    )
    lines = [
        "| row | params | " + " | ".join(PHASES) + " | epoch (s) | steps/s |",
        "|---" * (len(PHASES) + 4) + "|",
    ]
    for name, row in rows.items():
        median = sorted(rounds[name], key=lambda t: t["epoch"])[len(rounds[name]) // 2]
        cells = [f"{median[p]:.3f} ({100 * median[p] / median['epoch']:.0f} %)" for p in PHASES]
        sps = statistics.median(row.steps / t["epoch"] for t in rounds[name])
        lines.append(
            f"| {name} | {row.parameters:,} | " + " | ".join(cells)
            + f" | {median['epoch']:.3f} | {sps:,.0f} |"
        )  # fmt: skip
    print("\n".join(lines))
    if args.write:
        write_table(PAGE, "profile_train", lines)
    for row in rows.values():
        row.close()


if __name__ == "__main__":
    main()
