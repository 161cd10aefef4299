"""Matches between players of a turn-based game: random, one-ply scripted and policies."""

from __future__ import annotations

import pytest

from puffer.core import APIUsageError, make
from puffer.train import PolicyConfig, make_policy
from puffer.train.arena import one_ply_player, play_games, policy_player, random_player

GAME = "pettingzoo-classic.tictactoe_v3"


def test_one_ply_beats_random_and_results_are_per_first_player() -> None:
    env = make(GAME)
    result = play_games(env, one_ply_player(0), random_player(1), 40)
    assert result.games == 40 and result.wins > 2 * result.losses
    flipped = play_games(env, random_player(1), one_ply_player(0), 40)
    assert flipped.losses > 2 * flipped.wins
    env.close()


def test_one_ply_never_loses_to_itself_worse_than_random() -> None:
    # Two win/block players draw most tic-tac-toe games; random play rarely does.
    env = make(GAME)
    assert play_games(env, one_ply_player(0), one_ply_player(1), 20).draws >= 10
    env.close()


def test_policy_player_plays_only_legal_moves() -> None:
    env = make(GAME)
    policy = make_policy(PolicyConfig(hidden_size=8), env)
    for greedy in (True, False):
        player, moves = policy_player(policy, greedy), []

        def checked(env, row, player=player, moves=moves):
            move = player(env, row)
            moves.append(bool(env.action_masks[row, move]))
            return move

        assert play_games(env, checked, random_player(0), 10).games == 10
        assert len(moves) >= 30 and all(moves)
    env.close()


def test_play_games_needs_masks_and_two_seats() -> None:
    env = make("gym-CartPole-v1")
    with pytest.raises(APIUsageError, match="two-seat"):
        play_games(env, random_player(), random_player(), 1)
    env.close()
