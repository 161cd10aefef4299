"""`Ray`: one Ray actor per worker, the path to envs spread over many machines.

Each actor builds its envs over a private `Buffer` of its rows and returns copies of them
through Ray's object store; the parent copies each worker's result into its own rows of
`self.buf`. Batching and order follow `Multiprocessing`: with `zero_copy` a batch is a fixed
group of workers, otherwise the first ready workers; `recv` waits with `ray.wait`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from puffer.core import PufferEnv, WorkerError
from puffer.vector.base import EnvCreator, EnvSpec, Infos, Vectorizer

__all__ = ["Ray"]

_RESULT_NAMES = ("observations", "rewards", "terminals", "truncations", "masks")
# How long close() waits for actors to close their envs before killing them.
CLOSE_TIMEOUT_SECONDS = 5.0


class _RayWorker:
    """The actor: envs `[first_env, first_env + num_envs)` over one local Buffer."""

    def __init__(
        self,
        env_creator: EnvCreator,
        env_args: Sequence,
        env_kwargs: dict,
        spec: EnvSpec,
        num_envs: int,
    ):
        per = spec.num_agents
        self.buf = spec.allocate(num_envs * per)
        self.envs: list[PufferEnv] = []
        for k in range(num_envs):
            rows = self.buf.rows(k * per, (k + 1) * per)
            self.envs.append(env_creator(*env_args, buf=rows, **env_kwargs))
            spec.check(self.envs[-1], f"Ray actor for envs of {env_creator!r}")

    def node_id(self) -> str:
        import ray

        return ray.get_runtime_context().get_node_id()

    def reset(self, seeds: list[int | None]) -> tuple:
        infos: Infos = []
        for env, seed in zip(self.envs, seeds, strict=True):
            infos.extend(env.reset(seed)[-1])
        return self._result(infos)

    def step(self, actions: np.ndarray) -> tuple:
        self.buf.actions[...] = actions
        infos: Infos = []
        for env in self.envs:
            infos.extend(env.step(env.actions)[-1])
        return self._result(infos)

    def close(self) -> None:
        for env in self.envs:
            env.close()

    def _result(self, infos: Infos) -> tuple:
        buf, final = self.buf, None
        if buf.final_observations is not None:
            # Only the rows whose episode ended travel: the others hold stale data.
            ended = np.flatnonzero(buf.terminals | buf.truncations)
            final = (ended, buf.final_observations[ended])
        # Legal-action masks (when the env has them) change every step: all rows travel.
        return (*(getattr(buf, name) for name in _RESULT_NAMES), buf.action_masks, final, infos)


class Ray(Vectorizer):
    """Run each worker's envs in a Ray actor, anywhere on a Ray cluster.

    Arguments are those of `puffer.vector.make`, plus:

    - `ray_address`: passed to `ray.init` when Ray is not initialized yet: an existing
      cluster's `"host:port"` (or `"auto"`); None starts a local instance.
    - `num_cpus_per_worker`: CPUs Ray reserves per actor.
    - `resources_per_worker`: custom Ray resources per actor, e.g. `{"envs": 1}` to keep the
      actors on the nodes started with `ray start --resources '{"envs": 4}'`.
    - `spread`: place the actors with Ray's SPREAD strategy, across as many nodes as fit,
      instead of packing them onto the fewest.

    `node_ids` says where each actor landed. The env creator must be picklable by Ray
    (cloudpickle) and importable on every node; one probe env is built in the parent to
    learn the spaces. Results travel through the object store, so every batch is copied once
    into `self.buf`.

    Example:
        >>> import ray
        >>> from puffer.vector import Ray
        >>> ray.init(num_cpus=2)  # doctest: +SKIP
        >>> vec = Ray("gym-CartPole-v1", num_instances=4, num_workers=2)  # doctest: +SKIP
        >>> obs, infos = vec.reset(seed=0)  # doctest: +SKIP
    """

    workers_per_core = True  # each worker is a process (an actor): one per usable core

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
        ray_address: str | None = None,
        num_cpus_per_worker: float = 1,
        resources_per_worker: dict[str, float] | None = None,
        spread: bool = False,
        **renamed: Any,
    ):
        import ray

        self._ray = ray
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
        if not ray.is_initialized():
            ray.init(address=ray_address, include_dashboard=False)
        spec = self.spec
        self.buf = spec.allocate(self.num_agents)
        self._refs: dict[int, Any] = {}
        actor = ray.remote(
            num_cpus=num_cpus_per_worker,
            resources=dict(resources_per_worker or {}),
            scheduling_strategy="SPREAD" if spread else "DEFAULT",
        )(_RayWorker)
        self._actors = [
            actor.remote(
                self.env_creator, self.env_args, self.env_kwargs, spec, self.envs_per_worker
            )
            for _ in range(self.num_workers)
        ]
        try:
            self._node_ids = [self._get(w, a.node_id.remote()) for w, a in enumerate(self._actors)]
        except BaseException:
            self.close()
            raise

    @property
    def node_ids(self) -> list[str]:
        """The Ray node id (hex) of each worker's actor, in worker order."""
        return list(self._node_ids)

    def _start_reset(self, seeds: list[int | None]) -> None:
        # Steps still in flight must finish before their workers are reset.
        for w, ref in list(self._refs.items()):
            self._get(w, ref)
        self._pending.clear()
        for w, actor in enumerate(self._actors):
            envs = self._worker_envs(w)
            self._refs[w] = actor.reset.remote(seeds[envs.start : envs.stop])
        self._pending.extend(self._units)

    def _start_step(self, workers: tuple[int, ...]) -> None:
        per = self.agents_per_worker
        for w in workers:
            actions = self.buf.actions[w * per : (w + 1) * per]
            self._refs[w] = self._actors[w].step.remote(actions)
        self._queue(workers)

    def _wait(self) -> tuple[tuple[int, ...], Infos]:
        ray, ready = self._ray, set()
        while (workers := self._take_ready(ready.__contains__)) is None:
            waiting = [ref for w, ref in self._refs.items() if w not in ready]
            ray.wait(waiting, num_returns=1)
            # Sweep every result that is in by now, not only the one ray.wait returned.
            done, _ = ray.wait(waiting, num_returns=len(waiting), timeout=0)
            ready.update(w for w, ref in self._refs.items() if ref in done)
        infos: Infos = []
        per = self.agents_per_worker
        for w in workers:
            *arrays, action_masks, final, worker_infos = self._get(w, self._refs.pop(w))
            rows = self.buf.rows(w * per, (w + 1) * per)
            for name, array in zip(_RESULT_NAMES, arrays, strict=True):
                getattr(rows, name)[...] = array
            if action_masks is not None:
                rows.action_masks[...] = action_masks
            if final is not None:
                ended, observations = final
                rows.final_observations[ended] = observations
            infos.extend(worker_infos)
        return workers, infos

    def _shutdown(self) -> None:
        ray = self._ray
        actors = getattr(self, "_actors", [])
        try:
            ray.wait(
                [a.close.remote() for a in actors],
                num_returns=len(actors),
                timeout=CLOSE_TIMEOUT_SECONDS,
            )
        finally:
            for a in actors:
                ray.kill(a)
            getattr(self, "_refs", {}).clear()

    def _get(self, w: int, ref: Any) -> Any:
        """`ray.get` one worker's result, turning Ray's errors into WorkerError."""
        ray = self._ray
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as error:
            raise WorkerError(
                f"worker {w} (Ray actor) of {self!r} raised; its traceback follows. close() "
                "this vectorizer and fix the env",
                worker=w,
                remote_traceback=str(error),
            ) from None
        except ray.exceptions.RayActorError as error:
            raise WorkerError(
                f"worker {w} (Ray actor) of {self!r} died: {error}; close() this vectorizer "
                "and make a new one",
                worker=w,
            ) from None
