"""What a run takes from the process it runs in: its torch device, torch's thread count and
float32 matrix product precision.

The cores themselves are counted by `puffer.core.usable_cores`, the one count the vectorizer's
worker pool, the config's derived worker counts and the thread count here all share.
"""

from __future__ import annotations

import os

import torch

from puffer.core import APIUsageError, usable_cores
from puffer.train.config import Config

__all__ = ["apply_torch_settings", "check_torch_settings", "resolve_device", "torch_threads"]


def resolve_device(device: str) -> torch.device:
    """'auto' -> cuda when available, else cpu; anything else as given.

    Example:
        >>> resolve_device("cpu")
        device(type='cpu')
    """
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def torch_threads(config: Config) -> int:
    """Torch's intra-op thread count for `config`: `train.torch_threads` when above 0; for 0
    (auto), the cores this process may run on (`OMP_NUM_THREADS` instead when set, so a sweep
    slot or a test worker can cap it) less one per env worker process, at least 1.

    In-process envs (`vec.backend` native or serial) step between the policy's passes, so the
    policy gets every core; 'multiprocessing' and 'ray' workers step beside it and keep theirs.

    Example:
        >>> from puffer.train import TrainConfig
        >>> torch_threads(Config(train=TrainConfig(torch_threads=3)))
        3
    """
    if config.train.torch_threads > 0:
        return config.train.torch_threads
    try:
        cores = int(os.environ.get("OMP_NUM_THREADS", "0"))
    except ValueError:  # e.g. OpenMP's nested form "4,2": fall back to the machine's cores
        cores = 0
    if cores < 1:
        cores = usable_cores()
    workers = config.vec.num_workers if config.vec.backend in ("multiprocessing", "ray") else 0
    return max(1, cores - workers)


def apply_torch_settings(config: Config) -> None:
    """Set torch's intra-op thread count to `torch_threads(config)` and its float32 matrix
    product precision to `train.matmul_precision`, both process-wide.

    The one place a run's process settings are made: `train()` calls it before the policy is
    built, and a Python caller building `PuffeRL` itself calls it before `make_policy`
    (`PuffeRL` checks, with `check_torch_settings`). Orthogonal init (a QR) rounds differently
    per thread count, so otherwise a seed's run would depend on what the process ran before; for
    the same reason a run sets the precision its config names rather than inheriting the
    process's.
    """
    torch.set_num_threads(torch_threads(config))
    torch.set_float32_matmul_precision(config.train.matmul_precision)


def check_torch_settings(config: Config) -> None:
    """Assert the process runs with `config`'s torch settings (`apply_torch_settings`'s).

    Raises:
        APIUsageError: torch's thread count or float32 matmul precision differs, naming both
            and the call that sets them.
    """
    wanted = {
        "thread count": (torch_threads(config), torch.get_num_threads()),
        "float32 matmul precision": (
            config.train.matmul_precision,
            torch.get_float32_matmul_precision(),
        ),
    }
    for name, (expected, actual) in wanted.items():
        if expected != actual:
            raise APIUsageError(
                f"torch's {name} is {actual!r} but the config asks for {expected!r}; call "
                "puffer.train.apply_torch_settings(config) before building the policy"
            )
