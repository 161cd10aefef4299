"""One trained policy in both libraries' Ocean env: do the games agree past random play?

`parity_envs.py` drives both envs with fixed action streams, which only reach the first
seconds of a game. Here a checkpoint of ours plays N copies of the env on each side (its own
recurrent state per side, actions sampled), so the episodes reach the states a learning agent
meets (for breakout: long rallies, the upper brick rows, the faster ball). Prints per side the
episodes finished, their mean return (the env's reward, unclipped), mean length and a two-sample
Kolmogorov-Smirnov p-value; an env difference that matters to learning shows as a gap here.

    uv run python benchmarks/parity_policy.py breakout CHECKPOINT --pufferlib /work/pl3 \\
        --envs 256 --steps 20000

The PufferLib half runs this file under PufferLib's interpreter (`_pufferlib-env`) as a
bridge: it reads each step's actions on stdin and writes observations, rewards and ends on
stdout, raw bytes in fixed sizes.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from peers import ks_test, pufferlib_python

HERE = Path(__file__).resolve()


# --- PufferLib's half (under its interpreter) -----------------------------------------------


def pufferlib_bridge(env: str, envs: int, seed: int) -> None:
    """Step PufferLib's `env` with the int32 actions read from stdin; write each step's
    float32 observations, float32 rewards and uint8 ends (terminal or truncation)."""
    import importlib

    module = importlib.import_module(f"pufferlib.ocean.{env}.{env}")
    cls = next(v for k, v in vars(module).items() if k.lower() == env.replace("_", ""))
    game = cls(num_envs=envs, seed=seed)
    obs, _ = game.reset(seed)
    out, inp = sys.stdout.buffer, sys.stdin.buffer
    out.write(np.ascontiguousarray(obs, np.float32).tobytes())
    out.flush()
    while True:
        raw = inp.read(4 * envs)
        if len(raw) < 4 * envs:
            return
        obs, rewards, terminals, truncations, _ = game.step(np.frombuffer(raw, np.int32))
        ends = (np.asarray(terminals) | np.asarray(truncations)).astype(np.uint8)
        for array in (np.asarray(obs, np.float32), np.asarray(rewards, np.float32), ends):
            out.write(np.ascontiguousarray(array).tobytes())
        out.flush()


# --- Ours (the driver) ----------------------------------------------------------------------


class PufferLibSide:
    """PufferLib's env through the bridge: `reset()` and `step(actions)` as ours."""

    def __init__(self, python: Path, env: str, envs: int, width: int, seed: int):
        self.envs, self.width = envs, width
        self.scratch = tempfile.TemporaryDirectory()  # its import writes ./resources
        self.proc = subprocess.Popen(
            [str(python), str(HERE), "_pufferlib-env", env, str(envs), str(seed)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=self.scratch.name,
        )  # fmt: skip

    def _read(self, dtype: type, count: int) -> np.ndarray:
        size = np.dtype(dtype).itemsize * count
        raw = self.proc.stdout.read(size)
        if len(raw) != size:
            raise SystemExit(f"PufferLib's env bridge ended (exit {self.proc.poll()})")
        return np.frombuffer(raw, dtype).copy()

    def reset(self) -> np.ndarray:
        return self._read(np.float32, self.envs * self.width).reshape(self.envs, self.width)

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        self.proc.stdin.write(actions.astype(np.int32).tobytes())
        self.proc.stdin.flush()
        obs = self.reset()
        return obs, self._read(np.float32, self.envs), self._read(np.uint8, self.envs) > 0

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()
        self.scratch.cleanup()


class OursSide:
    """Our env, with the same `reset()` / `step(actions)` as `PufferLibSide`."""

    def __init__(self, env: str, envs: int, seed: int):
        from puffer.core import make

        self.env, self.seed = make(env, num_envs=envs), seed

    def reset(self) -> np.ndarray:
        obs, _ = self.env.reset(self.seed)
        return obs.copy()

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        obs, rewards, terminals, truncations, _ = self.env.step(actions)
        return obs.copy(), rewards.copy(), terminals | truncations

    def close(self) -> None:
        self.env.close()


def play(policy, side, steps: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Run `policy` (actions sampled; recurrent state cut at episode ends) for `steps` steps
    of every env of `side`; returns the finished episodes' returns and lengths."""
    import torch

    torch.manual_seed(seed)
    obs = side.reset()
    state = policy.initial_state(len(obs))
    ret, length = np.zeros(len(obs)), np.zeros(len(obs), np.int64)
    returns, lengths = [], []
    for _ in range(steps):
        with torch.no_grad():
            params, _, state = policy.forward_eval(torch.from_numpy(obs), state)
            action, _ = policy.head.sample(params)
        obs, rewards, ends = side.step(action.numpy())
        ret += rewards
        length += 1
        returns.extend(ret[ends])
        lengths.extend(length[ends])
        ret[ends], length[ends] = 0.0, 0
        keep = torch.from_numpy(~ends).float().unsqueeze(1)
        state = tuple(s * keep for s in state)
    return np.asarray(returns), np.asarray(lengths)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_pufferlib-env":
        pufferlib_bridge(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("env")
    parser.add_argument("checkpoint", help="a checkpoint of ours trained on ENV")
    parser.add_argument("--pufferlib", required=True, help="PufferLib 3.0 folder (setup.sh)")
    parser.add_argument("--envs", type=int, default=256)
    parser.add_argument("--steps", type=int, default=20_000, help="agent steps per env")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import torch

    from puffer.train.checkpoint import load_policy

    torch.set_num_threads(1)
    ours = OursSide(args.env, args.envs, args.seed)
    policy = load_policy(args.checkpoint, ours.env)
    width = int(np.prod(ours.env.single_observation_space.shape))
    theirs = PufferLibSide(pufferlib_python(args.pufferlib), args.env, args.envs, width, args.seed)
    results = {}
    for name, side in (("ours", ours), ("pufferlib", theirs)):
        results[name] = play(policy, side, args.steps, args.seed)
        side.close()
    print(
        f"{args.env}: {args.checkpoint}, {args.envs} envs x {args.steps:,} steps, seed {args.seed}"
    )
    print("| side | episodes | mean return | median | mean length |")
    print("|---|---|---|---|---|")
    for name, (returns, lengths) in results.items():
        print(f"| {name} | {len(returns)} | {returns.mean():.1f} | {np.median(returns):.1f} | "
              f"{lengths.mean():.0f} |")  # fmt: skip
    (r_ours, l_ours), (r_theirs, l_theirs) = results["ours"], results["pufferlib"]
    print(f"KS p-value: returns {ks_test(r_ours, r_theirs)[1]:.3g}, "
          f"lengths {ks_test(l_ours, l_theirs)[1]:.3g}")  # fmt: skip


if __name__ == "__main__":
    main()
