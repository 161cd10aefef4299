"""The buffer contract: six contiguous arrays, one row per agent.

Every env, emulated or native, and every vectorizer reads and writes these arrays in place.
A vectorizer hands each env a row slice (a view) of one shared buffer, so observations travel
from env to trainer without a copy.

A seventh, optional side array, `final_observations` (same shape and dtype as
`observations`), receives the last observation of an episode that ended this step: auto-reset
has already replaced it in `observations`. It is written only on those rows (nothing is
copied on other steps); other rows hold stale data. Envs that write it declare
`PufferEnv.writes_final_observations`; buffers for other envs leave it None.

An eighth, optional array, `action_masks` (N, `mask_width(action_space)`) bool, says which
discrete actions are legal in each row now (True = legal), one column per choice of each
Discrete / MultiDiscrete branch, branches side by side. Envs that declare legal-action masks
(`PufferEnv.writes_action_masks`: turn-based PettingZoo games, Gymnasium envs with an
`action_mask` observation key or info entry, native envs) write it on every reset and step;
buffers for other envs leave it None, and the trainer's mask path is then off.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import batch_space

from puffer.core.errors import APIUsageError

__all__ = [
    "ACTION_MASKS",
    "ARRAY_NAMES",
    "FINAL_OBSERVATIONS",
    "Buffer",
    "action_dtype",
    "mask_width",
    "random_actions",
]

ARRAY_NAMES = ("observations", "actions", "rewards", "terminals", "truncations", "masks")
# The optional side array (see the module docstring).
FINAL_OBSERVATIONS = "final_observations"
# The optional legal-action masks (see the module docstring).
ACTION_MASKS = "action_masks"


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


def random_actions(space: spaces.Space, num_agents: int, count: int, seed: int) -> np.ndarray:
    """`count` batches of uniformly random actions for `num_agents` rows, drawn with `seed`.

    Returns:
        An array of shape (count, num_agents, *space.shape), dtype `action_dtype(space)`.

    Example:
        >>> random_actions(spaces.Discrete(3), num_agents=4, count=2, seed=0).shape
        (2, 4)
    """
    batched = batch_space(space, num_agents)
    batched.seed(seed)
    dtype = action_dtype(space)
    return np.stack([np.asarray(batched.sample(), dtype=dtype) for _ in range(count)])


def mask_width(space: spaces.Space) -> int:
    """Columns of an `action_masks` row: n for Discrete(n), sum(nvec) for MultiDiscrete.

    Raises:
        APIUsageError: the space is not discrete (Box actions have no legal-action mask).
    """
    if isinstance(space, spaces.Discrete):
        return int(space.n)
    if isinstance(space, spaces.MultiDiscrete):
        return int(np.asarray(space.nvec).sum())
    raise APIUsageError(
        f"action space {space!r} has no legal-action mask; masks need Discrete or MultiDiscrete "
        "actions"
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
        final_observations: (N, *obs_shape) like observations, or None: the final observation
            of rows whose episode ended this step (terminal or truncated); stale elsewhere.
        action_masks: (N, mask_width(action_space)) bool, True = legal, or None when the env
            declares no legal-action masks.
    """

    observations: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    terminals: np.ndarray
    truncations: np.ndarray
    masks: np.ndarray
    final_observations: np.ndarray | None = None
    action_masks: np.ndarray | None = None

    @classmethod
    def allocate(
        cls,
        num_agents: int,
        observation_space: spaces.Box,
        action_space: spaces.Space,
        final_observations: bool = False,
        action_masks: bool = False,
    ) -> Buffer:
        """Allocate zeroed arrays for `num_agents` rows of the given single-agent spaces.

        `final_observations` / `action_masks` also allocate the optional array of that name
        (else it is None); masks start all True (every action legal).
        """
        obs_shape = (num_agents, *observation_space.shape)
        return cls(
            observations=np.zeros(obs_shape, dtype=observation_space.dtype),
            actions=np.zeros((num_agents, *action_space.shape), dtype=action_dtype(action_space)),
            rewards=np.zeros(num_agents, dtype=np.float32),
            terminals=np.zeros(num_agents, dtype=bool),
            truncations=np.zeros(num_agents, dtype=bool),
            masks=np.ones(num_agents, dtype=bool),
            final_observations=(
                np.zeros(obs_shape, dtype=observation_space.dtype) if final_observations else None
            ),
            action_masks=(
                np.ones((num_agents, mask_width(action_space)), dtype=bool)
                if action_masks
                else None
            ),
        )

    @property
    def names(self) -> tuple[str, ...]:
        """The names of the arrays present: `ARRAY_NAMES`, plus the optional ones that are set."""
        optional = (FINAL_OBSERVATIONS, ACTION_MASKS)
        return ARRAY_NAMES + tuple(name for name in optional if getattr(self, name) is not None)

    def rows(self, start: int, stop: int) -> Buffer:
        """Row slice `[start, stop)` of every array, as views (no copy)."""
        return Buffer(**{name: getattr(self, name)[start:stop] for name in self.names})

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
        masks = isinstance(action_space, spaces.Discrete | spaces.MultiDiscrete)
        expected = Buffer.allocate(
            0, observation_space, action_space, final_observations=True, action_masks=masks
        )
        for field in fields(self):
            array, want = getattr(self, field.name), getattr(expected, field.name)
            if array is None and field.name in (FINAL_OBSERVATIONS, ACTION_MASKS):
                continue
            if want is None:
                raise APIUsageError(
                    f"{owner}: buf.{field.name} is given, but {action_space!r} has no "
                    "legal-action mask; leave it None"
                )
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
