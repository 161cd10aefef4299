"""AECPufferEnv against the raw turn-based PettingZoo classic games, move for move."""

from __future__ import annotations

import functools

import numpy as np
import pettingzoo
import pytest
from gymnasium import spaces

from puffer.core import APIUsageError, Buffer, EmulationError, emulate_pettingzoo, make, mask_width
from puffer.core.aec import AECPufferEnv
from puffer.core.testing import assert_aec_equivalence


def _classic(env_id: str, **kwargs):
    return functools.partial(pettingzoo.make, "aec", f"classic/{env_id}", **kwargs)


GAMES = {
    "tictactoe_v3": _classic("tictactoe-v3"),
    "connect_four_v3": _classic("connect_four-v3"),
    "chess_v6": _classic("chess-v6"),
    # A 7x7 board keeps games (and the test) short; the rules are the same as on 19x19.
    "go_v5": _classic("go-v5", board_size=7),
}


@pytest.mark.parametrize("name", list(GAMES))
def test_aec_emulation_matches_raw_env_for_1000_moves(name: str) -> None:
    games = assert_aec_equivalence(GAMES[name], moves=1000, seed=3)
    if name != "chess_v6":  # random chess games often last more than 1000 plies
        assert games >= 1


def test_turn_based_env_is_emulated_not_refused() -> None:
    env = make("pettingzoo-classic.tictactoe_v3")
    assert isinstance(env, AECPufferEnv)
    assert env.writes_action_masks and env.action_masks.shape == (2, 9)
    assert env.single_action_space.n == 9
    env.close()


def test_game_end_reaches_both_agents_and_resets() -> None:
    env = emulate_pettingzoo(GAMES["tictactoe_v3"](), seed=0)
    env.reset()
    # player_1 plays 0, 1, 2 (a row); player_2 plays 3, 4.
    for acting, cell in [(0, 0), (1, 3), (0, 1), (1, 4)]:
        assert env.masks[acting]
        actions = np.zeros(2, np.int32)
        actions[acting] = cell
        _, rewards, terminals, _, infos = env.step(actions)
        assert not terminals.any() and infos == []
    _, rewards, terminals, _, infos = env.step(np.array([2, 0], np.int32))
    assert rewards.tolist() == [1.0, -1.0]  # the loser hears of it on the winner's move
    assert terminals.tolist() == [True, True]
    assert sorted(info["episode_return"] for info in infos) == [-1.0, 1.0]
    # Auto-reset: a fresh board, player_1 to move, every cell legal again.
    assert env.masks.tolist() == [True, False] and env.action_masks[0].all()
    # Rows are [action_mask (9), board (3, 3, 2)]: the new board is empty, the final one
    # holds the five stones of the game.
    assert env.observations[:, 9:].sum() == 0
    assert env.final_observations[0, 9:].sum() == 5


def test_masks_live_in_a_given_buffer_and_are_required() -> None:
    probe = emulate_pettingzoo(GAMES["connect_four_v3"]())
    space, act = probe.single_observation_space, probe.single_action_space
    buf = Buffer.allocate(2, space, act, final_observations=True, action_masks=True)
    env = emulate_pettingzoo(GAMES["connect_four_v3"](), buf=buf)
    env.reset(seed=1)
    assert env.action_masks is buf.action_masks and buf.action_masks[0].all()
    with pytest.raises(APIUsageError, match="action_masks=True"):
        emulate_pettingzoo(GAMES["connect_four_v3"](), buf=Buffer.allocate(2, space, act))
    with pytest.raises(APIUsageError, match="no legal-action mask"):
        mask_width(spaces.Box(-1, 1, (2,)))
    assert mask_width(spaces.MultiDiscrete([3, 4])) == 7


def test_mask_source_refuses_heterogeneous_multidiscrete() -> None:
    from puffer.core.aec import _mask_source

    obs = [spaces.Dict({"action_mask": spaces.Box(0, 1, (n,), np.int8)}) for n in (5, 7)]
    acts = [spaces.MultiDiscrete([2, 3]), spaces.MultiDiscrete([3, 4])]
    with pytest.raises(EmulationError, match="different MultiDiscrete"):
        _mask_source(obs, acts)
