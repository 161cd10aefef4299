"""`Serial`: every env stepped in the calling process, one after another.

The reference backend: no processes, no copies (each env writes its rows of one `Buffer`).
With `batch_size < num_envs` it mimics the async pool: `send` steps the batch at once and
`recv` hands out ready batches in round-robin order.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from puffer.core import Buffer
from puffer.vector.base import EnvCreator, Infos, Vectorizer

__all__ = ["Serial"]


class Serial(Vectorizer):
    """Step `num_envs` envs in this process over one `Buffer` of `num_agents` rows.

    `num_workers` only sets the granularity of batches (envs per worker); nothing runs in
    parallel. Arguments are those of `puffer.vector.make`.

    Example:
        >>> from puffer.vector import Serial
        >>> from puffer.core import make as make_env
        >>> vec = Serial(lambda buf=None: make_env("gym-CartPole-v1", buf=buf), num_envs=4)
        >>> obs, infos = vec.reset(seed=0)
        >>> obs.shape, obs.dtype
        ((4, 4), dtype('float32'))
        >>> obs, rewards, terminals, truncations, infos = vec.step(np.zeros(4, np.int32))
        >>> vec.close()
    """

    def __init__(
        self,
        env_creator: EnvCreator | str,
        num_envs: int,
        num_workers: int | None = None,
        batch_size: int | None = None,
        zero_copy: bool = True,
        seed: int | None = None,
        env_args: Sequence = (),
        env_kwargs: dict | None = None,
    ):
        super().__init__(
            env_creator, num_envs, num_workers, batch_size, zero_copy, seed, env_args, env_kwargs
        )
        spec = self.spec
        self.buf = Buffer.allocate(
            self.num_agents, spec.single_observation_space, spec.single_action_space
        )
        self.envs = []
        try:
            for i in range(num_envs):
                rows = self.buf.rows(i * self.agents_per_env, (i + 1) * self.agents_per_env)
                env = self.env_creator(*self.env_args, buf=rows, **self.env_kwargs)
                self.envs.append(env)
                spec.check(env, repr(self))
        except BaseException:
            self._shutdown()
            raise
        self._ready: deque[tuple[tuple[int, ...], Infos]] = deque()

    def _run(self, workers: tuple[int, ...], seeds: list[int | None] | None) -> None:
        infos: Infos = []
        for worker in workers:
            for i in self._worker_envs(worker):
                env = self.envs[i]
                if seeds is None:
                    env_infos = env.step(env.actions)[-1]
                else:
                    env_infos = env.reset(seeds[i])[-1]
                infos.extend(env_infos)
        self._ready.append((workers, infos))

    def _start_reset(self, seeds: list[int | None]) -> None:
        self._ready.clear()
        per = self.workers_per_batch
        for start in range(0, self.num_workers, per):
            self._run(tuple(range(start, start + per)), seeds)

    def _start_step(self, workers: tuple[int, ...]) -> None:
        self._run(workers, None)

    def _wait(self) -> tuple[tuple[int, ...], Infos]:
        return self._ready.popleft()

    def _shutdown(self) -> None:
        for env in getattr(self, "envs", ()):
            env.close()
