"""puffer.core: the buffer contract, PufferEnv, emulation of Gymnasium/PettingZoo envs, make()."""

from __future__ import annotations

from puffer.core.actions import action_checker, check_actions
from puffer.core.buffer import ARRAY_NAMES, Buffer, action_dtype, mask_width, random_actions
from puffer.core.emulation import GymnasiumPufferEnv
from puffer.core.env import PufferEnv
from puffer.core.errors import (
    APIUsageError,
    EmulationError,
    EnvNotFoundError,
    MissingPackageError,
    PufferError,
    WorkerError,
)
from puffer.core.layout import Layout, Leaf, action_layout, nativize, observation_layout
from puffer.core.machine import slot_env, usable_cores
from puffer.core.pettingzoo import PettingZooPufferEnv, emulate_pettingzoo
from puffer.core.registry import (
    ENTRY_POINT_GROUP,
    env_creator,
    gym_creator,
    make,
    ours_for_pufferlib_name,
    registered_envs,
    resolve_gym_id,
)
from puffer.core.vectorization import Vectorization, declared_vectorization

__version__ = "0.1.0"

__all__ = [
    "ARRAY_NAMES",
    "ENTRY_POINT_GROUP",
    "APIUsageError",
    "Buffer",
    "EmulationError",
    "EnvNotFoundError",
    "GymnasiumPufferEnv",
    "Layout",
    "Leaf",
    "MissingPackageError",
    "PettingZooPufferEnv",
    "PufferEnv",
    "PufferError",
    "Vectorization",
    "WorkerError",
    "action_checker",
    "action_dtype",
    "action_layout",
    "check_actions",
    "declared_vectorization",
    "emulate_pettingzoo",
    "env_creator",
    "gym_creator",
    "make",
    "mask_width",
    "nativize",
    "observation_layout",
    "ours_for_pufferlib_name",
    "random_actions",
    "registered_envs",
    "resolve_gym_id",
    "slot_env",
    "usable_cores",
]
