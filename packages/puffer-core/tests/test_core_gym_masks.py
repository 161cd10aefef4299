"""Legal-action masks from Gymnasium envs: an `action_mask` observation key or info entry."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces

from puffer.core import APIUsageError, EmulationError, GymnasiumPufferEnv


class PickEnv(gymnasium.Env):
    """Pick one of 5 cells, each at most once; the legal cells are the ones not picked yet."""

    def __init__(self, in_info: bool = False):
        self.in_info = in_info
        mask = spaces.Box(0, 1, (5,), np.int8)
        board = spaces.Box(0, 1, (5,), np.int8)
        self.observation_space = board if in_info else spaces.Dict(board=board, action_mask=mask)
        self.action_space = spaces.Discrete(5)

    def _out(self) -> tuple:
        mask = (1 - self.board).astype(np.int8)
        if self.in_info:
            return self.board.copy(), {"action_mask": mask}
        return {"action_mask": mask, "board": self.board.copy()}, {}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.board = np.zeros(5, np.int8)
        return self._out()

    def step(self, action):
        self.board[action] = 1
        obs, info = self._out()
        return obs, 1.0, bool(self.board.all()), False, info


@pytest.mark.parametrize("in_info", [False, True], ids=["obs-key", "info"])
def test_masks_follow_the_env_and_reset_with_it(in_info: bool) -> None:
    kwargs = {"action_mask": "info"} if in_info else {}
    env = GymnasiumPufferEnv(PickEnv, env_kwargs={"in_info": in_info}, **kwargs)
    assert env.writes_action_masks and env.action_masks.shape == (1, 5)
    env.reset(seed=0)
    assert env.action_masks.all()
    for cell in (3, 0, 4, 1):
        env.step(np.array([cell], np.int32))
        assert not env.action_masks[0, cell]
    assert env.action_masks[0].tolist() == [False, False, True, False, False]
    _, _, terminals, _, _ = env.step(np.array([2], np.int32))
    assert terminals[0] and env.action_masks.all()  # auto-reset: a fresh board's mask


def test_no_masks_unless_declared_and_bad_choices_are_refused() -> None:
    assert not GymnasiumPufferEnv("CartPole-v1").writes_action_masks
    assert GymnasiumPufferEnv(PickEnv, action_mask="none").action_masks is None
    with pytest.raises(APIUsageError, match="use 'auto', 'info' or 'none'"):
        GymnasiumPufferEnv(PickEnv, action_mask="obs")
    env = GymnasiumPufferEnv("CartPole-v1", action_mask="info")
    with pytest.raises(EmulationError, match="no 'action_mask' in the env's info"):
        env.reset(seed=0)
