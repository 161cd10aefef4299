"""`PufferEnv`: the base class of every natively vectorized environment.

A PufferEnv simulates `num_agents` agents and writes their data into the six arrays of the
buffer contract (`puffer.core.buffer`). Subclasses set `single_observation_space`,
`single_action_space` and `num_agents` before calling `super().__init__(buf)`, then implement
`_reset(seed)` and `_step()`, which read `self.actions` and write the other arrays in place.
Envs auto-reset: the step that ends an episode reports its final reward and terminal or
truncation flag, and the observation in that row is already the first of the next episode
(Gymnasium's `AutoresetMode.SAME_STEP`, which the trainer needs). An emulated Gymnasium env can
instead be built with `NEXT_STEP` for Gymnasium code that needs it (`autoreset_mode`).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from puffer.core.actions import action_checker, no_check, value_checker
from puffer.core.buffer import Buffer
from puffer.core.errors import APIUsageError
from puffer.core.vectorization import Vectorization

__all__ = ["PufferEnv"]

Infos = list[dict[str, Any]]


class PufferEnv:
    """Base class for envs that step many agents in one call over shared arrays.

    Attributes:
        single_observation_space: a `gymnasium.spaces.Box`; row shape and dtype of observations.
        single_action_space: `Discrete`, `MultiDiscrete` or float32 `Box`.
        num_agents: rows this env owns in the buffer.
        obs_layout / action_layout: a `puffer.core.Layout` when rows pack a structured space
            (emulated envs), else None.
        observations, actions, rewards, terminals, truncations, masks: the bound arrays.
        final_observations: the bound side array (N, *obs_shape), or None. When the env
            `writes_final_observations` (emulated Gymnasium/PettingZoo envs do), a step that
            ends a row's episode (terminal or truncated) writes that row's last observation
            here, since auto-reset already replaced it in `observations`; nothing is written
            on other rows or steps, which keep stale data. None for other envs, or when the
            given `buf` has no such array.
        action_masks: the bound (N, mask_width(single_action_space)) bool array of legal
            actions (True = legal) when the env `writes_action_masks`, else None. Rows whose
            `masks` entry is False (not acting this step) may hold anything, all False included.

    Example:
        >>> from puffer.core import GymnasiumPufferEnv
        >>> env = GymnasiumPufferEnv("CartPole-v1")
        >>> obs, infos = env.reset(seed=0)
        >>> obs.shape, obs.dtype
        ((1, 4), dtype('float32'))
        >>> obs, rewards, terminals, truncations, infos = env.step(np.zeros(1, np.int32))
        >>> rewards
        array([1.], dtype=float32)
        >>> env.close()
    """

    single_observation_space: spaces.Box
    single_action_space: spaces.Space
    num_agents: int = 1
    obs_layout: Any = None
    action_layout: Any = None
    render_mode: str | None = None
    # What a creator of this class makes ('native': it steps `num_envs` copies itself;
    # 'single': one env per object), declared by each family's base class and read by
    # `puffer.core.declared_vectorization`; the trainer picks the backend from it.
    vectorization: ClassVar[Vectorization]
    # Native envs that check action ranges themselves (in C) set this False; shape and dtype
    # are still checked by `step` on every call.
    check_action_ranges: bool = True
    # Envs that write `final_observations` (the last observation of an episode that ended this
    # step, before auto-reset replaced it) set this True; see `puffer.core.buffer`.
    writes_final_observations: bool = False
    # Envs that declare legal-action masks set this True and write `action_masks` on every
    # reset and step; see `puffer.core.buffer`.
    writes_action_masks: bool = False
    # When an ended episode's row gets its next first observation: in the step that ended it
    # (SAME_STEP, the buffer contract) or in the next step, whose action is then unused
    # (NEXT_STEP, offered by `GymnasiumPufferEnv` for Gymnasium's vector wrappers).
    autoreset_mode: AutoresetMode = AutoresetMode.SAME_STEP

    def __init__(self, buf: Buffer | None = None):
        name = type(self).__name__
        for attribute in ("single_observation_space", "single_action_space"):
            if not hasattr(self, attribute):
                raise APIUsageError(
                    f"{name} must set self.{attribute} before calling PufferEnv.__init__"
                )
        if not isinstance(self.single_observation_space, spaces.Box):
            raise APIUsageError(
                f"{name}.single_observation_space is {self.single_observation_space!r}; a "
                "PufferEnv observes a Box (pack structured spaces with GymnasiumPufferEnv)"
            )
        if not isinstance(self.num_agents, int | np.integer) or self.num_agents < 1:
            raise APIUsageError(f"{name}.num_agents is {self.num_agents!r}, expected an int >= 1")
        if buf is None:
            buf = Buffer.allocate(
                self.num_agents,
                self.single_observation_space,
                self.single_action_space,
                final_observations=self.writes_final_observations,
                action_masks=self.writes_action_masks,
            )
        else:
            buf.check(
                self.num_agents, self.single_observation_space, self.single_action_space, name
            )
        self.buf = buf
        self.observations = buf.observations
        self.actions = buf.actions
        self.rewards = buf.rewards
        self.terminals = buf.terminals
        self.truncations = buf.truncations
        self.masks = buf.masks
        self.final_observations = buf.final_observations if self.writes_final_observations else None
        if self.writes_action_masks and buf.action_masks is None:
            raise APIUsageError(
                f"{name} writes legal-action masks but the given buf has no action_masks; "
                "allocate it with Buffer.allocate(..., action_masks=True)"
            )
        self.action_masks = buf.action_masks if self.writes_action_masks else None
        self.observation_space = batch_space(self.single_observation_space, self.num_agents)
        self.action_space = batch_space(self.single_action_space, self.num_agents)
        self.agent_ids = np.arange(self.num_agents)
        self._pending: tuple | None = None
        # The one action check (puffer.core.actions), on every step: in full for arrays from
        # the caller, values only for the buffer itself (its shape and dtype are right).
        owner, space, n = self._action_owner(), self.single_action_space, self.num_agents
        ranges = self.check_action_ranges
        self._check_actions = action_checker(space, owner, ranges=ranges, num_rows=n)
        self._check_values = value_checker(space, owner, num_rows=n) if ranges else no_check
        # memoryview slice assignment exists for 1-D buffers only (one action per agent).
        self._actions_out = memoryview(self.actions) if self.actions.ndim == 1 else None
        # What the values-only check reads: a memoryview's tolist() is the cheapest.
        self._actions_in = self.actions if self._actions_out is None else self._actions_out
        self._has_reset = False
        self.closed = False

    # Subclass hooks -------------------------------------------------------------------------

    def _reset(self, seed: int | None) -> Infos:
        """Reset every agent, write observations (and clear rewards/flags); return infos."""
        raise NotImplementedError

    def _step(self) -> Infos:
        """Apply `self.actions`, write observations/rewards/flags in place; return infos."""
        raise NotImplementedError

    # Synchronous API ------------------------------------------------------------------------

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, Infos]:
        """Reset all agents. Returns `(observations, infos)`; observations is the bound array."""
        self._check_open("reset")
        infos = self._reset(seed)
        self._has_reset = True
        return self.observations, infos

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Infos]:
        """Step all agents with `actions` of shape (num_agents, *act_shape).

        Actions are checked on every call (`puffer.core.check_actions`: shape, dtype, and
        range and finiteness unless `check_action_ranges` is False), then copied into the
        bound `actions` array unless they already are that array.
        Returns `(observations, rewards, terminals, truncations, infos)`, the bound arrays
        themselves (no copy): read them before the next step.
        """
        if self.closed or not self._has_reset:
            self._check_open("step")
            raise APIUsageError(f"{self}: step() called before reset(); call reset(seed) first")
        out = self._actions_out
        if actions is self.actions:
            self._check_values(self._actions_in)
        elif out is not None:
            try:
                # A memoryview accepts only an array of the buffer's own shape and dtype, so
                # this one assignment checks both and copies; then only values are checked.
                out[:] = actions
            except (TypeError, ValueError):
                self._write_actions(actions)  # another dtype, shape or type
            else:
                self._check_values(out)
        else:
            self._write_actions(actions)
        infos = self._step()
        return self.observations, self.rewards, self.terminals, self.truncations, infos

    # Asynchronous API, so a single env is usable wherever a vectorizer is ---------------------

    def async_reset(self, seed: int | None = None) -> None:
        """Start a reset; collect it with `recv()`."""
        _, infos = self.reset(seed)
        self._pending = (self.observations, self.rewards, self.terminals, self.truncations, infos)

    def send(self, actions: np.ndarray) -> None:
        """Start a step; collect it with `recv()`."""
        if self._pending is not None:
            raise APIUsageError(f"{self}: send() called twice without recv(); call recv() first")
        self._pending = self.step(actions)

    def recv(self) -> tuple:
        """Finish the last `async_reset`/`send`.

        Returns `(observations, rewards, terminals, truncations, infos, agent_ids, masks)`.
        """
        if self._pending is None:
            raise APIUsageError(
                f"{self}: recv() called with nothing pending; call async_reset() or send() first"
            )
        result, self._pending = self._pending, None
        return (*result, self.agent_ids, self.masks)

    # Misc ---------------------------------------------------------------------------------

    def render(self) -> Any:
        """Return a frame (RGB uint8 array of shape (H, W, 3)) or text, per the env."""
        raise NotImplementedError(f"{type(self).__name__} does not render")

    def close(self) -> None:
        """Release the env's resources. Idempotent."""
        self.closed = True

    def _check_open(self, call: str) -> None:
        if self.closed:
            raise APIUsageError(f"{self}: {call}() called after close(); make a new env")

    def _action_owner(self) -> str:
        """How action errors name this env (a string: a closure must not hold `self`)."""
        return repr(self)

    def _write_actions(self, actions: Any) -> None:
        """Check `actions` in full and copy them into the buffer (unless they are the buffer)."""
        if actions is self.actions:
            self._check_values(self._actions_in)
            return
        if type(actions) is not np.ndarray:
            actions = np.asarray(actions)
        self._check_actions(actions)
        self.actions[...] = actions

    def __repr__(self) -> str:
        return f"{type(self).__name__}(num_agents={self.num_agents})"
