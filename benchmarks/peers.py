"""The peers the benchmarks compare against, in one place; not a benchmark itself.

- PufferLib 3.0 (a venv built by shared/anchors/pl3/setup.sh): its interpreter
  (`pufferlib_python`), its configs (`pufferlib_config`) and our same config
  (`ours_from_pufferlib`), and its env steps per second (`pufferlib_sps`, run under its
  interpreter as `python peers.py _pufferlib-sps ENV ...`, one JSON line out).
- Gymnasium's vectorizers (`gymnasium_vector`): sync, async, or an env's own vector entry point.

Stable-Baselines3 and EnvPool each serve one script and stay in it (sb3.py, learn.py,
mujoco_learn.py; envs.py). The machine header, timing and result records are not here but in
`puffer.cli.bench`, which `puffer bench` uses too.

The module level is standard library only, so it loads under PufferLib's interpreter (where
`parity_trainer.py` and `parity_envs.py` run their PufferLib halves and `ocean.py` its env
rates).

PufferLib's `.ini` configs (`pufferlib/config/ocean/<env>.ini` over `config/default.ini`) map
onto ours by `ours_from_pufferlib`: every training value it has, its env and vec counts as one
agent count, its LSTM as ours, and the two semantics it applies without a key (rewards clamped
to [-1, 1] at rollout; Muon's momentum is its `adam_beta1`).
"""

from __future__ import annotations

import argparse
import ast
import configparser
import json
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the module level stays standard library only (see above)
    import numpy as np

__all__ = [
    "gymnasium_vector",
    "ks_test",
    "ours_from_pufferlib",
    "pufferlib_config",
    "pufferlib_python",
    "pufferlib_sps",
]

HERE = Path(__file__).resolve()


def pufferlib_python(folder: str | Path) -> Path:
    """The interpreter of a PufferLib venv given as the venv or the folder holding `venv/`."""
    for python in (Path(folder) / "bin/python", Path(folder) / "venv/bin/python"):
        if python.is_file():
            return python
    raise SystemExit(
        f"--pufferlib {folder}: no bin/python or venv/bin/python there; pass the PufferLib "
        "venv built by shared/anchors/pl3/setup.sh (or the folder holding it)"
    )


def _config_dir(python: Path) -> Path:
    """`pufferlib/config` of the PufferLib installed for `python`."""
    where = subprocess.run(
        [str(python), "-c", "import importlib.util as u; print(u.find_spec('pufferlib').origin)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return Path(where).parent / "config"


def pufferlib_config(python: Path, env: str) -> dict[str, dict[str, object]]:
    """PufferLib's resolved config for Ocean `env` (`breakout` reads `puffer_breakout`'s .ini
    over `default.ini`), sections as dicts of typed values ('auto' stays a string)."""
    root = _config_dir(python)
    for path in sorted(root.glob("**/*.ini")):
        parser = configparser.ConfigParser()
        parser.read([root / "default.ini", path])
        if f"puffer_{env}" in parser["base"]["env_name"].split():
            break
    else:
        raise SystemExit(f"PufferLib 3.0 has no config for puffer_{env} under {root}")
    return {
        section: {key: _typed(value) for key, value in parser[section].items()}
        for section in parser.sections()
        if not section.startswith("sweep")
    }


def _typed(text: str) -> object:
    """An .ini value as PufferLib reads it (`ast.literal_eval`, else the string)."""
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        return text.strip()


# PufferLib's [train] keys that ours has under the same name and meaning.
_SAME = (
    "total_timesteps", "minibatch_size", "update_epochs", "gamma", "gae_lambda", "clip_coef",
    "vf_coef", "vf_clip_coef", "max_grad_norm", "ent_coef", "learning_rate", "anneal_lr",
    "vtrace_rho_clip", "vtrace_c_clip", "prio_alpha", "prio_beta0", "adam_beta1", "adam_beta2",
    "adam_eps",
)  # fmt: skip


def ours_from_pufferlib(config: dict[str, dict[str, object]]) -> list[str]:
    """`puffer train` overrides that run PufferLib's config on ours: every [train] value,
    its agent count (env.num_envs x vec.num_envs), its env parameters, LSTM or not, on our
    default network whatever the shipped TOML sets."""
    train, env, vec = config["train"], config["env"], config["vec"]
    base, rnn = config["base"], config.get("rnn", {})
    overrides = {f"train.{key}": train[key] for key in _SAME if key in train}
    overrides["train.horizon"] = train["bptt_horizon"]
    # PufferLib's "auto" is one segment of every agent a batch: our 0.
    batch = train.get("batch_size", "auto")
    overrides["train.batch_size"] = 0 if batch == "auto" else batch
    overrides["train.optimizer"] = train["optimizer"]
    if train["optimizer"] == "muon":
        # heavyball's Muon averages its momentum (our 'average'); a shipped TOML may say 4.0's.
        overrides["train.muon_momentum"] = train["adam_beta1"]
        overrides["train.muon_momentum_rule"] = "average"
    overrides["train.replay_ratio"] = 0  # 3.0 counts update_epochs passes
    overrides["train.reward_clip"] = 1.0
    overrides["train.refresh_values"] = True
    agents = int(env.get("num_envs", 1)) * int(vec.get("num_envs", 1))
    overrides["env.num_envs"] = agents
    for key, value in env.items():
        if key != "num_envs":
            overrides[f"env.{key}"] = value
    hidden = config.get("policy", {}).get("hidden_size")
    if hidden is not None:
        overrides["policy.hidden_size"] = hidden
    overrides["policy.init"] = "pufferlib"
    # 3.0's policies are an MLP encoder with an LSTM or none: our default network, whatever
    # the shipped TOML picks (breakout's is PufferNet on a MinGRU).
    overrides["policy.network"] = "default"
    overrides["policy.recurrent"] = "none"
    if base.get("rnn_name") not in (None, "None"):
        overrides["policy.recurrent"] = "lstm"
        if rnn.get("hidden_size") is not None:
            overrides["policy.hidden_size"] = rnn["hidden_size"]
    flags = []
    for key, value in overrides.items():
        flags += [
            f"--{key.replace('_', '-')}",
            str(value).lower() if isinstance(value, bool) else str(value),
        ]
    return flags


def ks_test(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Two-sample Kolmogorov-Smirnov statistic and its asymptotic p-value (conservative for
    discrete samples such as episode lengths)."""
    import numpy as np

    if len(a) == 0 or len(b) == 0:
        return float("nan"), float("nan")
    grid = np.union1d(a, b)
    cdf_a = np.searchsorted(np.sort(a), grid, side="right") / len(a)
    cdf_b = np.searchsorted(np.sort(b), grid, side="right") / len(b)
    d = float(np.abs(cdf_a - cdf_b).max())
    en = np.sqrt(len(a) * len(b) / (len(a) + len(b)))
    lam = (en + 0.12 + 0.11 / en) * d
    j = np.arange(1, 101)
    p = float(np.clip(2 * np.sum((-1.0) ** (j - 1) * np.exp(-2 * j**2 * lam**2)), 0, 1))
    return d, p if d > 0 else 1.0


def pufferlib_sps(
    python: Path, env: str, num_envs: int, seconds: float, repeats: int, config: dict
) -> tuple[float, int]:
    """PufferLib's Ocean `env` (`num_envs` copies, `config` its kwargs beyond num_envs) stepped
    with random actions through its public `step`, under its interpreter `python` in a scratch
    folder (its import writes ./resources). Returns (agent steps per second, the median of
    `repeats` runs of `seconds` after a warm-up; its agent count)."""
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run(
            [str(python), str(HERE), "_pufferlib-sps", env, "--num-envs", str(num_envs),
             "--seconds", str(seconds), "--repeats", str(repeats), "--config", json.dumps(config)],
            cwd=scratch, capture_output=True, text=True, check=False,
        )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"PufferLib's {env} failed:\n{done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["sps"], result["num_agents"]


def _pufferlib_sps_half(args: argparse.Namespace) -> None:
    """`pufferlib_sps`'s half under PufferLib's interpreter: prints {"num_agents", "sps"}.
    Timed by hand: `puffer.cli.bench` is not installed there."""
    import numpy as np
    from pufferlib.ocean.environment import env_creator

    env = env_creator("puffer_" + args.env)(num_envs=args.num_envs, **json.loads(args.config))
    env.reset(seed=0)
    space = env.single_action_space
    pool = [np.array([space.sample() for _ in range(env.num_agents)]) for _ in range(16)]

    def rate(seconds: float) -> float:
        start, steps = time.perf_counter(), 0
        while time.perf_counter() - start < seconds:
            env.step(pool[steps % 16])
            steps += 1
        return steps * env.num_agents / (time.perf_counter() - start)

    rate(0.5)  # warm-up
    sps = statistics.median(rate(args.seconds) for _ in range(args.repeats))
    print(json.dumps({"num_agents": env.num_agents, "sps": sps}))


def gymnasium_vector(
    make_env: str | Callable[[], object], num_envs: int, mode: str, seed: int = 0
) -> tuple[Callable[[], int], Callable[[], None]]:
    """Gymnasium's own vectorization of `num_envs` copies, as (step, close).

    Args:
        make_env: a registered id, or a function returning a `gymnasium.Env`.
        mode: 'sync' or 'async' (SyncVectorEnv / AsyncVectorEnv over shared memory, resetting
            in the same step as ours do), or 'vector_entry_point' (the id's own vectorized
            env, e.g. CartPole's numpy one).
        seed: seeds the reset and the 64 pre-drawn action batches that `step` cycles through,
            so sampling is not timed.

    Returns:
        step() steps every copy once and returns `num_envs`; close() closes them.
    """
    import gymnasium

    if mode == "vector_entry_point":
        if not isinstance(make_env, str):
            raise SystemExit("gymnasium_vector: 'vector_entry_point' needs a registered env id")
        vecenv = gymnasium.make_vec(make_env, num_envs, vectorization_mode=mode)
    elif mode in ("sync", "async"):
        fns = [(lambda: gymnasium.make(make_env)) if isinstance(make_env, str) else make_env]
        same_step = gymnasium.vector.AutoresetMode.SAME_STEP
        if mode == "sync":
            vecenv = gymnasium.vector.SyncVectorEnv(fns * num_envs, autoreset_mode=same_step)
        else:
            vecenv = gymnasium.vector.AsyncVectorEnv(
                fns * num_envs, shared_memory=True, autoreset_mode=same_step
            )
    else:
        raise SystemExit(f"gymnasium_vector: mode {mode!r}; use sync, async or vector_entry_point")
    vecenv.reset(seed=seed)
    vecenv.action_space.seed(seed)
    pool = [vecenv.action_space.sample() for _ in range(64)]
    count = iter(range(1 << 62))

    def step() -> int:
        vecenv.step(pool[next(count) % 64])
        return num_envs

    return step, vecenv.close


def main() -> None:
    parser = argparse.ArgumentParser(description="Peer halves run under a peer's interpreter.")
    sub = parser.add_subparsers(dest="command", required=True)
    sps = sub.add_parser("_pufferlib-sps", help="PufferLib's env rate (see pufferlib_sps)")
    sps.add_argument("env")
    sps.add_argument("--num-envs", type=int, default=1024)
    sps.add_argument("--seconds", type=float, default=2.0)
    sps.add_argument("--repeats", type=int, default=3)
    sps.add_argument("--config", default="{}", help="JSON of env kwargs beyond num_envs")
    _pufferlib_sps_half(parser.parse_args())


if __name__ == "__main__":
    main()
