"""GymnasiumPufferEnv against the raw Gymnasium env: same seeds, same actions, same results."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from puffer.core import APIUsageError, Buffer, GymnasiumPufferEnv
from puffer.core.emulation import CHECK_STEPS
from puffer.core.testing import (
    ACTION_CATALOG,
    OBSERVATION_CATALOG,
    SpaceEnv,
    assert_gymnasium_equivalence,
)


@pytest.mark.parametrize(
    "env_id", ["CartPole-v1", "MountainCarContinuous-v0", "Blackjack-v1", "Taxi-v4"]
)
def test_gymnasium_equivalence(env_id: str) -> None:
    episodes = assert_gymnasium_equivalence(lambda: gymnasium.make(env_id), steps=1000)
    assert episodes, f"{env_id}: 1,000 random steps should finish at least one episode"


@pytest.mark.parametrize("obs_name", list(OBSERVATION_CATALOG))
def test_observation_catalog_equivalence(obs_name: str) -> None:
    space = OBSERVATION_CATALOG[obs_name]
    assert_gymnasium_equivalence(lambda: SpaceEnv(space, spaces.Discrete(3)), steps=1000)


@pytest.mark.parametrize("action_name", list(ACTION_CATALOG))
def test_action_catalog_equivalence(action_name: str) -> None:
    space = ACTION_CATALOG[action_name]
    assert_gymnasium_equivalence(lambda: SpaceEnv(OBSERVATION_CATALOG["nested"], space), steps=1000)


def test_row_spaces() -> None:
    env = GymnasiumPufferEnv("CartPole-v1")
    assert env.single_observation_space == gymnasium.make("CartPole-v1").observation_space
    assert env.single_action_space == spaces.Discrete(2)
    assert env.obs_layout is None and env.action_layout is None
    mixed = GymnasiumPufferEnv(
        SpaceEnv, (OBSERVATION_CATALOG["nested"], ACTION_CATALOG["dict-mixed"])
    )
    assert mixed.single_observation_space.dtype == np.uint8
    assert mixed.single_action_space.dtype == np.float32
    assert mixed.single_action_space.shape == (6,)
    # Discrete leaves of a float row are zero-based indices: move has 4 choices -> [0, 3].
    assert mixed.single_action_space.low[0] == 0 and mixed.single_action_space.high[0] == 3
    discrete = GymnasiumPufferEnv(
        SpaceEnv, (OBSERVATION_CATALOG["box"], ACTION_CATALOG["dict-discrete"])
    )
    assert discrete.single_action_space == spaces.MultiDiscrete([4, 2, 2])
    assert discrete.actions.dtype == np.int32


def test_constructor_forms() -> None:
    by_id = GymnasiumPufferEnv("CartPole-v1", env_kwargs={"sutton_barto_reward": True})
    assert by_id.env.unwrapped._sutton_barto_reward
    by_class = GymnasiumPufferEnv(SpaceEnv, env_args=(spaces.Discrete(2), spaces.Discrete(2)))
    by_creator = GymnasiumPufferEnv(lambda: SpaceEnv(spaces.Discrete(2), spaces.Discrete(2)))
    by_instance = GymnasiumPufferEnv(SpaceEnv(spaces.Discrete(2), spaces.Discrete(2)))
    for env in (by_id, by_class, by_creator, by_instance):
        obs, infos = env.reset(seed=3)
        assert obs.shape == (1, *env.single_observation_space.shape) and infos == []


def test_binds_to_a_given_buffer_row() -> None:
    probe = GymnasiumPufferEnv("CartPole-v1")
    big = Buffer.allocate(3, probe.single_observation_space, probe.single_action_space)
    env = GymnasiumPufferEnv("CartPole-v1", buf=big.rows(1, 2))
    env.reset(seed=0)
    assert np.any(big.observations[1] != 0) and not np.any(big.observations[[0, 2]])
    big.actions[1] = 1
    env.step(env.actions)
    assert big.rewards[1] == 1.0


def test_episode_stats_average_numeric_infos() -> None:
    # Per step: hits 1, bonus 0.5; an episode's value is their mean (puffer.core.episodes).
    env = GymnasiumPufferEnv(SpaceEnv, (spaces.Discrete(2), spaces.Discrete(2)), seed=0)
    env.reset()
    finished = []
    for _ in range(200):
        finished += env.step(np.zeros(1, np.int32))[4]
    assert finished
    for stats in finished:
        assert set(stats) == {"episode_return", "episode_length", "hits", "bonus"}
        assert stats["hits"] == 1.0
        assert stats["bonus"] == pytest.approx(0.5)
        assert all(type(value) is float for value in stats.values())


def test_constructor_seed_applies_to_the_first_unseeded_reset() -> None:
    seeded = GymnasiumPufferEnv("CartPole-v1", seed=3)
    obs, _ = seeded.reset()
    reference, _ = GymnasiumPufferEnv("CartPole-v1").reset(seed=3)
    np.testing.assert_array_equal(obs, reference)


def test_async_api_matches_step() -> None:
    env = GymnasiumPufferEnv("CartPole-v1")
    env.async_reset(seed=0)
    obs, _, _, _, infos, agent_ids, masks = env.recv()
    assert obs.shape == (1, 4) and agent_ids.tolist() == [0] and masks.tolist() == [True]
    assert infos == []
    env.send(np.ones(1, np.int32))
    _, rewards, terminals, truncations, infos, _, _ = env.recv()
    assert rewards.tolist() == [1.0] and not terminals[0] and not truncations[0]
    assert infos == []


def test_actions_of_other_integer_types_are_cast() -> None:
    env = GymnasiumPufferEnv("CartPole-v1")
    env.reset(seed=0)
    for _ in range(CHECK_STEPS + 2):  # past the checked steps, onto the memoryview fast path
        env.step(np.ones(1, np.int32))
    env.step(np.zeros(1, np.int64))
    assert env.actions.tolist() == [0]
    env.step([1])
    assert env.actions.tolist() == [1]


def test_next_step_autoreset_holds_the_last_observation_for_one_step() -> None:
    env = GymnasiumPufferEnv(
        "CartPole-v1", env_kwargs={"max_episode_steps": 3}, autoreset_mode=AutoresetMode.NEXT_STEP
    )
    raw = gymnasium.make("CartPole-v1", max_episode_steps=3)
    obs, _ = env.reset(seed=4)
    raw_obs, _ = raw.reset(seed=4)
    action = np.zeros(1, np.int32)
    for _ in range(3):
        obs, rewards, terminals, truncations, infos = env.step(action)
        raw_obs, *_ = raw.step(0)
    # The step that ends the episode shows its last observation, not the next first one.
    np.testing.assert_array_equal(obs[0], raw_obs)
    assert truncations[0] and infos == [{"episode_return": 3.0, "episode_length": 3.0}]
    obs, rewards, terminals, truncations, infos = env.step(action)
    raw_obs, _ = raw.reset()
    np.testing.assert_array_equal(obs[0], raw_obs)
    assert rewards[0] == 0 and not terminals[0] and not truncations[0] and infos == []
    with pytest.raises(APIUsageError, match=r"autoreset_mode=.*DISABLED.*use AutoresetMode"):
        GymnasiumPufferEnv("CartPole-v1", autoreset_mode=AutoresetMode.DISABLED)
