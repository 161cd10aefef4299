"""`EnvBuffers`: a native env's agents split into `vec.num_buffers` buffers stepped on
background threads, so one buffer's env steps while the trainer runs the next one's forward.

    recv()      buffer k's reply (waits for its step); buffers come round in order 0 .. K-1
    send(a)     steps every buffer received and not sent yet, each on a thread of its own

Buffer k is one env object of `env.num_envs / K` instances owning agent rows k*B .. (k+1)*B - 1
of the whole (B = num_agents / K); instance j of the whole is reset with seed + j, as
`puffer.vector` seeds its instances. An Ocean env's C step releases the GIL, so on the CPU it
runs on another core while torch computes the forward; on a GPU the forward runs on the device
meanwhile. With K = 2 in the trainer's loop:

    recv 0 | forward 0 | send 0 -> env 0 steps ............ | recv 0 | forward 0 | ...
                                   recv 1 | forward 1 | send 1 -> env 1 steps ...

The trainer holds each buffer's last reply of an iteration unsent until every buffer has sent
its own, then acts on all of them at once with the updated policy (`PuffeRL.collect`), so the
rollout rows are those of one env stepping every agent in lockstep.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
from gymnasium import spaces

from puffer.core import APIUsageError, PufferEnv
from puffer.core.vectorization import NATIVE_COUNT
from puffer.train.config import ConfigError

__all__ = ["EnvBuffers"]

Infos = list[dict[str, Any]]


class EnvBuffers:
    """`num_buffers` copies of a native env, each stepped on its own thread; the async API of
    a vecenv (`async_reset`, `recv`, `send`) over all their agents.

    Args:
        creator: the env's creator (`puffer.core.env_creator(name)`), called as
            `creator(**env_kwargs)` with `num_envs` divided by `num_buffers`.
        num_buffers: K, at least 1.
        env_kwargs: the env's keyword arguments for all agents; `num_envs` must be a multiple
            of K.
        name: how messages name the env.

    Raises:
        ConfigError: `env_kwargs["num_envs"]` is missing or not a multiple of K.

    Example:
        >>> import numpy as np
        >>> from puffer.core import env_creator
        >>> env = EnvBuffers(env_creator("squared"), 2, {"num_envs": 4})
        >>> env.async_reset(seed=0)
        >>> [int(env.recv()[5][0]) for _ in range(2)]  # the first agent row of each buffer
        [0, 2]
        >>> env.send(np.zeros(4, np.int32)); env.close()
    """

    def __init__(
        self,
        creator: Callable[..., PufferEnv],
        num_buffers: int,
        env_kwargs: dict[str, Any],
        name: str = "",
    ):
        self.env_name = name or getattr(creator, "__name__", type(creator).__name__)
        instances = env_kwargs.get(NATIVE_COUNT)
        if not isinstance(instances, int) or instances < 1 or instances % num_buffers:
            raise ConfigError(
                f"vec.num_buffers is {num_buffers} but env.num_envs is {instances!r} for env "
                f"{self.env_name!r}: each buffer is an env of env.num_envs / vec.num_buffers "
                f"instances; set env.num_envs to a multiple of {num_buffers} or vec.num_buffers "
                "to one of its divisors"
            )
        self.num_buffers = num_buffers
        self.instances_per_buffer = instances // num_buffers
        kwargs = {**env_kwargs, NATIVE_COUNT: self.instances_per_buffer}
        self.envs: list[PufferEnv] = []
        self.closed = False
        self._pool = ThreadPoolExecutor(num_buffers, thread_name_prefix="puffer-env-buffer")
        try:
            for _ in range(num_buffers):
                self.envs.append(creator(**kwargs))
        except BaseException:
            self.close()
            raise
        first = self.envs[0]
        self.agents_per_buffer = int(first.num_agents)
        self.num_agents = num_buffers * self.agents_per_buffer
        self.single_observation_space: spaces.Box = first.single_observation_space
        self.single_action_space: spaces.Space = first.single_action_space
        per = self.agents_per_buffer
        self._ids = [np.arange(k * per, (k + 1) * per) for k in range(num_buffers)]
        # Each buffer's reset or step in flight (its result ends with the infos), None once
        # received; `_unsent` are the received ones waiting for actions.
        self._running: list[Future | None] = [None] * num_buffers
        self._unsent: list[int] = []
        self._next = 0  # the buffer recv() returns next
        self._last = 0  # the buffer of the last recv(): final_observations and action_masks
        # Like its envs, it saves and restores its state (a checkpoint's) only if they all do.
        if all(hasattr(env, "save_state") for env in self.envs):
            self.save_state, self.load_state = self._save_state, self._load_state

    def async_reset(self, seed: int | None = None) -> None:
        """Start resetting every buffer (instance j of the whole gets `seed + j`)."""
        self._check_open("async_reset")
        for future in self._running:
            if future is not None:
                future.result()  # a step in flight writes the arrays the reset clears
        for k, env in enumerate(self.envs):
            env_seed = None if seed is None else seed + k * self.instances_per_buffer
            self._running[k] = self._pool.submit(env.reset, env_seed)
        self._unsent.clear()
        self._next = 0

    def recv(self) -> tuple:
        """Wait for the next buffer's reset or step and return its rows.

        Returns:
            `(observations, rewards, terminals, truncations, infos, agent_ids, masks)` of
            `agents_per_buffer` rows: views of that buffer's env arrays, valid until it is
            sent; agent_ids the (B,) int64 rows of the whole.

        Raises:
            APIUsageError: that buffer waits for its actions (send them first).
            Exception: whatever the env raised in its step (an action it refused, say).
        """
        self._check_open("recv")
        k = self._next
        future = self._running[k]
        if future is None:
            raise APIUsageError(
                f"recv() on {self!r}: buffer {k} waits for its actions; send() the actions "
                "of the buffers received (or async_reset()) first"
            )
        self._running[k] = None
        infos: Infos = future.result()[-1]
        self._unsent.append(k)
        self._next, self._last = (k + 1) % self.num_buffers, k
        env = self.envs[k]
        return (
            env.observations,
            env.rewards,
            env.terminals,
            env.truncations,
            infos,
            self._ids[k],
            env.masks,
        )

    def send(self, actions: np.ndarray) -> None:
        """Start stepping every buffer received and not sent yet, each on its thread.

        Args:
            actions: (B * buffers waiting, *act_shape): the waiting buffers' rows in agent-row
                order. Copied; each env checks its rows as its step starts, and `recv` raises
                what it refused.
        """
        self._check_open("send")
        waiting = sorted(self._unsent)
        rows = len(waiting) * self.agents_per_buffer
        if not waiting or len(actions) != rows:
            raise APIUsageError(
                f"send() on {self!r} got {len(actions)} action rows, but {len(waiting)} "
                f"buffers wait for {rows}; send one row per agent of the buffers received"
            )
        per = self.agents_per_buffer
        for i, k in enumerate(waiting):
            part = np.array(actions[i * per : (i + 1) * per])
            self._running[k] = self._pool.submit(self.envs[k].step, part)
        self._unsent.clear()

    @property
    def final_observations(self) -> np.ndarray | None:
        """The last received buffer's final observations (its env's array), or None."""
        return self.envs[self._last].final_observations

    @property
    def action_masks(self) -> np.ndarray | None:
        """The last received buffer's legal-action masks (its env's array), or None."""
        return self.envs[self._last].action_masks

    def _save_state(self) -> np.ndarray:
        """Every buffer's env state as one 1-D uint8 array: K little-endian int64 sizes, then
        each env's `save_state()`. Call it between iterations, when no buffer steps.

        Raises:
            APIUsageError: a buffer is stepping (its state would be half written).
        """
        self._check_open("save_state")
        stepping = [k for k, running in enumerate(self._running) if running is not None]
        if stepping:
            raise APIUsageError(
                f"save_state() on {self!r} while buffer {stepping[0]} steps; save between "
                "iterations, when every buffer waits for its actions"
            )
        parts = [np.asarray(env.save_state(), dtype=np.uint8) for env in self.envs]
        sizes = np.array([part.size for part in parts], "<i8").view(np.uint8)
        return np.concatenate([sizes, *parts])

    def _load_state(self, state: np.ndarray) -> None:
        """Restore what `save_state` returned; every buffer then waits for its actions, as at
        the iteration boundary where it was saved (the trainer acts on its held reply next).

        Raises:
            APIUsageError: `state` is not such an array for this many buffers (each env checks
                its own part too).
        """
        self._check_open("load_state")
        state, header = np.asarray(state), 8 * self.num_buffers
        fits = state.dtype == np.uint8 and state.ndim == 1 and state.size >= header
        sizes = np.ascontiguousarray(state[:header]).view("<i8") if fits else None
        # Each size within the array before they are summed: no overflow.
        if (
            sizes is None
            or not ((sizes >= 0) & (sizes <= state.size)).all()
            or int(sizes.sum()) != state.size - header
        ):
            raise APIUsageError(
                f"load_state() on {self!r} needs the 1-D uint8 array save_state() returned for "
                f"{self.num_buffers} buffers, got shape {state.shape} dtype {state.dtype}"
            )
        for k, running in enumerate(self._running):
            if running is not None:
                running.result()  # a reset in flight must not write over the loaded state
                self._running[k] = None
        parts = np.split(state[header:], np.cumsum(sizes)[:-1])
        for env, part in zip(self.envs, parts, strict=True):
            env.load_state(part)
        self._unsent = list(range(self.num_buffers))
        self._next = 0

    def close(self) -> None:
        """Wait for the steps in flight, then close every env. Idempotent."""
        if self.closed:
            return
        self.closed = True
        self._pool.shutdown(wait=True)
        for env in self.envs:
            env.close()

    def _check_open(self, call: str) -> None:
        if self.closed:
            raise APIUsageError(f"{call}() called on {self!r} after close(); make a new one")

    def __repr__(self) -> str:
        return (
            f"EnvBuffers(env={self.env_name!r}, num_buffers={self.num_buffers}, "
            f"num_agents={getattr(self, 'num_agents', '?')})"
        )
