"""`VecEnv`: any puffer vectorizer as a Stable-Baselines3 `VecEnv` (the `[sb3]` extra).

Each agent row is one SB3 env, so `num_envs` here is the vectorizer's `num_agents`.
`step_async` is the vectorizer's `send` and `step_wait` its `recv`, so the workers step while
SB3 does its own bookkeeping. Episodes auto-reset in the same step, as SB3 expects: on a row
whose episode ended, `dones` is True, the observation is already the next episode's first and
the info dict holds `terminal_observation` (the episode's last observation, from
`Vectorizer.final_observations`) and `TimeLimit.truncated` (truncated and not terminal), from
which SB3's PPO/A2C bootstrap truncated episodes. Wrap it in SB3's `VecMonitor` for episode
returns in SB3's logs and `evaluate_policy`.

Example:
    >>> from stable_baselines3 import PPO
    >>> from stable_baselines3.common.vec_env import VecMonitor
    >>> from puffer.vector import make
    >>> from puffer.vector.sb3 import VecEnv
    >>> env = VecMonitor(VecEnv(make("gym-CartPole-v1", 8, backend="multiprocessing")))
    >>> model = PPO("MlpPolicy", env, seed=0).learn(2048)  # doctest: +SKIP
    >>> env.close()
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import gymnasium
import numpy as np
from stable_baselines3.common import env_util
from stable_baselines3.common.vec_env import base_vec_env

from puffer.core import APIUsageError
from puffer.vector.base import Vectorizer
from puffer.vector.serial import Serial

__all__ = ["VecEnv"]


class VecEnv(base_vec_env.VecEnv):
    """Wrap a synchronous puffer vectorizer (`instances_per_recv == num_instances`) for
    Stable-Baselines3 (whose `num_envs` is the vectorizer's rows, `num_agents`).

    Args:
        vec: any backend (Serial, Multiprocessing, Ray); closed with this env.

    Observations are copies (SB3 keeps the last one across a step), one row per agent, of the
    vectorizer's row space (packed structured spaces stay packed: SB3 sees a Box). Actions go
    through puffer's action check (`puffer.core.check_actions`): SB3's PPO clips Box actions
    to the space before stepping, as the check expects.

    `seed(s)` then `reset()` resets env i with `s + i`; `get_attr`, `set_attr`, `env_method`
    and `env_is_wrapped` reach the wrapped Gymnasium envs with the Serial backend (the envs
    live in this process); with other backends only `get_attr("render_mode")` is answered
    (None) and `env_is_wrapped` says False, since the envs live in other processes.

    Raises:
        APIUsageError: a vectorizer with `instances_per_recv < num_instances`, per-env seeds that are not
            `s + i`, reset options, or an env method/attribute with a non-Serial backend.
    """

    def __init__(self, vec: Vectorizer):
        if vec.instances_per_recv != vec.num_instances:
            raise APIUsageError(
                f"sb3.VecEnv({vec!r}): SB3 steps every env at once, but instances_per_recv="
                f"{vec.instances_per_recv} < num_instances={vec.num_instances}; make it "
                "synchronous: leave puffer.vector.make's instances_per_recv at its default "
                "(num_instances)"
            )
        self.vec = vec
        super().__init__(vec.num_agents, vec.single_observation_space, vec.single_action_space)

    # The SB3 VecEnv API ------------------------------------------------------------------------

    def reset(self) -> np.ndarray:
        """Reset every env (with the seeds of `seed()`, if called); returns observations."""
        if any(self._options):
            raise APIUsageError(f"{self!r}: reset options {self._options} are not supported")
        seed = self._seeds[0]
        if seed is not None and list(self._seeds) != [seed + i for i in range(self.num_envs)]:
            raise APIUsageError(
                f"{self!r}: per-env seeds {self._seeds}; puffer seeds env i with seed + i, so "
                "call seed(s) with one int"
            )
        obs, _ = self.vec.reset(seed)
        self._reset_seeds()
        self._reset_options()
        return obs.copy()

    def step_async(self, actions: np.ndarray) -> None:
        """Send `actions` (one row per env) to the vectorizer; the envs step meanwhile."""
        self.vec.send(np.asarray(actions))

    def step_wait(self) -> base_vec_env.VecEnvStepReturn:
        """Wait for the step; returns `(obs, rewards, dones, infos)` as SB3 defines them."""
        obs, rewards, terminals, truncations, _, _, _ = self.vec.recv()
        dones = terminals | truncations
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            final = self.vec.final_observations
            for row in np.flatnonzero(dones).tolist():
                info = infos[row]
                if final is None:
                    # No final observation: SB3 must treat the row as terminal.
                    info["TimeLimit.truncated"] = False
                    continue
                info["terminal_observation"] = final[row].copy()
                info["TimeLimit.truncated"] = bool(truncations[row] and not terminals[row])
        return obs.copy(), rewards.astype(np.float32), dones, infos

    def close(self) -> None:
        """Close the vectorizer (its workers and shared memory)."""
        self.vec.close()

    def get_attr(self, attr_name: str, indices: base_vec_env.VecEnvIndices = None) -> list[Any]:
        """An attribute of the wrapped env of each row (Serial), or `render_mode` (None)."""
        rows = list(self._get_indices(indices))
        if not isinstance(self.vec, Serial) and attr_name == "render_mode":
            return [None] * len(rows)
        return [
            _wrapper_attr(env, attr_name) for env in self._envs(rows, f"get_attr({attr_name!r})")
        ]

    def set_attr(
        self, attr_name: str, value: Any, indices: base_vec_env.VecEnvIndices = None
    ) -> None:
        """Set an attribute of the wrapped env of each row (Serial backend only)."""
        for env in self._envs(self._get_indices(indices), f"set_attr({attr_name!r})"):
            setattr(getattr(env, "env", env), attr_name, value)

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: base_vec_env.VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        """Call a method of the wrapped env of each row (Serial backend only)."""
        envs = self._envs(self._get_indices(indices), f"env_method({method_name!r})")
        return [_wrapper_attr(env, method_name)(*method_args, **method_kwargs) for env in envs]

    def env_is_wrapped(
        self, wrapper_class: type[gymnasium.Wrapper], indices: base_vec_env.VecEnvIndices = None
    ) -> list[bool]:
        """Whether each row's Gymnasium env is wrapped in `wrapper_class` (False if unknown)."""
        rows = list(self._get_indices(indices))
        if not isinstance(self.vec, Serial):
            return [False] * len(rows)
        return [
            env_util.is_wrapped(env.env, wrapper_class) if hasattr(env, "env") else False
            for env in self._envs(rows, "env_is_wrapped")
        ]

    def get_images(self) -> Sequence[np.ndarray | None]:
        """One frame per env (Serial backend, envs made with render_mode="rgb_array")."""
        envs = self._envs(range(self.num_envs), "get_images")
        return [env.render() for env in envs]

    # Helpers ------------------------------------------------------------------------------------

    def _envs(self, rows: Iterable[int], call: str) -> list[Any]:
        """The puffer env of each row (Serial only: other backends' envs are remote)."""
        if not isinstance(self.vec, Serial):
            raise APIUsageError(
                f"{self!r}: {call} needs the envs in this process; make the vectorizer with "
                "backend='serial' (envs of other backends live in worker processes)"
            )
        per = self.vec.agents_per_env
        return [self.vec.envs[row // per] for row in rows]

    def __repr__(self) -> str:
        return f"sb3.VecEnv({self.vec!r})"


def _wrapper_attr(env: Any, name: str) -> Any:
    """`name` of a puffer env's wrapped Gymnasium env (through its wrappers), else of `env`."""
    wrapped = getattr(env, "env", None)
    if wrapped is not None and hasattr(wrapped, "get_wrapper_attr"):
        try:
            return wrapped.get_wrapper_attr(name)
        except AttributeError:
            pass
    return getattr(env, name)
