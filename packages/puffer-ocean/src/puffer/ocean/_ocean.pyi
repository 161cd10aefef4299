"""Private compiled module: one vectorized class per C env header (csrc/binding.cpp).

Reach it through the `puffer.ocean` classes; tests check this stub against the module.
"""

from typing import Any

import numpy as np

__version__: str
ENVS: list[str]
# name -> the header's SPEC: doc, c_type, header, obs_dtype, obs_size, obs_low, obs_high,
# action_sizes, action_dim, action_low, action_high, config (name, type, default, min, max,
# doc per field), log_names, env_size, action_masks (whether the env writes legal-action
# masks), keys (the key map of `puffer play`: (key, head, value)
# triples; empty for a header without KEYS).
SPECS: dict[str, dict[str, Any]]

class _VecEnv:
    """Shared interface of every env class below (a stub-only base)."""

    def __init__(
        self,
        num_envs: int,
        config: dict[str, int | float],
        num_threads: int = 1,
    ) -> None: ...
    def bind(
        self,
        observations: np.ndarray,
        actions: np.ndarray,
        rewards: np.ndarray,
        terminals: np.ndarray,
        truncations: np.ndarray,
        action_masks: np.ndarray | None = None,
    ) -> None: ...
    def reset(self, seed: int) -> None: ...
    def step(self) -> None: ...
    def _step_unchecked(self) -> None: ...
    def log(self) -> dict[str, float]: ...
    def render(self, index: int = 0) -> np.ndarray: ...
    def save_state(self) -> np.ndarray: ...
    def load_state(self, state: np.ndarray) -> None: ...
    def close(self) -> None: ...
    num_threads: int
    @property
    def num_envs(self) -> int: ...
    @property
    def num_agents(self) -> int: ...
    @property
    def state_size(self) -> int: ...
    @property
    def closed(self) -> bool: ...

# One class per header in csrc/envs.h, named like its registry name (`squared`, `breakout`, ...),
# each with exactly _VecEnv's members; listed in ENVS, not here, so adding an env stays one line.
def __getattr__(name: str) -> type[_VecEnv]: ...
