"""PufferLib 3.0 as a peer for the benchmarks: its interpreter, its configs, our same config.

Not a benchmark itself: `train.py`, `ocean_learn.py` and `parity.py` import it. Standard
library only, so it loads under PufferLib's interpreter too (`parity.py` runs its PufferLib
half there).

PufferLib's `.ini` configs (`pufferlib/config/ocean/<env>.ini` over `config/default.ini`) map
onto ours by `ours_from_pufferlib`: every training value it has, its env and vec counts as one
agent count, its LSTM as ours, and the two semantics it applies without a key (rewards clamped
to [-1, 1] at rollout; Muon's momentum is its `adam_beta1`).
"""

from __future__ import annotations

import ast
import configparser
import os
import platform
import subprocess
from pathlib import Path

__all__ = ["ours_from_pufferlib", "pufferlib_config", "pufferlib_python"]


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
    its agent count (env.num_envs x vec.num_envs), its env parameters, LSTM or not."""
    train, env, vec = config["train"], config["env"], config["vec"]
    base, rnn = config["base"], config.get("rnn", {})
    overrides = {f"train.{key}": train[key] for key in _SAME if key in train}
    overrides["train.horizon"] = train["bptt_horizon"]
    # PufferLib's "auto" is one segment of every agent a batch: our 0.
    batch = train.get("batch_size", "auto")
    overrides["train.batch_size"] = 0 if batch == "auto" else batch
    overrides["train.optimizer"] = train["optimizer"]
    if train["optimizer"] == "muon":
        overrides["train.muon_momentum"] = train["adam_beta1"]
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


def machine() -> str:
    """`2-core AMD EPYC`: the core count and CPU model every stored benchmark result names."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()}-core {model}"
