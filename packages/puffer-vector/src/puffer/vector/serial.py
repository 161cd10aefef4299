"""`Serial`: every env stepped in the calling process, one after another.

The reference backend: no processes, no copies (each env writes its rows of one `Buffer`).
With `instances_per_recv < num_instances` it mimics the async pool: `send` steps the batch at
once and `recv` hands out ready batches in round-robin order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from puffer.vector.base import EnvCreator, Infos, Vectorizer

__all__ = ["Serial"]


class Serial(Vectorizer):
    """Step `num_instances` envs in this process over one `Buffer` of `num_agents` rows.

    `num_workers` only sets the granularity of batches (envs per worker); nothing runs in
    parallel. Arguments are those of `puffer.vector.make`.

    Example:
        >>> import numpy as np
        >>> from puffer.vector import Serial
        >>> from puffer.core import make as make_env
        >>> vec = Serial(lambda buf=None: make_env("gym-CartPole-v1", buf=buf), num_instances=4)
        >>> obs, infos = vec.reset(seed=0)
        >>> obs.shape, obs.dtype
        ((4, 4), dtype('float32'))
        >>> obs, rewards, terminals, truncations, infos = vec.step(np.zeros(4, np.int32))
        >>> vec.close()
    """

    def __init__(
        self,
        env_creator: EnvCreator | str,
        num_instances: int = 1,
        num_workers: int | None = None,
        instances_per_recv: int | None = None,
        zero_copy: bool = True,
        seed: int | None = None,
        env_args: Sequence = (),
        env_kwargs: dict | None = None,
        **renamed: Any,
    ):
        super().__init__(
            env_creator,
            num_instances,
            num_workers,
            instances_per_recv,
            zero_copy,
            seed,
            env_args,
            env_kwargs,
            **renamed,
        )
        spec = self.spec
        self.buf = spec.allocate(self.num_agents)
        self.envs = []
        try:
            for i in range(num_instances):
                rows = self.buf.rows(i * self.agents_per_env, (i + 1) * self.agents_per_env)
                env = self.env_creator(*self.env_args, buf=rows, **self.env_kwargs)
                self.envs.append(env)
                spec.check(env, repr(self))
        except BaseException:
            self._shutdown()
            raise
        self._infos: dict[int, Infos] = {}

    def _run(self, workers: Iterable[int], seeds: list[int | None] | None) -> None:
        """Reset (with `seeds`) or step the envs of `workers` now; keep their infos."""
        for worker in workers:
            infos: Infos = []
            for i in self._worker_envs(worker):
                env = self.envs[i]
                infos.extend(
                    env.step(env.actions)[-1] if seeds is None else env.reset(seeds[i])[-1]
                )
            self._infos[worker] = infos

    def _start_reset(self, seeds: list[int | None]) -> None:
        self._run(range(self.num_workers), seeds)
        self._pending.clear()
        self._pending.extend(self._units)

    def _start_step(self, workers: tuple[int, ...]) -> None:
        self._run(workers, None)
        self._queue(workers)

    def _wait(self) -> tuple[tuple[int, ...], Infos]:
        # Everything sent has already run: the oldest batch is always ready.
        workers = self._take_ready(lambda w: True)
        return workers, [info for w in workers for info in self._infos.pop(w)]

    def _shutdown(self) -> None:
        for env in getattr(self, "envs", ()):
            env.close()
