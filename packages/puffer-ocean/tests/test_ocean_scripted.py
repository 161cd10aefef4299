"""Learnability sanity checks: a few-line scripted policy beats random play by a
wide margin in every C env of this file, so the reward signal reflects the game."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import puffer.core

Policy = Callable[[np.ndarray, np.random.Generator], np.ndarray]


def play(name: str, policy: Policy, steps: int, **config) -> dict[str, float]:
    """Mean of each log field over the episodes finished in `steps` steps of 32 envs."""
    env = puffer.core.make(name, num_envs=32, log_interval=steps, **config)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    logs = []
    for _ in range(steps):
        obs, *_, infos = env.step(policy(obs, rng))
        logs += infos
    env.close()
    assert logs, f"{name}: no episode finished in {steps} steps"
    return logs[-1]


def random_policy(n: int) -> Policy:
    return lambda obs, rng: rng.integers(0, n, len(obs), dtype=np.int32)


def toward(delta: np.ndarray, minus: int, plus: int, dead_zone: float) -> np.ndarray:
    """Action `plus` where delta > dead_zone, `minus` where delta < -dead_zone, else 0."""
    return np.where(delta > dead_zone, plus, np.where(delta < -dead_zone, minus, 0)).astype(
        np.int32
    )


def test_ocean_squared_scripted_walks_straight_to_target() -> None:
    def policy(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        grid = obs.reshape(-1, 11, 11)
        agent = np.argwhere(grid == 1)[:, 1:]
        target = np.argwhere(grid == 2)[:, 1:]
        rows = toward(target[:, 0] - agent[:, 0], 2, 1, 0)  # up, down
        cols = toward(target[:, 1] - agent[:, 1], 3, 4, 0)  # left, right
        return np.where(rows != 0, rows, cols).astype(np.int32)

    scripted, random = play("squared", policy, 200), play("squared", random_policy(5), 200)
    assert scripted["score"] == 1.0 and scripted["episode_length"] <= 10
    assert random["score"] < 0.5


def test_ocean_cartpole_scripted_balances() -> None:
    def policy(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return (obs[:, 2] + 0.5 * obs[:, 3] > 0).astype(np.int32)

    scripted, random = play("cartpole", policy, 1000), play("cartpole", random_policy(2), 1000)
    assert scripted["episode_length"] > 5 * random["episode_length"]


def test_ocean_pong_scripted_edge_shots_win() -> None:
    def policy(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # Follow the ball 30 px below the paddle's centre: the paddle is moving as it returns,
        # so returns steepen the ball until it outruns the scripted paddle (8 px a frame).
        paddle_centre = obs[:, 1] * 640  # court pixels, from pong.h's defaults
        ball_centre = obs[:, 3] * 640 + 16
        return toward(ball_centre + 30 - paddle_centre, 2, 1, 4.0)

    config = {"max_score": 5}
    scripted = play("pong", policy, 3000, **config)
    random = play("pong", random_policy(3), 3000, **config)
    assert scripted["episode_return"] > 2 and random["episode_return"] < -2


def test_ocean_breakout_scripted_breaks_more_bricks() -> None:
    def policy(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        paddle_centre = obs[:, 0] * 576 + obs[:, 9] * 31  # court pixels, from breakout.h
        ball_centre = obs[:, 2] * 576 + 16
        return toward(ball_centre - paddle_centre, 1, 2, 6.0)

    scripted = play("breakout", policy, 3000)
    random = play("breakout", random_policy(3), 3000)
    assert scripted["score"] > 3 * random["score"]


def test_ocean_snake_scripted_eats_and_survives() -> None:
    moves = np.array([[-1, 0], [1, 0], [0, -1], [0, 1]])  # up, down, left, right

    def policy(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        view = obs.reshape(-1, 11, 11)
        near = view[:, 5 + moves[:, 0], 5 + moves[:, 1]]  # (agents, 4) neighbour cells
        score = np.where(near >= 3, -10.0, 0.0) + np.where((near == 1) | (near == 2), 5.0, 0.0)
        return np.argmax(score + rng.random(score.shape), axis=1).astype(np.int32)

    config = {"width": 32, "height": 32, "num_snakes": 4, "num_food": 32}
    scripted = play("snake", policy, 1000, **config)
    random = play("snake", random_policy(4), 1000, **config)
    assert scripted["episode_length"] > 2 * random["episode_length"]
    assert scripted["score"] > random["score"] + 2
