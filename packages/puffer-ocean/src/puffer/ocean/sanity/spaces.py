"""Spaces: structured Dict observations and actions on a native env, to test that a trainer
unpacks rows with `puffer.core.nativize` and packs Dict actions back."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
from gymnasium import spaces

from puffer.core import Buffer, nativize
from puffer.core.emulation import row_action_space, row_space
from puffer.core.layout import action_layout as pack_actions
from puffer.core.layout import observation_layout as pack_observations
from puffer.ocean.sanity.base import SanityEnv

__all__ = ["Spaces"]

IMAGE_SHAPE = (5, 5)
FLAT_SIZE = 5


class Spaces(SanityEnv):
    """Answer two yes/no questions about a structured observation, one per action key.

    Observation, a Dict in this key order (packed into one row of bytes, see `obs_layout`):
        image: (5, 5) float32 in [-1, 1]
        flat: (5,) int8, each -1 or 1
    Action, a Dict (packed into an int32 MultiDiscrete([2, 2]) row, see `action_layout`):
        image: Discrete(2), 1 iff image.sum() > 0
        flat: Discrete(2), 1 iff flat.sum() > 0
    Each right answer pays 0.5; every step is a whole (terminal) episode. A policy that reads
    both leaves scores 1, uniform answers 0.5.

    `single_observation_space` / `single_action_space` are the flat row spaces;
    `structured_observation_space` / `structured_action_space` are the Dicts, and
    `nativize(rows, env.obs_layout)` gives one view per key.

    Example:
        >>> env = Spaces(num_envs=2)
        >>> obs, _ = env.reset(seed=0)
        >>> view = nativize(obs, env.obs_layout)
        >>> list(view), view["image"].shape, view["flat"].dtype
        (['image', 'flat'], (2, 5, 5), dtype('int8'))
        >>> answer = nativize(env.actions, env.action_layout)
        >>> answer["image"][:] = view["image"].sum(axis=(1, 2)) > 0
        >>> answer["flat"][:] = view["flat"].sum(axis=1) > 0
        >>> env.step(env.actions)[1].tolist()
        [1.0, 1.0]
    """

    structured_observation_space = spaces.Dict(
        OrderedDict(
            image=spaces.Box(-1.0, 1.0, IMAGE_SHAPE, np.float32),
            flat=spaces.Box(-1, 1, (FLAT_SIZE,), np.int8),
        )
    )
    structured_action_space = spaces.Dict(
        OrderedDict(image=spaces.Discrete(2), flat=spaces.Discrete(2))
    )
    obs_layout = pack_observations(structured_observation_space)
    action_layout = pack_actions(structured_action_space)
    single_observation_space = row_space(obs_layout)
    single_action_space = row_action_space(action_layout)

    def __init__(self, num_envs: int = 1, buf: Buffer | None = None):
        super().__init__(num_envs, buf)
        # Zero-copy views of the rows, made once: writing them writes the buffer.
        self._obs = nativize(self.observations, self.obs_layout)
        self._answer = nativize(self.actions, self.action_layout)

    def _draw(self, rows: np.ndarray) -> None:
        count = int(rows.sum())
        image = self.rng.uniform(-1.0, 1.0, (count, *IMAGE_SHAPE)).astype(np.float32)
        flat = self.rng.choice(np.array([-1, 1], np.int8), (count, FLAT_SIZE))
        self._obs["image"][rows] = image
        self._obs["flat"][rows] = flat

    def _start(self, rows: np.ndarray) -> None:
        self._draw(rows)

    def _act(self) -> None:
        image_yes = self._obs["image"].sum(axis=(1, 2)) > 0
        flat_yes = self._obs["flat"].sum(axis=1, dtype=np.int64) > 0
        self.rewards[:] = 0.5 * (self._answer["image"] == image_yes)
        self.rewards += 0.5 * (self._answer["flat"] == flat_yes)
        self.terminals[:] = True
        self.truncations[:] = False
