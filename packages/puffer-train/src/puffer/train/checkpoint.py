"""Run directories and atomic checkpoints.

A run lives in `<data_dir>/<env>/<run_id>/` (the names inside: `puffer.train.paths.RunPaths`).
`checkpoint.pt` holds what `PuffeRL.state_dict()` returns: model, optimizer, counters, RNG
streams, the held reply and recurrent state, the env's own state when it has one, and the
config. It is written to a temporary file in the same directory and renamed over the old one
(`puffer.train.storage.atomic_write`), so a run killed mid-write still has its previous
checkpoint intact; the temp file such a kill leaves is removed when the run dir is next opened.

A run dir belongs to one run: a new run refuses a directory that already holds a checkpoint or
metrics (it would overwrite the one and append to the other), and only `train.resume` opens it.
While a run trains, its process holds an exclusive `flock` on the directory's `.lock` (holding
its pid): a second `train` or resume of the same directory, started at the same moment or later,
is refused naming that pid, so two runs never interleave metrics or replace each other's
checkpoint. The lock goes with the process (a killed run leaves nothing to clean up).

Evaluation and play find a run's checkpoint (`find_checkpoint`: a file, a run dir or "latest")
and rebuild its policy from the checkpoint's own config (`load_policy`).

A checkpoint is data, whoever wrote it: its config is parsed and checked as user input is
(`Config.from_dict`, every field typed and ranged), and it never chooses code to run. Its
`policy.encoder` may name a built-in encoder; a `module:factory` one is imported only when the
user named that same encoder (on the command line, in `--config`, or through the env's shipped
TOML) or passed `--trust-checkpoint` (`load_policy(..., trusted_encoder=, trust=)`).
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import pickle
import random
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from puffer.core import PufferEnv, PufferError
from puffer.train.config import RENAMED_KEYS, Config, ConfigError
from puffer.train.limits import check_limits
from puffer.train.paths import RunPaths, check_name
from puffer.train.policies import Policy, make_policy
from puffer.train.storage import (
    atomic_write,
    check_inside,
    refuse_symlink,
    temp_files,
    writing,
)

__all__ = [
    "BUILTIN_ENCODERS",
    "CheckpointError",
    "check_compatible",
    "find_checkpoint",
    "load",
    "load_policy",
    "load_run_config",
    "make_run_dir",
    "run_config",
    "release_run_dir",
    "rng_state",
    "save",
    "saved_config",
    "set_rng_state",
]

# Keys that fix tensor shapes or the optimizer's layout: a resumed run must keep them.
_FIXED = {
    "policy": (
        "network",
        "encoder",
        "hidden_size",
        "num_layers",
        "recurrent",
        "mingru_layers",
        "cnn_channels",
    ),
    "train": ("horizon", "batch_size", "minibatch_size", "optimizer"),
}


# What every checkpoint holds (`PuffeRL.state_dict()`).
_REQUIRED = {"model", "optimizer", "trainer", "rng", "config"}
# Encoders `make_policy` builds from its own code; any other value names a module to import.
BUILTIN_ENCODERS = ("mlp", "nature_cnn", "impala", "multi")


class CheckpointError(PufferError):
    """A checkpoint that is missing, corrupt, or from a run this one cannot continue."""


def make_run_dir(config: Config, env_name: str, defaults: Config | None = None) -> RunPaths:
    """Create (or, when resuming, open) the run directory, lock it for this process, and write
    the run's config into it as config.json and config.toml (which `--config FILE` reads back,
    reproducing the run), and defaults.json (`defaults`, the env's shipped config, when given,
    which the dashboard diffs the run against); `release_run_dir` gives the lock back.

    An empty `run_id` becomes a fresh time-stamped id: the returned `paths.run_id`, and the
    `train.run_id` of the files written; `config` itself is left as it is. Temp files left by
    a run killed mid-write are removed.

    Raises:
        APIUsageError: a run id that names no single directory (a '/', '..', past MAX_NAME).
        CheckpointError: resuming a run directory that has no checkpoint.
        ConfigError: a new run (no `train.resume`) in a directory that already holds a run,
            or a directory another process trains in (the message names its pid).
        StorageError: the directory or a config file cannot be written (a full disk), the run
            dir leads outside the data dir, or a run file in it is a symlink.
    """
    train = config.train
    if not train.run_id and train.resume:
        raise CheckpointError(
            "train.resume is set but train.run_id is empty; name the run to resume"
        )
    run_id = train.run_id or _fresh_run_id(train.data_dir, env_name)
    check_name("train.run_id", run_id)
    paths = RunPaths(train.data_dir, env_name, run_id)
    if train.resume and not paths.checkpoint.is_file():
        raise CheckpointError(
            f"cannot resume: {paths.checkpoint} does not exist; check train.data_dir "
            "and train.run_id, or start a new run without train.resume"
        )
    with writing(paths.root):
        paths.root.mkdir(parents=True, exist_ok=True)
    check_inside(paths.root, train.data_dir)
    _lock(paths)
    try:
        for name in (*_WRITTEN, RunPaths.CONFIG_TOML):
            refuse_symlink(paths.root / name)
        held = [p.name for p in (paths.checkpoint, paths.metrics) if p.exists()]
        if held and not train.resume:
            raise ConfigError(
                f"run directory {paths.root} already holds a run ({', '.join(held)}); continue "
                f"it with train.resume (--train.resume true), or start a new run under another "
                "train.run_id (--train.run-id NAME; leave it empty for a fresh time-stamped one)"
            )
        # Only this run writes here (it holds the lock), so any temp file is a killed write's.
        for name in _WRITTEN:
            for leftover in temp_files(paths.root, name):
                leftover.unlink(missing_ok=True)
        run = run_config(config, run_id)
        files = [(paths.config, _json(run)), (paths.config_toml, run.to_toml().encode())]
        if defaults is not None:
            files.append((paths.defaults, _json(defaults)))
        for path, data in files:
            atomic_write(path, lambda f, data=data: f.write(data))
    except BaseException:
        release_run_dir(paths)
        raise
    return paths


def run_config(config: Config, run_id: str) -> Config:
    """`config` as the run `run_id` trains with it: a copy whose `train.run_id` is `run_id`."""
    return dataclasses.replace(config, train=dataclasses.replace(config.train, run_id=run_id))


def _json(config: Config) -> bytes:
    return json.dumps(config.to_dict(), indent=2, sort_keys=True).encode()


# The files a run writes with `atomic_write` (so a killed write may leave their temp files).
_WRITTEN = (
    RunPaths.CHECKPOINT,
    RunPaths.CONFIG,
    RunPaths.CONFIG_TOML,
    RunPaths.DEFAULTS,
    RunPaths.METRICS,
)
# The fds of the run dirs this process holds locked, by directory.
_HELD: dict[Path, int] = {}
# Seconds to wait for a lock's holder to write its pid (it locks first, then writes).
_PID_WAIT = 1.0


def _lock(paths: RunPaths) -> None:
    """Take the run dir's exclusive lock, or raise `ConfigError` naming the process holding it."""
    with writing(paths.lock):
        fd = os.open(paths.lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        deadline = time.monotonic() + _PID_WAIT
        holder = b""
        while not holder.strip() and time.monotonic() < deadline:
            holder = os.pread(fd, 32, 0)
            time.sleep(0.01)
        os.close(fd)
        pid = holder.decode(errors="replace").strip() or "unknown"
        raise ConfigError(
            f"run directory {paths.root} is in use: the run of pid {pid} trains there (a "
            "second train or resume would interleave its metrics and replace its checkpoint); "
            "wait for it to end or stop it, or use another train.run_id"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    _HELD[paths.root] = fd


def release_run_dir(paths: RunPaths) -> None:
    """Release the lock `make_run_dir` took (the run ended); nothing when it holds none."""
    fd = _HELD.pop(paths.root, None)
    if fd is not None:
        os.close(fd)


def _fresh_run_id(data_dir: str | Path, env_name: str) -> str:
    """`RunPaths.new_run_id()`, with `-2`, `-3`, ... appended while that directory exists (two
    runs started within a second by one process share the time stamp and the pid)."""
    base = run_id = RunPaths.new_run_id()
    count = 1
    while RunPaths(data_dir, env_name, run_id).root.exists():
        count += 1
        run_id = f"{base}-{count}"
    return run_id


def save(path: str | Path, state: dict[str, Any]) -> Path:
    """`torch.save(state)` to a temp file beside `path`, then rename it over `path`.

    Raises:
        StorageError: the file could not be written (a full disk); `path` is untouched.
    """
    path = Path(path)
    with writing(path):
        path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda f: torch.save(state, f))
    return path


def load(path: str | Path) -> dict[str, Any]:
    """Read a checkpoint (tensors and plain containers only: `weights_only=True`).

    Raises:
        CheckpointError: the file is missing, truncated, holds objects other than tensors and
            plain containers (never unpickled: that would run code from the file), or is not
            a puffer checkpoint.
    """
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"no checkpoint at {path}; train first or fix the path")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as error:
        # torch's message goes on to suggest weights_only=False: not advice to pass on for a
        # file whose origin is unknown.
        raise CheckpointError(
            f"checkpoint {path} is corrupt or unreadable: it holds objects other than tensors "
            "and plain containers, which puffer never unpickles; delete it to start over"
        ) from error
    except Exception as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise CheckpointError(
            f"checkpoint {path} is corrupt or unreadable ({type(error).__name__}: {first}); "
            "delete it to start over"
        ) from error
    if not isinstance(state, dict):
        problem = f"it holds a {type(state).__name__}, not a dict"
    elif missing := sorted(_REQUIRED - set(state)):
        problem = f"it lacks {missing}"
    elif not all(isinstance(state[key], dict) for key in ("model", "trainer", "config")):
        problem = "its model, trainer or config entry is not a dict"
    elif bad := [k for k, v in state["config"].items() if not isinstance(v, dict)]:
        problem = f"its config section {bad[0]!r} is not a dict"
    elif not all(
        type(state["trainer"].get(key)) is int
        for key in ("global_step", _iteration_key(state["trainer"]))
    ):
        problem = "its trainer entry lacks an integer global_step and iteration"
    else:
        state["trainer"] = _trainer_keys_upgraded(state["trainer"])
        # From here on every reader sees the config as the typed sections parsed it.
        state["config"] = _renamed_keys_upgraded(state["config"])
        state["config"] = saved_config(state, path).to_dict()
        return state
    raise CheckpointError(
        f"checkpoint {path} is corrupt or unreadable: {problem}, so it is no puffer checkpoint; "
        f"pass a {RunPaths.CHECKPOINT} written by PuffeRL.save_checkpoint(), or delete it to "
        "start over"
    )


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


# Trainer-state keys renamed since checkpoints were first written, old: new. "epoch" counted
# iterations (one collect and one update), now apart from `update_epochs` (passes per update).
RENAMED_TRAINER_KEYS = {"epoch": "iteration"}


def _iteration_key(trainer: dict[str, Any]) -> str:
    """Where `trainer` holds its iteration count: "iteration", or "epoch" in an old one."""
    return "epoch" if "iteration" not in trainer and "epoch" in trainer else "iteration"


def _trainer_keys_upgraded(trainer: dict[str, Any]) -> dict[str, Any]:
    """A saved trainer state with the keys renamed since it was written under their new names
    (a checkpoint written before the rename resumes as it did)."""
    upgraded = dict(trainer)
    for old, new in RENAMED_TRAINER_KEYS.items():
        if old in upgraded and new not in upgraded:
            upgraded[new] = upgraded.pop(old)
    return upgraded


def _renamed_keys_upgraded(config: dict[str, Any]) -> dict[str, Any]:
    """A saved config with the keys renamed since it was written under their new names.

    A checkpoint is our own record, not input: what a user may no longer type (the old names
    are refused in files and flags) still loads from a run trained before the rename.
    """
    upgraded = {section: dict(values) for section, values in config.items()}
    for (section, old), new in RENAMED_KEYS.items():
        values = upgraded.get(section)
        if isinstance(values, dict) and old in values and new not in values:
            values[new] = values.pop(old)
    return upgraded


def saved_config(state: dict[str, Any], checkpoint: str | Path) -> Config:
    """The config a loaded checkpoint holds, parsed and checked as user input is (every field
    typed and ranged by its section, sizes bounded by `puffer.train.limits`, unknown keys
    refused).

    Raises:
        CheckpointError: a field the config sections refuse; the message names it.
    """
    try:
        config = Config.from_dict(state["config"])
        check_limits(config)
        return config
    except (ConfigError, TypeError, ValueError) as error:
        raise CheckpointError(
            f"checkpoint {checkpoint} holds a config puffer refuses ({error}); it was not "
            "written by this puffer: delete it, or train again"
        ) from error


def load_run_config(checkpoint: str | Path) -> Config:
    """The config a checkpoint was trained with.

    Raises:
        CheckpointError: The file is not a puffer checkpoint.
    """
    return saved_config(load(checkpoint), checkpoint)


def load_policy(
    checkpoint: str | Path,
    env: PufferEnv,
    *,
    trusted_encoder: str | None = None,
    trust: bool = False,
) -> Policy:
    """Build the policy a checkpoint was trained with (its own [policy] section), load its
    weights (on the CPU) and put it in eval mode.

    Args:
        checkpoint: The checkpoint file.
        env: The env the policy acts in.
        trusted_encoder: The encoder the user's own config names (`policy.encoder` resolved
            from the env's TOMLs, `--config` and the command line): a `module:factory`
            encoder of the checkpoint is imported only when it is this one.
        trust: Import whatever encoder the checkpoint names (`--trust-checkpoint`).

    Raises:
        CheckpointError: The file is not a puffer checkpoint, does not fit `env`, or names
            an encoder to import that the user did not name.
    """
    state = load(checkpoint)
    saved = saved_config(state, checkpoint)
    encoder = saved.policy.encoder
    if encoder not in BUILTIN_ENCODERS and not trust and encoder != trusted_encoder:
        # Importing the module runs its code: a checkpoint someone sent would choose it.
        raise CheckpointError(
            f"checkpoint {checkpoint} names policy.encoder {encoder!r}, code to import that "
            f"you did not name (your config's encoder is {trusted_encoder!r}); puffer imports "
            f"it only if you ask: pass --policy.encoder {encoder} if you trust that module, "
            "or --trust-checkpoint"
        )
    policy = make_policy(saved.policy, env)
    try:
        policy.load_state_dict(state["model"])
    except RuntimeError as error:
        raise CheckpointError(
            f"{checkpoint} does not fit {env}: {error}; evaluate it on the env it was trained on"
        ) from error
    return policy.eval()


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
