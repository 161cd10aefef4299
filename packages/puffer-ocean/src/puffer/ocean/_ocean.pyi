"""Private compiled module: one vectorized class per C env header (csrc/binding.cpp).

Reach it through the `puffer.ocean` classes; tests check this stub against the module.
"""

import numpy as np

__version__: str
OPENMP: bool
ENVS: list[str]

class _VecEnv:
    """Shared interface of every env class below (a stub-only base)."""

    def __init__(
        self,
        num_envs: int,
        config: dict[str, int | float],
        observations: np.ndarray,
        actions: np.ndarray,
        rewards: np.ndarray,
        terminals: np.ndarray,
        truncations: np.ndarray,
        num_threads: int = 1,
    ) -> None: ...
    def reset(self, seed: int) -> None: ...
    def step(self) -> None: ...
    def log(self) -> dict[str, float]: ...
    def render(self, index: int = 0) -> np.ndarray: ...
    def close(self) -> None: ...
    num_threads: int
    @property
    def num_envs(self) -> int: ...
    @property
    def num_agents(self) -> int: ...
    @property
    def closed(self) -> bool: ...

class squared(_VecEnv): ...
