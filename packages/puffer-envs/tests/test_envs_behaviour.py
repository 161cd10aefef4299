"""What each family's preprocessing promises: Atari's episodic life and game stats, MiniGrid's
success stat, Crafter's achievements, MinAtar's truncation, pistonball's stacked frames."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from puffer.core import APIUsageError, make
from puffer.envs import (
    AtariEnv,
    CrafterEnv,
    MinAtarEnv,
    MiniGridEnv,
    crafter_score,
    run_success_rates,
)


def _run(env, steps: int, seed: int = 0) -> tuple[list[dict], int]:
    """Random actions for `steps` steps: (episode infos, number of terminal rows seen)."""
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    infos, terminals = [], 0
    for _ in range(steps):
        actions = rng.integers(0, env.single_action_space.n, env.num_agents).astype(np.int32)
        _, _, term, _, step_infos = env.step(actions)
        infos += step_infos
        terminals += int(term.sum())
    return infos, terminals


def test_atari_life_loss_is_terminal_but_the_game_goes_on() -> None:
    env = AtariEnv("breakout", num_envs=2, num_threads=1)
    infos, terminals = _run(env, 300)
    env.close()
    # Random play loses several lives in 300 steps; games (5 lives) end far less often.
    assert terminals >= 4
    assert len(infos) < terminals


def test_atari_truncated_game_reports_its_real_score_and_length() -> None:
    env = AtariEnv("breakout", num_envs=2, num_threads=1, max_episode_frames=400)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    infos, rewards = [], []
    for _ in range(120):
        _, r, _, _, step_infos = env.step(rng.integers(0, 4, 2).astype(np.int32))
        infos += step_infos
        rewards.append(r.copy())
    env.close()
    assert infos, "a 400-frame limit must end games within 120 steps of frame skip 4"
    assert all(0 < info["episode_length"] <= 100 for info in infos)
    assert np.abs(np.concatenate(rewards)).max() <= 1.0  # clipped for training


@pytest.mark.parametrize(
    "kwargs", [{"episodic_life": False}, {"render_mode": "rgb_array"}], ids=["off", "rendered"]
)
def test_atari_whole_games_without_episodic_life_or_when_rendered(kwargs) -> None:
    env = AtariEnv("breakout", num_envs=2, num_threads=1, **kwargs)
    infos, terminals = _run(env, 300)
    env.close()
    assert terminals == len(infos)


def test_atari_unknown_rom_names_the_known_ones() -> None:
    with pytest.raises(APIUsageError, match=r"no ROM 'Breakout'.*snake_case.*space_invaders"):
        AtariEnv("Breakout")


def test_minatar_truncates_at_max_episode_steps() -> None:
    env = MinAtarEnv("freeway", num_envs=2, max_episode_steps=50)
    env.reset(seed=0)
    truncated = 0
    for _ in range(50):
        _, _, _, trunc, infos = env.step(np.ones(2, np.int32))
        truncated += int(trunc.sum())
    assert truncated == 2 and [info["episode_length"] for info in infos] == [50.0, 50.0]
    with pytest.raises(APIUsageError, match="no MinAtar game 'pacman'"):
        MinAtarEnv("pacman")


def test_minigrid_reports_success() -> None:
    env = MiniGridEnv("MiniGrid-Empty-5x5-v0", num_envs=4)
    infos, _ = _run(env, 200)
    assert infos and all(info["success"] in (0.0, 1.0) for info in infos)
    # Empty-5x5's goal is a few random steps away: some random episodes reach it.
    assert any(info["success"] == 1.0 for info in infos)


def test_crafter_episode_reports_every_achievement() -> None:
    env = CrafterEnv(num_envs=1, length=30)
    infos, _ = _run(env, 30)
    assert len(infos) == 1
    achievements = {k: v for k, v in infos[0].items() if k.startswith("achievements/")}
    assert len(achievements) == 22 and set(achievements.values()) <= {0.0, 1.0}
    assert crafter_score(dict.fromkeys(achievements, 0.0)) == 0.0


def test_run_success_rates_weight_rows_by_episodes() -> None:
    rows = [
        {"performance/episodes": 0.0, "environment/achievements/wood": 0.0},
        {"performance/episodes": 4.0, "environment/achievements/wood": 0.5,
         "environment/achievements/drink": 0.0, "environment/episode_return": 3.0},
        {"performance/episodes": 1.0, "environment/achievements/wood": 1.0,
         "environment/achievements/drink": 1.0},
    ]  # fmt: skip
    assert run_success_rates(rows) == {"wood": 0.6, "drink": 0.2}
    with pytest.raises(ValueError, match="performance/episodes"):
        run_success_rates(rows[:1])


_CRAFTER_WORLD = """
import sys, crafter, numpy as np
env = crafter.Env(seed=5)
env.reset()
np.save(sys.argv[1], env._world._mat_map)
"""


def test_crafter_worlds_are_generated_compiled_and_equal_pure_python(tmp_path) -> None:
    """The crafter extra installs numba, which opensimplex compiles its noise with (world
    generation was most of a random agent's Crafter time); the world is the same either way."""
    import opensimplex.internals

    assert hasattr(opensimplex.internals._noise3, "py_func"), "numba is not installed"
    for jit, name in ((True, "jit.npy"), (False, "python.npy")):
        env = {**os.environ, "NUMBA_DISABLE_JIT": "0" if jit else "1"}
        subprocess.run([sys.executable, "-c", _CRAFTER_WORLD, str(tmp_path / name)], env=env,
                       check=True, timeout=120)  # fmt: skip
    compiled, python = np.load(tmp_path / "jit.npy"), np.load(tmp_path / "python.npy")
    assert len(np.unique(compiled)) > 5  # a real world: grass, water, stone, trees, sand...
    np.testing.assert_array_equal(compiled, python)


def test_pistonball_stacks_frames() -> None:
    env = make("butterfly-pistonball", n_pistons=3)
    obs, _ = env.reset(seed=0)
    # After a reset the stack holds the first frame three times.
    np.testing.assert_array_equal(obs[:, 0], obs[:, 2])
    for _ in range(3):
        obs, *_ = env.step(np.full(3, 2, np.int32))
    assert not np.array_equal(obs[:, 0], obs[:, 2])  # pistons moved up between the frames
    env.close()


def test_pistonball_matches_pettingzoos_env_and_the_tutorial_preprocessing() -> None:
    """Step for step against PettingZoo's own parallel pistonball, preprocessed as its PPO
    tutorial does (blue channel, 84x84 nearest-pixel resize, 3 stacked frames), over two
    episodes: observations, rewards and done flags are equal."""
    import pettingzoo

    from puffer.envs.butterfly import PISTONBALL_SIZE, PISTONBALL_STACK

    n, cycles = 5, 40
    ours = make("butterfly-pistonball", n_pistons=n, max_cycles=cycles)
    raw = pettingzoo.make(
        "parallel", "butterfly/pistonball-v6", n_pistons=n, continuous=False,
        max_cycles=cycles, render_mode="rgb_array",
    )  # fmt: skip
    height, width, _ = raw.observation_space(raw.possible_agents[0]).shape
    rows = np.linspace(0, height - 1, PISTONBALL_SIZE).round().astype(np.intp)
    cols = np.linspace(0, width - 1, PISTONBALL_SIZE).round().astype(np.intp)

    def tutorial(observations: dict, stacks: list | None) -> list:
        frames = [observations[a][rows[:, None], cols[None, :], 2] for a in raw.possible_agents]
        if stacks is None:
            return [[frame] * PISTONBALL_STACK for frame in frames]
        return [[*stack[1:], frame] for stack, frame in zip(stacks, frames, strict=True)]

    obs, _ = ours.reset(seed=3)
    stacks = tutorial(raw.reset(seed=3)[0], None)
    rng = np.random.default_rng(0)
    episodes = 0
    for _ in range(2 * cycles):
        np.testing.assert_array_equal(obs, np.stack([np.stack(s) for s in stacks]))
        actions = rng.integers(0, 3, n).astype(np.int32)
        obs, rewards, terminals, truncations, _ = ours.step(actions)
        observations, raw_rewards, raw_terms, raw_truncs, _ = raw.step(
            dict(zip(raw.possible_agents, actions.tolist(), strict=True))
        )
        stacks = tutorial(observations, stacks)
        agents = raw.possible_agents
        np.testing.assert_allclose(rewards, [raw_rewards[a] for a in agents], rtol=1e-6)
        assert terminals.tolist() == [raw_terms[a] for a in agents]
        assert truncations.tolist() == [raw_truncs[a] for a in agents]
        if not raw.agents:  # both start the next episode; ours resets itself
            episodes += 1
            stacks = tutorial(raw.reset()[0], None)
    assert episodes >= 2
    ours.close()


def test_vizdoom_basic_actions_repeat_four_tics() -> None:
    # Basic times out after 300 tics: 75 agent steps at frame skip 4, never more.
    env = make("vizdoom-basic", num_envs=2)
    infos, _ = _run(env, 160)
    env.close()
    assert infos and all(1 <= info["episode_length"] <= 75 for info in infos)
    assert max(info["episode_length"] for info in infos) == 75  # random play times out


def test_magent_battle_is_truncated_at_max_cycles() -> None:
    env = make("magent-battle", map_size=15, max_cycles=30)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for step in range(1, 31):
        actions = rng.integers(0, 21, env.num_agents).astype(np.int32)
        _, _, terminals, truncations, infos = env.step(actions)
        if step < 30:
            assert not truncations.any() and not infos
    env.close()
    # Both armies reach the limit together (nobody died in 30 random steps on this map).
    assert truncations.all() and not terminals.any() and infos
    assert all(info["episode_length"] == 30 for info in infos)
