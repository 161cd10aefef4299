"""`PufferEnv`: the base class of every natively vectorized environment.

A PufferEnv simulates `num_agents` agents and writes their data into the six arrays of the
buffer contract (`puffer.core.buffer`). Subclasses set `single_observation_space`,
`single_action_space` and `num_agents` before calling `super().__init__(buf)`, then implement
`_reset(seed)` and `_step()`, which read `self.actions` and write the other arrays in place.
Envs auto-reset: the step that ends an episode reports its final reward and terminal or
truncation flag, and the observation in that row is already the first of the next episode.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import batch_space

from puffer.core.buffer import Buffer
from puffer.core.errors import APIUsageError

__all__ = ["ACTION_CHECK_STEPS", "PufferEnv"]

# Discrete action ranges are validated on this many steps after construction; later steps
# check only shape and dtype (for 1-D actions, one memoryview assignment that also copies).
ACTION_CHECK_STEPS = 16

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
                self.num_agents, self.single_observation_space, self.single_action_space
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
        self.observation_space = batch_space(self.single_observation_space, self.num_agents)
        self.action_space = batch_space(self.single_action_space, self.num_agents)
        self.agent_ids = np.arange(self.num_agents)
        self._pending: tuple | None = None
        # Integer actions for discrete spaces, floats for Box; any width, cast on copy.
        self._action_kinds = "iu" if self.actions.dtype.kind in "iu" else "f"
        self._action_checks_left = ACTION_CHECK_STEPS
        # memoryview slice assignment exists for 1-D buffers only (one action per agent).
        self._actions_out = memoryview(self.actions) if self.actions.ndim == 1 else None
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

        Actions are copied into the bound `actions` array unless they already are that array.
        Returns `(observations, rewards, terminals, truncations, infos)`, the bound arrays
        themselves (no copy): read them before the next step.
        """
        if self.closed or not self._has_reset:
            self._check_open("step")
            raise APIUsageError(f"{self}: step() called before reset(); call reset(seed) first")
        if actions is not self.actions:
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

    def _write_actions(self, actions: Any) -> None:
        """Validate `actions` and copy them into the buffer.

        Shape and dtype kind are checked on every call; discrete ranges during the first
        `ACTION_CHECK_STEPS` calls, after which the step path stays lean.
        """
        if self._actions_out is not None and not self._action_checks_left:
            try:
                # A memoryview accepts only an array of the buffer's own shape and dtype, so
                # this one assignment is both the check and the copy of the common case.
                self._actions_out[:] = actions
                return
            except (TypeError, ValueError):
                pass  # another dtype, shape or type: validated (and cast) below
        if type(actions) is not np.ndarray:
            actions = np.asarray(actions)
        if actions.shape != self.actions.shape or actions.dtype.kind not in self._action_kinds:
            self._raise_bad_actions(actions)
        if self._action_checks_left:
            self._action_checks_left -= 1
            self._check_action_range(actions)
        self.actions[...] = actions

    def _raise_bad_actions(self, actions: np.ndarray) -> None:
        space = self.single_action_space
        if actions.shape != self.actions.shape:
            raise APIUsageError(
                f"{self}: actions have shape {actions.shape}, expected {self.actions.shape} "
                f"(num_agents={self.num_agents}, action space {space})"
            )
        kind = "integers" if self._action_kinds == "iu" else "floats"
        raise APIUsageError(
            f"{self}: actions have dtype {actions.dtype}, expected {kind} for {space}; "
            f"pass a {self.actions.dtype} array like env.actions"
        )

    def _check_action_range(self, actions: np.ndarray) -> None:
        space = self.single_action_space
        if not isinstance(space, spaces.Discrete | spaces.MultiDiscrete):
            return
        low = space.start
        high = space.start + (space.n if isinstance(space, spaces.Discrete) else space.nvec)
        bad = (actions < low) | (actions >= high)
        if bad.any():
            index = tuple(int(i) for i in np.argwhere(bad)[0])
            raise APIUsageError(
                f"{self}: action {actions[index]} at index {index} is outside {space}; "
                "clip or sample actions from the action space"
            )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(num_agents={self.num_agents})"
