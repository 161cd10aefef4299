"""What every vectorizer shares: sizes, the call-order state machine, the action check, batches.

A vectorizer runs `num_instances` copies of one env, split across `num_workers` workers that
each own `envs_per_worker` consecutive envs and therefore a contiguous block of rows of one
`Buffer`. A batch is `instances_per_recv` envs, always a whole number of workers. (The sizes
are the `[vec]` config's names; `num_envs` and `batch_size`, their old names, are refused.)
Backends (`Serial`, `Multiprocessing`, `Ray`) implement four hooks: `_start_reset`,
`_start_step`, `_wait` and `_shutdown`; this class does the rest.

Call order (the `_expect` state machine):

    (new) --async_reset--> RECV --recv--> SEND --send--> RECV ...
    reset/async_reset are legal whenever no recv() is pending; close() always is;
    after a WorkerError only close() is.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from puffer.core import APIUsageError, Buffer, PufferEnv, WorkerError, usable_cores
from puffer.core import env_creator as registry_creator
from puffer.core.actions import action_checker

__all__ = ["RENAMED_KEYWORDS", "EnvSpec", "RecvResult", "Vectorizer", "refuse_renamed"]

Infos = list[dict[str, Any]]
RecvResult = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Infos, np.ndarray, np.ndarray]
EnvCreator = Callable[..., PufferEnv]

# The vectorizers' keywords renamed to the `[vec]` config's names, old: new. `num_envs` collided
# with an env's own `num_envs` (agents per Ocean instance, passed in `env_kwargs`), `batch_size`
# with the trainer's (agent steps per iteration).
RENAMED_KEYWORDS = {"num_envs": "num_instances", "batch_size": "instances_per_recv"}


def refuse_renamed(owner: str, kwargs: dict[str, Any]) -> None:
    """Raise `TypeError` for any keyword in `kwargs`: an old name names its new one.

    Args:
        owner: how the message names the call (`puffer.vector.make`, `Serial`).
        kwargs: the keywords the call did not take.
    """
    for old, new in RENAMED_KEYWORDS.items():
        if old in kwargs:
            raise TypeError(
                f"{owner}({old}=...) was renamed {new}, as [vec] {new} in the config (an env's "
                f"own keywords go in env_kwargs); pass {new}={kwargs[old]!r}"
            )
    if kwargs:
        raise TypeError(f"{owner}() got an unexpected keyword argument {next(iter(kwargs))!r}")


@dataclass(frozen=True)
class EnvSpec:
    """What a vectorizer must know about its env before it allocates memory.

    Learned from one probe env built in the parent with its own small buffer, then closed
    (`EnvSpec.probe`); every worker checks its envs against it.
    """

    num_agents: int
    single_observation_space: spaces.Box
    single_action_space: spaces.Space
    obs_layout: Any
    action_layout: Any
    final_observations: bool = False
    action_masks: bool = False
    autoreset_mode: AutoresetMode = AutoresetMode.SAME_STEP
    # How to run the env in an interpreter of its own (`puffer.vector.isolated.Launch`), for
    # envs whose packages conflict with the trainer's; None for envs that run in this one.
    isolated: Any = None

    @classmethod
    def of(cls, env: PufferEnv) -> EnvSpec:
        return cls(
            int(env.num_agents),
            env.single_observation_space,
            env.single_action_space,
            env.obs_layout,
            env.action_layout,
            bool(getattr(env, "writes_final_observations", False)),
            bool(getattr(env, "writes_action_masks", False)),
            env.autoreset_mode,
            getattr(env, "isolated", None),
        )

    def allocate(self, num_agents: int) -> Buffer:
        """A zeroed `Buffer` of `num_agents` rows for these envs (with `final_observations`
        and `action_masks` when they write them)."""
        return Buffer.allocate(
            num_agents,
            self.single_observation_space,
            self.single_action_space,
            final_observations=self.final_observations,
            action_masks=self.action_masks,
        )

    @classmethod
    def probe(cls, creator: EnvCreator, env_args: Sequence, env_kwargs: dict) -> EnvSpec:
        """Build one env with `buf=None`, read its spec and close it."""
        env = creator(*env_args, buf=None, **env_kwargs)
        try:
            if not isinstance(env, PufferEnv):
                raise APIUsageError(
                    f"env creator {creator!r} returned {type(env).__name__}, expected a "
                    "PufferEnv; wrap Gymnasium envs with puffer.core.GymnasiumPufferEnv"
                )
            return cls.of(env)
        finally:
            env.close()

    def check(self, env: PufferEnv, owner: str) -> None:
        """Raise `APIUsageError` unless `env` has this spec (envs of one vectorizer must match)."""
        actual = EnvSpec.of(env)
        names = (
            "num_agents",
            "single_observation_space",
            "single_action_space",
            "action_masks",
            "autoreset_mode",
        )
        for name in names:
            if getattr(actual, name) != getattr(self, name):
                raise APIUsageError(
                    f"{owner}: env {env!r} has {name}={getattr(actual, name)!r}, but the first "
                    f"env had {getattr(self, name)!r}; every env of a vectorizer must match"
                )


def default_num_workers(num_instances: int) -> int:
    """The largest divisor of `num_instances` not above the cores this process may use."""
    return max(
        d for d in range(1, min(num_instances, usable_cores()) + 1) if num_instances % d == 0
    )


class _Expect(enum.Enum):
    """The next legal call."""

    RESET = "async_reset() or reset()"
    SEND = "send() or step()"
    RECV = "recv()"
    FAILED = "close()"


class Vectorizer:
    """Base class of the vectorizers. Build one with `puffer.vector.make`.

    Attributes:
        num_instances: env copies ([vec] num_instances). num_workers: workers, each owning
            `envs_per_worker` envs.
        instances_per_recv: envs per `recv()` ([vec] instances_per_recv); `agents_per_batch`
            rows come back.
        agents_per_env: rows of one env. num_agents: rows in total
            (`num_instances * agents_per_env`).
        single_observation_space / single_action_space: one row's spaces.
        observation_space / action_space: one batch's spaces (`agents_per_batch` rows).
        obs_layout / action_layout: the env's `puffer.core.Layout` for packed spaces, or None.
        buf: the `Buffer` of all `num_agents` rows (shared memory for Multiprocessing).
        final_observations / action_masks: see the properties.
    """

    # Workers when none are asked for: in-process ones (Serial) cost nothing, one per instance;
    # a backend whose workers are processes sets this, for one per usable core.
    workers_per_core: ClassVar[bool] = False

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
        refuse_renamed(type(self).__name__, renamed)
        self.env_name = env_creator if isinstance(env_creator, str) else _name_of(env_creator)
        self.env_creator = (
            registry_creator(env_creator) if isinstance(env_creator, str) else env_creator
        )
        self.env_args = tuple(env_args)
        self.env_kwargs = dict(env_kwargs or {})
        if num_workers is None:
            # A bad num_instances falls through to _check_sizes, which names it.
            per_core = (
                self.workers_per_core and isinstance(num_instances, int) and num_instances >= 1
            )
            num_workers = default_num_workers(num_instances) if per_core else num_instances
        per_recv = num_instances if instances_per_recv is None else instances_per_recv
        self.num_instances, self.num_workers = num_instances, num_workers
        self.instances_per_recv = per_recv
        self._check_sizes()
        self.envs_per_worker = num_instances // num_workers
        self.workers_per_batch = per_recv // self.envs_per_worker
        self.zero_copy = zero_copy
        self.closed = False
        self._expect = _Expect.RESET
        self._next_seed = seed

        self.spec = EnvSpec.probe(self.env_creator, self.env_args, self.env_kwargs)
        self.agents_per_env = self.spec.num_agents
        self.agents_per_worker = self.envs_per_worker * self.agents_per_env
        self.num_agents = num_instances * self.agents_per_env
        self.agents_per_batch = per_recv * self.agents_per_env
        self.single_observation_space = self.spec.single_observation_space
        self.single_action_space = self.spec.single_action_space
        self.obs_layout, self.action_layout = self.spec.obs_layout, self.spec.action_layout
        self.observation_space = batch_space(self.single_observation_space, self.agents_per_batch)
        self.action_space = batch_space(self.single_action_space, self.agents_per_batch)
        self._action_shape = (self.agents_per_batch, *self.single_action_space.shape)
        # The one action check (puffer.core.check_actions), on every send.
        self._check_actions = action_checker(
            self.single_action_space, f"send() on {self!r}", num_rows=self.agents_per_batch
        )
        self._views: dict[tuple[int, ...], tuple] = {}
        # Units are what recv() hands out whole: with zero_copy the fixed contiguous groups of
        # a batch, else single workers (any ready ones fill a batch). Pending ones are in
        # flight, oldest first.
        wpb = self.workers_per_batch
        if zero_copy:
            self._units = [tuple(range(g, g + wpb)) for g in range(0, num_workers, wpb)]
        else:
            self._units = [(w,) for w in range(num_workers)]
        self._pending: deque[tuple[int, ...]] = deque()
        self._batch_workers: tuple[int, ...] = ()
        self._batch_rows: slice | np.ndarray = slice(0, 0)
        self.buf: Buffer

    # Backend hooks ---------------------------------------------------------------------------

    def _start_reset(self, seeds: list[int | None]) -> None:
        """Start resetting every worker; env i gets `seeds[i]`."""
        raise NotImplementedError

    def _start_step(self, workers: tuple[int, ...]) -> None:
        """Start stepping `workers`; their actions are already in `self.buf.actions`."""
        raise NotImplementedError

    def _wait(self) -> tuple[tuple[int, ...], Infos]:
        """Block until a batch of `workers_per_batch` workers is ready; return them and infos.

        The workers' rows of `self.buf` hold their results when this returns.
        """
        raise NotImplementedError

    def _shutdown(self) -> None:
        """Release workers and memory. Called once, by `close()`."""
        raise NotImplementedError

    # Asynchronous API -------------------------------------------------------------------------

    def async_reset(self, seed: int | None = None) -> None:
        """Start resetting every env; collect the first batch with `recv()`.

        Env i is reset with `seed + i`. Without a seed, the first reset uses the `seed` given to
        `make` and later ones leave the envs' generators running.
        """
        self._require((_Expect.RESET, _Expect.SEND), "async_reset")
        seed, self._next_seed = (self._next_seed if seed is None else seed), None
        seeds = [None if seed is None else seed + i for i in range(self.num_instances)]
        self._guard(self._start_reset, seeds)
        self._expect = _Expect.RECV

    def send(self, actions: np.ndarray) -> None:
        """Start stepping the envs of the last `recv()` batch with `actions`.

        Args:
            actions: (agents_per_batch, *act_shape), integers for Discrete/MultiDiscrete
                (inside the space), floats for Box. Copied into the shared actions rows.

        Raises:
            APIUsageError: out of order, or actions of the wrong shape or dtype, out of range
                or not finite (`puffer.core.check_actions`, every call; rows are the batch's).
        """
        self._require((_Expect.SEND,), "send")
        if type(actions) is not np.ndarray:
            actions = np.asarray(actions)
        self._check_actions(actions)
        self.buf.actions[self._batch_rows] = actions
        self._guard(self._start_step, self._batch_workers)
        self._expect = _Expect.RECV

    def recv(self) -> RecvResult:
        """Block until a batch is ready and return it.

        Returns:
            `(observations, rewards, terminals, truncations, infos, agent_ids, masks)`:
            arrays of `agents_per_batch` rows (shapes as in the buffer contract), infos a flat
            list of episode-stat dicts, agent_ids the int64 buffer rows of the batch. When the
            batch is a contiguous block of rows (always with `zero_copy`, or when it covers
            every env) the arrays are views of the shared buffer, valid until the next `send`;
            otherwise they are copies.

        Raises:
            WorkerError: a worker raised (its traceback is attached) or died.
        """
        self._require((_Expect.RECV,), "recv")
        workers, infos = self._guard(self._wait)
        self._expect = _Expect.SEND
        views = self._views.get(workers)
        if views is None:
            views = self._views[workers] = self._batch_views(workers)
        self._batch_workers, self._batch_rows = workers, views[0]
        obs, rewards, terminals, truncations, agent_ids, masks = views[1:]
        if not isinstance(self._batch_rows, slice):
            # Scattered workers (zero_copy=False): gather copies of their rows.
            rows = self._batch_rows
            obs, rewards, terminals, truncations, masks = (
                obs[rows],
                rewards[rows],
                terminals[rows],
                truncations[rows],
                masks[rows],
            )
        return obs, rewards, terminals, truncations, infos, agent_ids, masks

    @property
    def final_observations(self) -> np.ndarray | None:
        """The final observations of the last `recv()` batch, rows aligned with its rows.

        (agents_per_batch, *obs_shape), the observation dtype. Row i holds the last
        observation of the episode that ended on that row in that batch (where its
        `terminals` or `truncations` is True): auto-reset has already put the next episode's
        first observation in `observations`. Other rows hold stale data. Written by the envs
        only on those rows (shared memory for Multiprocessing; Ray ships only those rows), so
        it costs nothing on other steps. A view of the buffer for contiguous batches (valid
        until the next `send`), a copy otherwise. None when the env does not write final
        observations (`PufferEnv.writes_final_observations`; emulated Gymnasium and
        PettingZoo envs do).
        """
        final = self.buf.final_observations
        return None if final is None else final[self._batch_rows]

    @property
    def action_masks(self) -> np.ndarray | None:
        """The legal-action masks of the last `recv()` batch, rows aligned with its rows.

        (agents_per_batch, `puffer.core.mask_width(single_action_space)`) bool, True = legal,
        written by the envs on every step (shared memory for Multiprocessing; Ray ships them
        with the batch). A view of the buffer for contiguous batches (valid until the next
        `send`), a copy otherwise. None when the env declares no masks
        (`PufferEnv.writes_action_masks`).
        """
        masks = self.buf.action_masks
        return None if masks is None else masks[self._batch_rows]

    # Synchronous API --------------------------------------------------------------------------

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, Infos]:
        """Reset every env; returns `(observations, infos)` with all `num_agents` rows."""
        self._require((_Expect.RESET, _Expect.SEND), "reset")
        self._require_full_batch("reset")
        self.async_reset(seed)
        obs, _, _, _, infos, _, _ = self.recv()
        return obs, infos

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Infos]:
        """Step every env: `send(actions)` then `recv()`.

        Returns:
            `(observations, rewards, terminals, truncations, infos)`, views of the shared
            buffer of `num_agents` rows (no copy): read them before the next step.
        """
        self._require((_Expect.SEND,), "step")
        self._require_full_batch("step")
        self.send(actions)
        obs, rewards, terminals, truncations, infos, _, _ = self.recv()
        return obs, rewards, terminals, truncations, infos

    def close(self) -> None:
        """Stop the workers and free all memory. Idempotent; safe in any state."""
        if self.closed:
            return
        self.closed = True
        self._shutdown()

    def __enter__(self) -> Vectorizer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(env={self.env_name!r}, num_instances={self.num_instances}, "
            f"workers={self.num_workers}, instances_per_recv={self.instances_per_recv})"
        )

    # Helpers ----------------------------------------------------------------------------------

    def _check_sizes(self) -> None:
        n, w, b = self.num_instances, self.num_workers, self.instances_per_recv
        name = f"{type(self).__name__}(env={self.env_name!r})"
        if not (isinstance(n, int) and n >= 1):
            raise APIUsageError(f"{name}: num_instances={n!r}, expected an int >= 1")
        if not (isinstance(w, int) and 1 <= w <= n and n % w == 0):
            raise APIUsageError(
                f"{name}: num_workers={w!r} must divide num_instances={n} (each worker runs the "
                "same number of envs); pick a divisor of num_instances"
            )
        if not (isinstance(b, int) and 1 <= b <= n and n % b == 0 and b % (n // w) == 0):
            raise APIUsageError(
                f"{name}: instances_per_recv={b!r} must divide num_instances={n} and be a "
                f"multiple of envs_per_worker={n // w} (batches are whole workers); e.g. "
                f"instances_per_recv={n}"
            )

    def _require(self, legal: tuple[_Expect, ...], call: str) -> None:
        if self.closed:
            raise APIUsageError(f"{call}() called on {self!r} after close(); make a new one")
        if self._expect not in legal:
            reason = {
                _Expect.RESET: "before the first reset",
                _Expect.SEND: "after recv() (the batch waits for actions)",
                _Expect.RECV: "while a recv() is pending",
                _Expect.FAILED: "after a worker failed",
            }[self._expect]
            raise APIUsageError(
                f"{call}() called {reason} on {self!r}; call {self._expect.value} next"
            )

    def _require_full_batch(self, call: str) -> None:
        if self.instances_per_recv != self.num_instances:
            raise APIUsageError(
                f"{call}() on {self!r} returns all envs, but instances_per_recv="
                f"{self.instances_per_recv} < num_instances={self.num_instances}; use "
                "async_reset()/send()/recv()"
            )

    def _guard(self, hook: Callable, *args: Any) -> Any:
        """Run a backend hook; a WorkerError leaves the vectorizer usable only for close()."""
        try:
            return hook(*args)
        except WorkerError:
            self._expect = _Expect.FAILED
            raise

    def _batch_views(self, workers: tuple[int, ...]) -> tuple:
        """Rows (a slice when contiguous, else an index array) and the arrays to return."""
        per = self.agents_per_worker
        contiguous = workers == tuple(range(workers[0], workers[0] + len(workers)))
        if contiguous:
            rows = slice(workers[0] * per, (workers[-1] + 1) * per)
            agent_ids = np.arange(rows.start, rows.stop)
            buf = self.buf.rows(rows.start, rows.stop)
        else:
            rows = np.concatenate([np.arange(w * per, (w + 1) * per) for w in workers])
            agent_ids, buf = rows, self.buf
        return (
            rows,
            buf.observations,
            buf.rewards,
            buf.terminals,
            buf.truncations,
            agent_ids,
            buf.masks,
        )

    def _queue(self, workers: tuple[int, ...]) -> None:
        """Mark the workers of a batch as in flight."""
        if self.zero_copy:
            self._pending.append(workers)
        else:
            self._pending.extend((w,) for w in workers)

    def _take_ready(self, done: Callable[[int], bool]) -> tuple[int, ...] | None:
        """Take the oldest pending units that are `done` and fill a batch, or return None.

        Oldest first, so that no worker starves behind faster ones.
        """
        chosen, count = [], 0
        for unit in self._pending:
            if all(done(w) for w in unit):
                chosen.append(unit)
                count += len(unit)
                if count == self.workers_per_batch:
                    break
        else:
            return None
        for unit in chosen:
            self._pending.remove(unit)
        return chosen[0] if len(chosen) == 1 else tuple(sorted(w for u in chosen for w in u))

    def _worker_envs(self, worker: int) -> range:
        return range(worker * self.envs_per_worker, (worker + 1) * self.envs_per_worker)


def _name_of(creator: Any) -> str:
    return getattr(creator, "__name__", None) or getattr(
        getattr(creator, "func", None), "__name__", type(creator).__name__
    )
