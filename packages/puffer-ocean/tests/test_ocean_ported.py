"""Envs ported from PufferLib 3.0 (see each header's rules table): each renders a non-blank frame
that changes as it plays, and the same seed with the same actions gives the same trajectory."""

from __future__ import annotations

import numpy as np
import pytest

import puffer.core

PORTED = ["trash_pickup", "tripletriad", "checkers", "drone", "freeway", "go", "blastar"]
PORTED += ["cpr", "pacman", "robocode", "tcg"]
PORTED += ["rocket_lander", "boids", "convert", "rware", "grid"]
PORTED += ["terraform", "school", "tower_climb", "enduro"]


def random_actions(env, rng: np.random.Generator) -> np.ndarray:
    space = env.single_action_space
    if hasattr(space, "n"):
        return rng.integers(0, space.n, env.actions.shape, dtype=np.int32)
    if hasattr(space, "nvec"):
        return rng.integers(0, space.nvec, env.actions.shape, dtype=np.int32)
    return rng.uniform(-1, 1, env.actions.shape).astype(np.float32)


@pytest.mark.parametrize("name", PORTED)
def test_ocean_ported_env_renders_a_changing_frame(name: str) -> None:
    env = puffer.core.make(name, num_envs=1)
    env.reset(seed=0)
    first = env.render()
    assert first.ndim == 3 and first.shape[2] == 3 and first.dtype == np.uint8
    colors = np.unique(first.reshape(-1, 3), axis=0)
    assert len(colors) >= 2, f"{name}: the frame is one flat color"
    rng = np.random.default_rng(0)
    changed = False
    for _ in range(200):
        env.step(random_actions(env, rng))
        changed = changed or not np.array_equal(env.render(), first)
    assert changed, f"{name}: 200 random steps left the frame unchanged"
    env.close()


@pytest.mark.parametrize("name", PORTED)
def test_ocean_ported_env_is_deterministic_by_seed(name: str) -> None:
    runs = []
    for seed in (5, 5, 6):
        env = puffer.core.make(name, num_envs=4)
        obs, _ = env.reset(seed=seed)
        rng = np.random.default_rng(0)
        trace = [obs.copy()]
        for _ in range(300):
            obs, rewards, terminals, truncations, _ = env.step(random_actions(env, rng))
            trace += [obs.copy(), rewards.copy(), terminals.copy(), truncations.copy()]
        env.close()
        runs.append(trace)
    assert all(np.array_equal(a, b) for a, b in zip(runs[0], runs[1], strict=True))
    assert not all(np.array_equal(a, b) for a, b in zip(runs[0], runs[2], strict=True))
