"""Dynamics and learnability of target, connect4, g2048, tetris and memory through Python.

The env trio (determinism, seeds, bounds, flags written) runs for these envs in
test_ocean_envs.py and, in C under sanitizers, in test_ocean_sanitize.py; this file checks
what each game must do step to step, and that a scripted policy beats a random one (every
env has a scripted sanity check that it is learnable).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import puffer.core
import puffer.ocean
from puffer.ocean import write_png


def test_ocean_g2048_conserves_tiles_and_spawns_two_or_four() -> None:
    env = puffer.ocean.G2048(num_envs=32)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=1)
    spawned = set()
    for _ in range(300):
        before = np.where(obs > 0, 2 ** obs.astype(np.int64), 0).sum(axis=1)
        obs, rewards, terminals, truncations, _ = env.step(rng.integers(0, 4, 32, dtype=np.int32))
        after = np.where(obs > 0, 2 ** obs.astype(np.int64), 0).sum(axis=1)
        alive = ~(terminals | truncations)
        invalid = np.isclose(rewards, -0.01)
        # Merges keep the tile sum; only the spawned 2 or 4 adds to it.
        assert (after - before)[alive & invalid].tolist() == [0] * int((alive & invalid).sum())
        spawned |= set((after - before)[alive & ~invalid].tolist())
        assert (rewards[~invalid] >= 0).all()
    assert spawned == {2, 4}
    env.close()


def test_ocean_connect4_each_turn_adds_one_piece_per_player() -> None:
    env = puffer.ocean.Connect4(num_envs=32)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=2)
    for _ in range(200):
        mine, theirs = (obs == 1).sum(axis=1), (obs == -1).sum(axis=1)
        assert (theirs == mine).all()  # the agent always opens
        obs, rewards, terminals, _, _ = env.step(rng.integers(0, 7, 32, dtype=np.int32))
        alive = ~terminals
        assert ((obs == 1).sum(axis=1) == mine + 1)[alive].all()
        assert ((obs == -1).sum(axis=1) == theirs + 1)[alive].all()
        assert set(rewards[terminals].tolist()) <= {-1.0, 1.0}  # a full board loses
        assert (rewards[alive] == 0).all()
    env.close()


def test_ocean_connect4_masks_exactly_the_full_columns() -> None:
    env = puffer.ocean.Connect4(num_envs=16)
    assert env.writes_action_masks and env.action_masks.shape == (16, 7)
    rng = np.random.default_rng(1)
    obs, _ = env.reset(seed=3)
    full_seen = False
    for _ in range(300):
        top_empty = obs.reshape(16, 7, 6)[:, :, 5] == 0  # row 5 of each column
        np.testing.assert_array_equal(env.action_masks, top_empty)
        full_seen |= not top_empty.all()
        legal = [rng.choice(np.flatnonzero(row)) for row in env.action_masks]
        obs, *_ = env.step(np.array(legal, np.int32))
    assert full_seen
    # Loading a state rewrites the masks from the loaded boards.
    state, masks = env.save_state(), env.action_masks.copy()
    env.reset(seed=4)
    env.load_state(state)
    np.testing.assert_array_equal(env.action_masks, masks)
    env.close()


def test_ocean_checkers_masks_exactly_the_legal_moves() -> None:
    """A masked-out action is the env's illegal action (-1, nothing moves); a masked-in one never is."""
    env = puffer.ocean.Checkers(num_envs=8)
    assert env.writes_action_masks and env.action_masks.shape == (8, 512)
    rng = np.random.default_rng(2)
    obs, _ = env.reset(seed=5)
    for t in range(200):
        masks = env.action_masks.copy()
        assert masks.any(axis=1).all()
        if t % 10 == 0:  # every illegal-by-mask action is refused by the rules
            state, board = env.save_state(), obs.copy()
            illegal = [rng.choice(np.flatnonzero(~row)) for row in masks]
            obs, rewards, terminals, _, _ = env.step(np.array(illegal, np.int32))
            np.testing.assert_array_equal(rewards, -1.0)
            np.testing.assert_array_equal(obs, board)
            assert not terminals.any()
            env.load_state(state)
        legal = [rng.choice(np.flatnonzero(row)) for row in masks]
        obs, rewards, terminals, _, _ = env.step(np.array(legal, np.int32))
        assert (rewards[~terminals] > -1.0).all(), t  # a legal move never pays the illegal -1
    env.close()


def test_ocean_env_without_masks_refuses_a_mask_array() -> None:
    env = puffer.ocean.Connect4(num_envs=1)
    with pytest.raises(puffer.core.APIUsageError, match="writes legal-action masks"):
        env._c.bind(env.observations, env.actions, env.rewards, env.terminals, env.truncations)
    env.close()
    squared = puffer.ocean.Squared(num_envs=1)
    assert not squared.writes_action_masks and squared.action_masks is None
    with pytest.raises(puffer.core.APIUsageError, match="declares no legal-action masks"):
        squared._c.bind(
            *(squared.observations, squared.actions, squared.rewards),
            *(squared.terminals, squared.truncations, np.ones((1, 5), bool)),
        )
    squared.close()


def test_ocean_tetris_shows_one_falling_piece() -> None:
    env = puffer.ocean.Tetris(num_envs=16)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=3)
    for _ in range(500):
        assert ((obs[:, :200] == 2).sum(axis=1) == 4).all()
        for start in (206, 213, 220):  # the three queued pieces, one-hot
            assert (obs[:, start : start + 7].sum(axis=1) == 1).all()
        held = obs[:, 227:234].sum(axis=1)
        assert (held <= 1).all() and (held[obs[:, 205] == 0] == 1).all()  # no hold: held one
        obs, *_ = env.step(rng.integers(0, 7, 16, dtype=np.int32))
    env.close()


def test_ocean_memory_needs_memory() -> None:
    delay = 5
    env = puffer.ocean.Memory(num_envs=256, delay=delay)
    obs, _ = env.reset(seed=5)
    cue = obs[:, :4].argmax(axis=1)
    remembered, constant = [], []
    for t in range(1, 20 * (delay + 2) + 1):
        # The recurrent oracle keeps the cue it saw; the memoryless guess is always 0.
        obs, rewards, terminals, _, _ = env.step(cue.astype(np.int32))
        if terminals.any():
            assert terminals.all() and t % (delay + 2) == 0
            remembered.append(rewards.mean())
            cue = obs[:, :4].argmax(axis=1)
    env.reset(seed=5)
    for _ in range(20 * (delay + 2)):
        _, rewards, terminals, _, _ = env.step(np.zeros(256, np.int32))
        if terminals.any():
            constant.append(rewards.mean())
    assert np.mean(remembered) == 1.0
    assert abs(np.mean(constant) - 0.25) < 0.03


def greedy_target(obs: np.ndarray) -> np.ndarray:
    """Turn toward the nearest goal (heading is clamped to [0, 2 pi]: no wrapping) at speed."""
    goals = obs[:, 0:8].reshape(-1, 4, 2) * np.array([1080, 720])  # pixels
    nearest = goals[np.arange(len(obs)), (goals**2).sum(axis=2).argmin(axis=1)]
    wanted = np.arctan2(nearest[:, 1], nearest[:, 0]) % (2 * np.pi)
    turn = np.clip(np.round((wanted - obs[:, 24] * 2 * np.pi) * 12), -4, 4) + 4
    return np.stack([turn, np.full(len(obs), 3)], axis=1).astype(np.int32)


def connect4_scripted(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Win if one move wins, else block the opponent's win, else a random legal column."""
    actions = np.empty(len(obs), np.int32)
    for i, columns in enumerate(obs.reshape(-1, 7, 6)):  # column-major, row 0 at the bottom
        board = columns.T
        heights = (board != 0).sum(axis=0)
        legal = np.flatnonzero(heights < 6)
        if not len(legal):  # a full board: every move loses
            actions[i] = 0
            continue
        choice = rng.choice(legal)
        for who in (1, -1):
            wins = [c for c in legal if _connects(board, heights[c], c, who)]
            if wins:
                choice = wins[0]
                break
        actions[i] = choice
    return actions


def _connects(board: np.ndarray, row: int, col: int, who: int) -> bool:
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        count = 1
        for sign in (-1, 1):
            r, c = row + sign * dr, col + sign * dc
            while 0 <= r < 6 and 0 <= c < 7 and board[r, c] == who:
                count, r, c = count + 1, r + sign * dr, c + sign * dc
        if count >= 4:
            return True
    return False


def g2048_corner(obs: np.ndarray, rewards: np.ndarray, tries: np.ndarray) -> np.ndarray:
    """Keep tiles in the bottom-left corner: down, left, right, up, in that preference; move
    on to the next preference only while the last move changed nothing."""
    tries[:] = np.where(np.isclose(rewards, -0.01), tries + 1, 0)
    preference = np.array([1, 2, 3, 0], np.int32)  # down, left, right, up
    return preference[np.minimum(tries, 3)]


def run_policy(env: puffer.ocean.OceanEnv, policy, steps: int) -> dict[str, float]:
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=6)
    rewards = np.zeros(env.num_agents, np.float32)
    tries = np.zeros(env.num_agents, np.int64)
    logs = []
    for _ in range(steps):
        obs, rewards, _, _, infos = env.step(policy(obs, rewards, tries, rng))
        logs += infos
    n = sum(log["n"] for log in logs)
    means = {key: sum(log[key] * log["n"] for log in logs) / n for key in logs[0]}
    return means | {"n": n}  # episodes finished (target: goals eaten)


def random_policy(env: puffer.ocean.OceanEnv):
    space = env.single_action_space
    high = space.n if hasattr(space, "n") else space.nvec
    return lambda obs, rewards, tries, rng: rng.integers(0, high, env.actions.shape, np.int32)


@pytest.mark.parametrize(
    ("name", "scripted", "key", "steps"),
    [
        ("target", lambda obs, r, t, rng: greedy_target(obs), "n", 512),
        # Against the depth-3 negamax both lose nearly every game; win-or-block lasts longer.
        ("connect4", lambda obs, r, t, rng: connect4_scripted(obs, rng), "episode_length", 300),
        ("g2048", lambda obs, r, t, rng: g2048_corner(obs, r, t), "score", 2000),
    ],
)
def test_ocean_scripted_policy_beats_random(name, scripted, key, steps) -> None:
    scores = []
    for policy in (scripted, None):
        env = puffer.core.make(name, num_envs=16, log_interval=1)
        scores.append(run_policy(env, policy or random_policy(env), steps)[key])
        env.close()
    assert scores[0] > scores[1] + 0.1 * abs(scores[1]), (name, scores)


@pytest.mark.parametrize("name", ["target", "connect4", "g2048", "tetris", "memory"])
def test_ocean_render_draws_the_game(name: str, tmp_path: Path) -> None:
    env = puffer.core.make(name, num_envs=2)
    env.reset(seed=7)
    rng = np.random.default_rng(0)
    for _ in range(30):
        env.step(random_policy(env)(None, None, None, rng))
    frame = env.render(1)
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    colours = np.unique(frame.reshape(-1, 3), axis=0)
    assert len(colours) >= 3, f"{name}: a frame of {len(colours)} colours shows nothing"
    assert write_png(frame, tmp_path / f"{name}.png").stat().st_size > 100
    env.render_mode = "ansi"
    assert "\x1b[38;2;" in env.render(0)
    env.close()
