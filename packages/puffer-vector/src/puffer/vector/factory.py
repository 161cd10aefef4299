"""`make`: build a vectorizer by backend name."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from puffer.core import APIUsageError
from puffer.vector.base import RENAMED_KEYWORDS, EnvCreator, Vectorizer, refuse_renamed

__all__ = ["BACKENDS", "RENAMED_KEYWORDS", "make"]

BACKENDS = ("serial", "multiprocessing", "ray")


def make(
    env_creator: EnvCreator | str,
    num_instances: int = 1,
    backend: str = "serial",
    num_workers: int | None = None,
    instances_per_recv: int | None = None,
    zero_copy: bool = True,
    seed: int | None = None,
    env_args: Sequence = (),
    env_kwargs: dict | None = None,
    **backend_kwargs: Any,
) -> Vectorizer:
    """Vectorize `num_instances` copies of an env.

    Args:
        env_creator: a registered env name (see `puffer.core.make`) or a callable called as
            `env_creator(*env_args, buf=<row slice Buffer>, **env_kwargs)` returning a
            `PufferEnv` that writes into `buf`.
        num_instances: env copies (`[vec] num_instances`); each holds `agents_per_env` rows.
        backend: "serial" (in process), "multiprocessing" (shared memory) or "ray" (actors).
        num_workers: workers, each owning `num_instances / num_workers` consecutive envs.
            Default: every env its own batch unit for serial, the largest divisor of
            num_instances not above the CPU count for multiprocessing and ray.
        instances_per_recv: envs returned by each `recv()` (`[vec] instances_per_recv`); a
            multiple of envs per worker that divides num_instances. Default num_instances
            (synchronous). Smaller means EnvPool-style async.
        zero_copy: batches are fixed contiguous groups of workers returned as views; if
            False, `recv` gathers the first ready workers, whichever they are (copies).
        seed: seed of the first reset when `reset`/`async_reset` get none; env i gets seed + i.
        env_args: extra positional arguments of every `env_creator` call.
        env_kwargs: extra keyword arguments of every `env_creator` call.
        **backend_kwargs: passed to the backend class (e.g. `start_method` for
            multiprocessing, `ray_address` for ray).

    Returns:
        A `Serial`, `Multiprocessing` or `Ray` vectorizer; call `close()` (or use `with`).

    Raises:
        APIUsageError: an unknown backend, or sizes that do not divide.
        TypeError: an old keyword (`num_envs`, `batch_size`), naming its new name.

    Example:
        >>> import numpy as np
        >>> from puffer.vector import make
        >>> vec = make("gym-CartPole-v1", num_instances=4, backend="multiprocessing", num_workers=2)
        >>> obs, infos = vec.reset(seed=0)
        >>> obs.shape
        (4, 4)
        >>> obs, rewards, terminals, truncations, infos = vec.step(np.zeros(4, np.int32))
        >>> vec.close()
    """
    refuse_renamed(
        "puffer.vector.make", {k: v for k, v in backend_kwargs.items() if k in RENAMED_KEYWORDS}
    )
    if backend == "serial":
        from puffer.vector.serial import Serial as cls
    elif backend == "multiprocessing":
        from puffer.vector.multiprocessing import Multiprocessing as cls
    elif backend == "ray":
        from puffer.vector.ray import Ray as cls
    else:
        raise APIUsageError(
            f"make(env={env_creator!r}): unknown backend {backend!r}; use one of {BACKENDS}"
        )
    return cls(
        env_creator,
        num_instances,
        num_workers=num_workers,
        instances_per_recv=instances_per_recv,
        zero_copy=zero_copy,
        seed=seed,
        env_args=env_args,
        env_kwargs=env_kwargs,
        **backend_kwargs,
    )
