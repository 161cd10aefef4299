"""Episode infos per key: return and length summed, numbers averaged, booleans kept last, with
a per-env override (puffer.core.episodes), through the real emulations."""

from __future__ import annotations

from typing import ClassVar

import gymnasium
import numpy as np
import pettingzoo
import pytest
from gymnasium import spaces

from puffer.core import APIUsageError, GymnasiumPufferEnv, PettingZooPufferEnv


class Highway(gymnasium.Env):
    """Three steps of reward 1, reporting a speed, a crash flag and a nested counter, as
    highway-env's infos do."""

    metadata: ClassVar[dict] = {}
    observation_space = spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1, np.float32), {}

    def step(self, action):
        self.t += 1
        info = {
            "speed": 10.0 * self.t,  # 10, 20, 30
            "crashed": self.t == 3,
            "rewards": {"collision": np.float32(-0.5 * (self.t == 3))},
            "action": np.array([action]),
            "label": "a string is no statistic",
        }
        return np.zeros(1, np.float32), 1.0, self.t == 3, False, info


class DeclaresItsOwn(Highway):
    metadata: ClassVar[dict] = {"puffer.info_reduce": {"speed": "last", "crashed": "sum"}}


def _episode(env: GymnasiumPufferEnv) -> dict[str, float]:
    env.reset(seed=0)
    for _ in range(2):
        assert env.step(np.ones(1, np.int32))[4] == []
    (stats,) = env.step(np.ones(1, np.int32))[4]
    env.close()
    return stats


def test_return_and_length_sum_numbers_average_and_flags_keep_their_last_value() -> None:
    stats = _episode(GymnasiumPufferEnv(Highway))
    assert stats == {
        "episode_return": 3.0,
        "episode_length": 3.0,
        "speed": 20.0,
        "crashed": 1.0,
        "rewards/collision": pytest.approx(-0.5 / 3),
        "action": 1.0,
    }


def test_an_env_overrides_the_reduction_per_key() -> None:
    stats = _episode(GymnasiumPufferEnv(Highway, info_reduce={"rewards/collision": "sum"}))
    assert stats["rewards/collision"] == -0.5 and stats["speed"] == 20.0
    # Declared by the env itself, and the argument over it for a key both name.
    stats = _episode(GymnasiumPufferEnv(DeclaresItsOwn, info_reduce={"crashed": "last"}))
    assert stats["speed"] == 30.0 and stats["crashed"] == 1.0


def test_an_unknown_reduction_is_refused_by_name() -> None:
    with pytest.raises(APIUsageError, match=r"info_reduce\['speed'\] is 'median'; use one of"):
        GymnasiumPufferEnv(Highway, info_reduce={"speed": "median"})


def test_the_pettingzoo_emulations_take_the_override() -> None:
    for env_type in ("parallel", "aec"):
        made = pettingzoo.make(env_type, "classic/rps-v2")
        env = PettingZooPufferEnv(made, info_reduce={"score": "sum"}, seed=0)
        assert env._info_reduce == {"score": "sum"}
        env.close()
    with pytest.raises(APIUsageError, match="use one of mean, last, sum"):
        PettingZooPufferEnv(pettingzoo.make("aec", "classic/rps-v2"), info_reduce={"x": "max"})
