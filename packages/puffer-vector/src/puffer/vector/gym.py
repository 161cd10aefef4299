"""`VectorEnv`: any puffer vectorizer seen as a Gymnasium `VectorEnv`.

Each agent row is one Gymnasium sub-env, so `num_envs` here is the vectorizer's `num_agents`.
Episodes auto-reset in the same step (Gymnasium's `AutoresetMode.SAME_STEP`, declared in
`metadata`): the step that ends an episode returns its final reward and flags with the first
observation of the next episode, and, as Gymnasium 1.x's SAME_STEP envs do, the episode's last
observation in `infos["final_obs"]` (an object array, None on other rows) with the row mask
`infos["_final_obs"]`; `infos["final_info"]` is an empty dict (puffer keeps no per-row env
infos) with its mask `infos["_final_info"]`. These keys are present only on steps where an
episode ended, and only for envs that write final observations (emulated Gymnasium and
PettingZoo envs; see `Vectorizer.final_observations`). Episode statistics arrive as
`infos["episodes"]`, a list of flat dicts.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector import VectorEnv as GymnasiumVectorEnv

from puffer.core import APIUsageError
from puffer.vector.base import Vectorizer

__all__ = ["VectorEnv"]


class VectorEnv(GymnasiumVectorEnv):
    """Wrap a synchronous puffer vectorizer (`batch_size == num_envs`) for Gymnasium code.

    Args:
        vec: the vectorizer; closed with this env.
        copy: return copies of the shared arrays (True, Gymnasium's default) or views that the
            next step overwrites (False, no copy).

    Example:
        >>> import numpy as np
        >>> from puffer.vector import make
        >>> from puffer.vector.gym import VectorEnv
        >>> envs = VectorEnv(make("gym-CartPole-v1", num_envs=4))
        >>> obs, infos = envs.reset(seed=0)
        >>> obs.shape, envs.single_action_space
        ((4, 4), Discrete(2))
        >>> obs, rewards, terminations, truncations, infos = envs.step(envs.action_space.sample())
        >>> envs.close()
    """

    def __init__(self, vec: Vectorizer, copy: bool = True):
        if vec.batch_size != vec.num_envs:
            raise APIUsageError(
                f"VectorEnv({vec!r}): Gymnasium steps every env at once, but batch_size="
                f"{vec.batch_size} < num_envs={vec.num_envs}; make it with batch_size=num_envs"
            )
        self.vec = vec
        self.copy = copy
        self.num_envs = vec.num_agents
        self.single_observation_space = vec.single_observation_space
        self.single_action_space = vec.single_action_space
        self.observation_space = vec.observation_space
        self.action_space = vec.action_space
        self.metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}
        self.render_mode = None
        self.closed = False

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every env (env i gets seed + i). `options` are not supported."""
        if options:
            raise APIUsageError(f"{self!r}: reset(options={options!r}) is not supported")
        super().reset(seed=seed)  # seeds Gymnasium's own np_random
        obs, infos = self.vec.reset(seed)
        return self._out(obs), {"episodes": infos}

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every env; returns `(obs, rewards, terminations, truncations, infos)`.

        Rewards come as float32 and both flags as bool, one row per agent. Where an episode
        ended, infos hold `final_obs` / `_final_obs` / `final_info` / `_final_info` as
        Gymnasium's SAME_STEP autoreset does (module docstring).
        """
        obs, rewards, terminals, truncations, episodes = self.vec.step(actions)
        infos: dict[str, Any] = {"episodes": episodes}
        final = self.vec.final_observations
        if final is not None:
            ended = terminals | truncations
            if ended.any():
                final_obs = np.full(self.num_envs, None, dtype=object)
                for row in np.flatnonzero(ended):
                    final_obs[row] = final[row].copy()
                infos.update(
                    final_obs=final_obs, _final_obs=ended, final_info={}, _final_info=ended.copy()
                )
        return (
            self._out(obs),
            self._out(rewards),
            self._out(terminals),
            self._out(truncations),
            infos,
        )

    def close_extras(self, **kwargs: Any) -> None:
        self.vec.close()

    def _out(self, array: np.ndarray) -> np.ndarray:
        return array.copy() if self.copy else array

    def __repr__(self) -> str:
        return f"VectorEnv({self.vec!r})"
