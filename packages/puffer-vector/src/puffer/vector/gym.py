"""`VectorEnv`: any puffer vectorizer seen as a Gymnasium `VectorEnv`; `make` builds one.

Each agent row is one Gymnasium sub-env, so `num_envs` here is the vectorizer's `num_agents`.
Observations have the env's own structure: a Dict or Tuple observation (packed into one row
inside puffer) comes back as a dict or tuple of arrays, one per leaf (string leaves, which
puffer leaves out, excepted). Actions are puffer's action rows (`single_action_space`).
`render()` returns one frame per env with the Serial backend (envs made with
`render_mode="rgb_array"`), so `RecordVideo` and `HumanRendering` work there.
The autoreset mode is the envs' own (`metadata["autoreset_mode"]`):

- `SAME_STEP` (every puffer env): the step that ends an episode returns its final reward and
  flags with the first observation of the next episode and, as Gymnasium's SAME_STEP vector
  envs do, `infos["final_obs"]` (an object array holding the episode's last observation, None
  on other rows; only for envs that write final observations: emulated Gymnasium and
  PettingZoo envs) and `infos["final_info"]`, each with its row mask (`_final_obs`,
  `_final_info`).
- `NEXT_STEP` (emulated Gymnasium envs built for it, see `make`): that step returns the
  episode's last observation; the next step resets the row, leaves its action unused and
  returns reward 0 with both flags False. Gymnasium's `NormalizeObservation` needs this mode.

The info of a row whose episode ended holds `episode_return` and `episode_length` (its
undiscounted return and its steps, counted here from the rewards returned; masks
`_episode_return`, `_episode_length`): inside `final_info` for SAME_STEP, at the top of
`infos` for NEXT_STEP, where Gymnasium puts the final step's info. Every value in `infos` is
an array with a row mask, so `DictInfoToList` and the other vector wrappers read it. The
env's own per-episode statistics (puffer's flat dicts, e.g. an Ocean env's `score`) are in
`VectorEnv.episodes` after each step.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector import VectorEnv as GymnasiumVectorEnv
from gymnasium.vector.utils import batch_space

from puffer.core import APIUsageError, Leaf, gym_creator, nativize
from puffer.vector.base import Vectorizer
from puffer.vector.serial import Serial

__all__ = ["VectorEnv", "make"]

GYM_PREFIX = "gym-"


def make(
    env: str,
    num_instances: int,
    *,
    autoreset_mode: AutoresetMode = AutoresetMode.SAME_STEP,
    copy: bool = True,
    **vector_kwargs: Any,
) -> VectorEnv:
    """`puffer.vector.make(env, num_instances, **vector_kwargs)` as a Gymnasium `VectorEnv`.

    Args:
        env: a registered env name; for `NEXT_STEP`, a Gymnasium env as `gym-<id>`.
        num_instances: env copies (the `VectorEnv`'s `num_envs` is their rows, `num_agents`).
        autoreset_mode: `SAME_STEP` (any env) or `NEXT_STEP` (emulated Gymnasium envs, which
            can hold an ended episode for one step; native envs reset inside their step).
        copy: as for `VectorEnv`.
        **vector_kwargs: `puffer.vector.make`'s (backend, num_workers, seed, env_kwargs...).

    Raises:
        APIUsageError: NEXT_STEP asked of an env that is not a Gymnasium id.

    Example:
        >>> from gymnasium.vector import AutoresetMode
        >>> envs = make("gym-CartPole-v1", 2, autoreset_mode=AutoresetMode.NEXT_STEP)
        >>> envs.metadata["autoreset_mode"]
        <AutoresetMode.NEXT_STEP: 'NextStep'>
        >>> envs.close()
    """
    from puffer.vector import make as make_vectorizer

    creator: Any = env
    if autoreset_mode == AutoresetMode.NEXT_STEP:
        if not env.startswith(GYM_PREFIX):
            raise APIUsageError(
                f"autoreset_mode=NEXT_STEP for {env!r}: only emulated Gymnasium envs "
                "(gym-<id>) can hold an ended episode for a step; use AutoresetMode.SAME_STEP"
            )
        creator = gym_creator(env.removeprefix(GYM_PREFIX), autoreset_mode)
    elif autoreset_mode != AutoresetMode.SAME_STEP:
        raise APIUsageError(
            f"autoreset_mode={autoreset_mode!r}: use AutoresetMode.SAME_STEP or NEXT_STEP"
        )
    return VectorEnv(make_vectorizer(creator, num_instances, **vector_kwargs), copy=copy)


class VectorEnv(GymnasiumVectorEnv):
    """Wrap a synchronous puffer vectorizer (`instances_per_recv == num_instances`) for
    Gymnasium code.

    Args:
        vec: the vectorizer; closed with this env. Its envs' `autoreset_mode` is declared.
        copy: return copies of the shared arrays (True, Gymnasium's default) or views that the
            next step overwrites (False, no copy).

    Attributes:
        episodes: the env's own statistics of the episodes that ended in the last step, one
            flat dict each (puffer's infos; means over several episodes for native envs).

    Example:
        >>> import numpy as np
        >>> from puffer.vector import make
        >>> from puffer.vector.gym import VectorEnv
        >>> envs = VectorEnv(make("gym-CartPole-v1", num_instances=4))
        >>> obs, infos = envs.reset(seed=0)
        >>> obs.shape, envs.single_action_space
        ((4, 4), Discrete(2))
        >>> obs, rewards, terminations, truncations, infos = envs.step(envs.action_space.sample())
        >>> envs.close()
    """

    def __init__(self, vec: Vectorizer, copy: bool = True):
        if vec.instances_per_recv != vec.num_instances:
            raise APIUsageError(
                f"VectorEnv({vec!r}): Gymnasium steps every env at once, but instances_per_recv="
                f"{vec.instances_per_recv} < num_instances={vec.num_instances}; make it "
                "synchronous: leave puffer.vector.make's instances_per_recv at its default "
                "(num_instances)"
            )
        self.vec = vec
        self.copy = copy
        self.num_envs = vec.num_agents
        # Structured observations are read through the row layout (zero-copy views).
        self._layout = vec.obs_layout
        self.single_observation_space = (
            vec.single_observation_space if self._layout is None else _leaf_space(self._layout.tree)
        )
        self.single_action_space = vec.single_action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = vec.action_space
        self.autoreset_mode = vec.spec.autoreset_mode
        self.metadata: dict[str, Any] = {"autoreset_mode": self.autoreset_mode}
        self.render_mode = None
        if isinstance(vec, Serial):
            env = vec.envs[0]
            self.render_mode = env.render_mode
            # The wrapped Gymnasium env's render modes and frame rate, which RecordVideo and
            # HumanRendering read.
            own = getattr(getattr(env, "env", env), "metadata", None) or {}
            self.metadata["render_modes"] = list(own.get("render_modes", []))
            if "render_fps" in own:
                self.metadata["render_fps"] = own["render_fps"]
        self.closed = False
        self.episodes: list[dict[str, float]] = []
        # Running return and length of each row's current episode, for its final info.
        self._returns = np.zeros(self.num_envs, dtype=np.float64)
        self._lengths = np.zeros(self.num_envs, dtype=np.int64)
        # NEXT_STEP: rows whose previous step ended an episode (this step resets them).
        self._resetting = np.zeros(self.num_envs, dtype=bool)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every env (env i gets seed + i). `options` are not supported."""
        if options:
            raise APIUsageError(f"{self!r}: reset(options={options!r}) is not supported")
        super().reset(seed=seed)  # seeds Gymnasium's own np_random
        obs, self.episodes = self.vec.reset(seed)
        self._returns[:] = 0.0
        self._lengths[:] = 0
        self._resetting[:] = False
        return self._observations(obs), {}

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every env; returns `(obs, rewards, terminations, truncations, infos)`.

        Rewards come as float32 and both flags as bool, one row per agent. Where an episode
        ended, infos hold what the module docstring lists for the autoreset mode.
        """
        obs, rewards, terminals, truncations, self.episodes = self.vec.step(actions)
        # A NEXT_STEP reset step is no step of the new episode.
        counted = ~self._resetting
        self._returns += np.where(counted, rewards, 0.0)
        self._lengths += counted
        ended = terminals | truncations
        infos: dict[str, Any] = {}
        if ended.any():
            episode = {
                "episode_return": np.where(ended, self._returns, 0.0),
                "_episode_return": ended.copy(),
                "episode_length": np.where(ended, self._lengths, 0),
                "_episode_length": ended.copy(),
            }
            self._returns[ended] = 0.0
            self._lengths[ended] = 0
            if self.autoreset_mode == AutoresetMode.NEXT_STEP:
                infos.update(episode)
            else:
                infos.update(final_info=episode, _final_info=ended.copy())
                final = self.vec.final_observations
                if final is not None:
                    final_obs = np.full(self.num_envs, None, dtype=object)
                    for row in np.flatnonzero(ended):
                        final_obs[row] = _copied(self._native(final[row]))
                    infos.update(final_obs=final_obs, _final_obs=ended.copy())
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            self._resetting = ended
        return (
            self._observations(obs),
            self._out(rewards),
            self._out(terminals),
            self._out(truncations),
            infos,
        )

    def render(self) -> tuple[np.ndarray, ...] | None:
        """One frame per env, from each env's own `render()` (Serial backend only).

        Raises:
            APIUsageError: the envs live in worker processes (other backends).
        """
        if not isinstance(self.vec, Serial):
            raise APIUsageError(
                f"{self!r}: render() needs the envs in this process; make the vectorizer "
                "with backend='serial' and env_kwargs={'render_mode': 'rgb_array'}"
            )
        return tuple(env.render() for env in self.vec.envs)

    def close_extras(self, **kwargs: Any) -> None:
        self.vec.close()

    def _native(self, rows: np.ndarray) -> Any:
        return rows if self._layout is None else nativize(rows, self._layout)

    def _observations(self, rows: np.ndarray) -> Any:
        """Observation rows in the env's structure; copied if `copy`."""
        native = self._native(rows)
        return _copied(native) if self.copy else native

    def _out(self, array: np.ndarray) -> np.ndarray:
        return array.copy() if self.copy else array

    def __repr__(self) -> str:
        return f"VectorEnv({self.vec!r})"


def _leaf_space(tree: Any) -> spaces.Space:
    """The Gymnasium space of a layout tree: Dict / Tuple of the leaves' own spaces."""
    if isinstance(tree, Leaf):
        return tree.space
    if isinstance(tree, dict):
        return spaces.Dict({key: _leaf_space(sub) for key, sub in tree.items()})
    return spaces.Tuple(tuple(_leaf_space(sub) for sub in tree))


def _copied(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _copied(sub) for key, sub in value.items()}
    if isinstance(value, tuple):
        return tuple(_copied(sub) for sub in value)
    return value.copy()
