"""Turn-based matches: a policy against random play, a scripted opponent or another policy.

Self-play training needs nothing special: one policy acts for every row of a turn-based env
(`puffer.core.aec.AECPufferEnv`), so it plays every seat. This module measures the result:
`play_games` seats two players in one emulated game, alternates who moves first, and reports
wins, draws and losses of the first player from its rewards at the end of each game.

A player is a function `(env, row) -> action` called when row `row` must act; it may read the
env's buffer (`env.observations[row]`, `env.action_masks[row]`) and, for scripted players, the
wrapped AEC env (`env.env`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from puffer.core import APIUsageError
from puffer.train.policies import Policy

__all__ = [
    "MatchResult",
    "Player",
    "one_ply_player",
    "play_games",
    "policy_player",
    "random_player",
]

Player = Callable[[Any, int], int]


@dataclass
class MatchResult:
    """Outcomes of the first player over `games` games."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    def as_dict(self) -> dict[str, float]:
        """Counts and rates, for reports and metrics."""
        n = max(self.games, 1)
        return {
            "games": float(self.games),
            "wins": float(self.wins),
            "draws": float(self.draws),
            "losses": float(self.losses),
            "win_rate": self.wins / n,
            "non_loss_rate": (self.wins + self.draws) / n,
        }


def _legal(env: Any, row: int) -> np.ndarray:
    if env.action_masks is None:
        raise APIUsageError(
            f"{env!r} has no legal-action masks; arena players need a turn-based env that "
            "declares them (e.g. a PettingZoo classic game)"
        )
    return np.flatnonzero(env.action_masks[row])


def random_player(seed: int = 0) -> Player:
    """Uniformly random legal moves."""
    rng = np.random.default_rng(seed)
    return lambda env, row: int(rng.choice(_legal(env, row)))


def policy_player(policy: Policy, greedy: bool = True) -> Player:
    """A (feed-forward) policy's move: its most likely legal action, or a sample from it."""

    def play(env: Any, row: int) -> int:
        device = next(policy.parameters()).device
        obs = torch.from_numpy(np.asarray(env.observations[row : row + 1])).to(device)
        mask = torch.from_numpy(np.asarray(env.action_masks[row : row + 1])).to(device)
        with torch.no_grad():
            params, _, _ = policy.forward_eval(obs, policy.initial_state(1, device))
            if greedy:
                return int(params.masked_fill(~mask, -torch.inf).argmax(-1))
            action, _ = policy.head.sample(params, mask)
        return int(action)

    return play


def one_ply_player(seed: int = 0) -> Player:
    """Win now if a move wins; else avoid moves after which the opponent wins at once
    (for tic-tac-toe and connect four: block); else random. Looks ahead on copies of the
    wrapped AEC env, so it plays any two-player PettingZoo game with zero-sum end rewards."""
    rng = np.random.default_rng(seed)

    def clone(game: Any) -> Any:
        # Not copy.deepcopy(game): PettingZoo envs pickle (EzPickle) as their constructor
        # arguments, so a deep copy would be a fresh, unreset game.
        twin = object.__new__(type(game))
        twin.__dict__ = copy.deepcopy(game.__dict__)
        return twin

    def wins(game: Any, agent: str, move: int) -> bool:
        game.step(move)
        return game.rewards.get(agent, 0) > 0

    def play(env: Any, row: int) -> int:
        raw, legal = env.env.unwrapped, _legal(env, row)
        me = raw.agent_selection
        for move in legal:
            if wins(clone(raw), me, int(move)):
                return int(move)
        safe = []
        for move in legal:
            after = clone(raw)
            after.step(int(move))
            them = after.agent_selection
            if after.terminations.get(them) or after.truncations.get(them):
                safe.append(move)  # the game ended (a draw): nothing to answer
                continue
            replies = np.flatnonzero(after.observe(them)["action_mask"])
            if not any(wins(clone(after), them, int(r)) for r in replies):
                safe.append(move)
        return int(rng.choice(safe if safe else legal))

    return play


def play_games(env: Any, first: Player, second: Player, games: int) -> MatchResult:
    """Play `games` games of a two-seat turn-based env; `first` moves first in even games.

    Args:
        env: an `AECPufferEnv` (two rows, legal-action masks); reset here.
        first, second: the players; results are `first`'s.
        games: games to play.

    Returns:
        `first`'s wins, draws and losses (by the sign of its reward when the game ends).
    """
    if env.num_agents != 2:
        raise APIUsageError(f"play_games needs a two-seat game; {env!r} has {env.num_agents}")
    result = MatchResult()
    env.reset()
    for game in range(games):
        # Seat of `first`: row 0 (moves first) in even games, row 1 in odd ones.
        seat = game % 2
        players = (first, second) if seat == 0 else (second, first)
        actions = np.zeros(env.actions.shape, env.actions.dtype)
        while True:
            row = int(np.flatnonzero(env.masks)[0])
            actions[:] = 0
            actions[row] = players[row](env, row)
            _, rewards, terminals, truncations, _ = env.step(actions)
            if terminals.any() or truncations.any():
                break
        reward = float(rewards[seat])
        if reward > 0:
            result.wins += 1
        elif reward < 0:
            result.losses += 1
        else:
            result.draws += 1
    return result
