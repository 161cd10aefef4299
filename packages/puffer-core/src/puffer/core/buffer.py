"""The buffer contract: six contiguous arrays, one row per agent (DESIGN.md §2).

Every env, emulated or native, and every vectorizer reads and writes these arrays in place.
A vectorizer hands each env a row slice (a view) of one shared buffer, so observations travel
from env to trainer without a copy.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
from gymnasium import spaces

from puffer.core.errors import APIUsageError

__all__ = ["ARRAY_NAMES", "Buffer", "action_dtype"]

ARRAY_NAMES = ("observations", "actions", "rewards", "terminals", "truncations", "masks")


def action_dtype(space: spaces.Space) -> np.dtype:
    """The buffer dtype of an action space: int32 for Discrete/MultiDiscrete, float32 for Box."""
    if isinstance(space, spaces.Discrete | spaces.MultiDiscrete):
        return np.dtype(np.int32)
    if isinstance(space, spaces.Box):
        return np.dtype(np.float32)
    raise APIUsageError(
        f"action space {space!r} cannot live in a buffer; use Discrete, MultiDiscrete or a "
        "float32 Box (wrap structured spaces with puffer.core.GymnasiumPufferEnv)"
    )


@dataclass
class Buffer:
    """The six arrays of the buffer contract, for N agents.

    Attributes:
        observations: (N, *obs_shape), the observation space's dtype.
        actions: (N, *act_shape), int32 (Discrete/MultiDiscrete) or float32 (Box).
        rewards: (N,) float32.
        terminals: (N,) bool.
        truncations: (N,) bool.
        masks: (N,) bool, False for padded or absent agents.
    """

    observations: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    terminals: np.ndarray
    truncations: np.ndarray
    masks: np.ndarray

    @classmethod
    def allocate(
        cls, num_agents: int, observation_space: spaces.Box, action_space: spaces.Space
    ) -> Buffer:
        """Allocate zeroed arrays for `num_agents` rows of the given single-agent spaces."""
        return cls(
            observations=np.zeros(
                (num_agents, *observation_space.shape), dtype=observation_space.dtype
            ),
            actions=np.zeros((num_agents, *action_space.shape), dtype=action_dtype(action_space)),
            rewards=np.zeros(num_agents, dtype=np.float32),
            terminals=np.zeros(num_agents, dtype=bool),
            truncations=np.zeros(num_agents, dtype=bool),
            masks=np.ones(num_agents, dtype=bool),
        )

    def rows(self, start: int, stop: int) -> Buffer:
        """Row slice `[start, stop)` of every array, as views (no copy)."""
        return Buffer(*(getattr(self, name)[start:stop] for name in ARRAY_NAMES))

    @property
    def num_rows(self) -> int:
        return len(self.rewards)

    def check(
        self,
        num_agents: int,
        observation_space: spaces.Box,
        action_space: spaces.Space,
        owner: str,
    ) -> None:
        """Raise `APIUsageError` unless every array matches the contract for these spaces.

        Arrays must have exactly `num_agents` rows, the contract's trailing shape and dtype, and
        be C-contiguous (a row slice of a bigger contiguous array qualifies). Nothing is converted.
        """
        expected = Buffer.allocate(0, observation_space, action_space)
        for field in fields(self):
            array, want = getattr(self, field.name), getattr(expected, field.name)
            if not isinstance(array, np.ndarray):
                raise APIUsageError(
                    f"{owner}: buf.{field.name} is {type(array).__name__}, expected a numpy array"
                )
            shape = (num_agents, *want.shape[1:])
            if array.shape != shape or array.dtype != want.dtype:
                raise APIUsageError(
                    f"{owner}: buf.{field.name} has shape {array.shape} dtype {array.dtype}, "
                    f"expected shape {shape} dtype {want.dtype}; allocate it with "
                    "Buffer.allocate(num_agents, single_observation_space, single_action_space)"
                )
            if not array.flags.c_contiguous:
                raise APIUsageError(
                    f"{owner}: buf.{field.name} is not C-contiguous; pass a contiguous row slice"
                )
