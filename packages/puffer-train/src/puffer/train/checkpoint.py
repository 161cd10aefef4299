"""Run directories and atomic checkpoints.

A run lives in `<data_dir>/<env>/<run_id>/` (the names inside: `puffer.train.paths.RunPaths`).
`checkpoint.pt` holds what `PuffeRL.state_dict()` returns: model, optimizer, counters, RNG
streams, the held reply and recurrent state, the env's own state when it has one, and the
config. It is written to a temporary file in the same directory and renamed over the old one,
so a run killed mid-write still has its previous checkpoint intact.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import torch

from puffer.core import PufferError
from puffer.train.config import Config
from puffer.train.paths import RunPaths

__all__ = [
    "CheckpointError",
    "atomic_write",
    "check_compatible",
    "load",
    "make_run_dir",
    "rng_state",
    "save",
    "set_rng_state",
]

# Keys that fix tensor shapes or the optimizer's layout: a resumed run must keep them.
_FIXED = {
    "policy": (
        "encoder",
        "hidden_size",
        "num_layers",
        "recurrent",
        "mingru_layers",
        "cnn_channels",
    ),
    "train": ("horizon", "batch_size", "minibatch_size", "optimizer"),
}


class CheckpointError(PufferError):
    """A checkpoint that is missing, corrupt, or from a run this one cannot continue."""


def make_run_dir(config: Config, env_name: str) -> RunPaths:
    """Create (or, when resuming, find) the run directory and write config.json into it.

    An empty `run_id` becomes a fresh time-stamped id, which is written back into `config`.

    Raises:
        CheckpointError: resuming a run directory that does not exist.
    """
    train = config.train
    if not train.run_id:
        if train.resume:
            raise CheckpointError(
                "train.resume is set but train.run_id is empty; name the run to resume"
            )
        train.run_id = RunPaths.new_run_id()
    paths = RunPaths(train.data_dir, env_name, train.run_id)
    if train.resume and not paths.checkpoint.is_file():
        raise CheckpointError(
            f"cannot resume: {paths.checkpoint} does not exist; check train.data_dir "
            "and train.run_id, or start a new run without train.resume"
        )
    paths.root.mkdir(parents=True, exist_ok=True)
    text = json.dumps(config.to_dict(), indent=2, sort_keys=True)
    atomic_write(paths.config, lambda f: f.write(text.encode()))
    return paths


def atomic_write(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """`write(file)` into a temp file beside `path`, fsync, then rename it over `path`."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as file:
            write(file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save(path: str | Path, state: dict[str, Any]) -> Path:
    """`torch.save(state)` to a temp file beside `path`, then rename it over `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda f: torch.save(state, f))
    return path


def load(path: str | Path) -> dict[str, Any]:
    """Read a checkpoint (tensors and plain containers only: `weights_only=True`).

    Raises:
        CheckpointError: the file is missing, truncated, or not a puffer checkpoint.
    """
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"no checkpoint at {path}; train first or fix the path")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:
        raise CheckpointError(
            f"checkpoint {path} is corrupt or unreadable ({type(error).__name__}: {error}); "
            "delete it to start over"
        ) from error
    missing = {"model", "optimizer", "trainer", "rng", "config"} - set(state)
    if not isinstance(state, dict) or missing:
        raise CheckpointError(
            f"{path} is not a puffer checkpoint: it lacks {sorted(missing)}; pass a "
            f"{RunPaths.CHECKPOINT} written by PuffeRL.save_checkpoint()"
        )
    return state


def check_compatible(state: dict[str, Any], config: Config, num_agents: int) -> None:
    """Raise `CheckpointError` naming every shape-fixing key that differs from `config`."""
    saved, current = state["config"], config.to_dict()
    diffs = [
        f"{section}.{key}: checkpoint {saved.get(section, {}).get(key)!r}, "
        f"now {current[section][key]!r}"
        for section, keys in _FIXED.items()
        for key in keys
        if saved.get(section, {}).get(key) != current[section][key]
    ]
    if state.get("num_agents") != num_agents:
        diffs.append(f"num_agents: checkpoint {state.get('num_agents')}, now {num_agents}")
    if diffs:
        raise CheckpointError(
            "checkpoint does not match this run: " + "; ".join(diffs) + ". Resume with the "
            "config in the run's config.json"
        )


def rng_state() -> dict[str, Any]:
    """Python, numpy (global), torch CPU and CUDA generator states, as tensors and lists.

    Action sampling and minibatch sampling draw from torch's generators; envs own theirs
    (native Ocean envs save them with `save_state`).
    """
    version, internal, gauss_next = random.getstate()
    # The legacy global generator: puffer draws from none, user envs and policies may.
    kind, keys, pos, has_gauss, cached = np.random.get_state()  # noqa: NPY002
    state: dict[str, Any] = {
        "python": [version, list(internal), gauss_next],
        "numpy": [kind, keys.tolist(), int(pos), int(has_gauss), float(cached)],
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    """Inverse of `rng_state`."""
    version, internal, gauss_next = state["python"]
    random.setstate((version, tuple(internal), gauss_next))
    if "numpy" in state:
        kind, keys, pos, has_gauss, cached = state["numpy"]
        keys = np.array(keys, dtype=np.uint32)
        np.random.set_state((kind, keys, pos, has_gauss, cached))  # noqa: NPY002
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
