"""The Procgen learning benchmark's parts: random play's episodes (the real games, in their
own interpreter) and the gap to random the table states."""

from __future__ import annotations

import math


def test_random_play_is_seeded_and_takes_the_same_count_from_each_game(benchmark_script) -> None:
    script = benchmark_script("procgen_random")
    returns = script.random_returns("bigfish", 5, seed=3, num_envs=2)
    # 3 episodes from each of the 2 games: ceil(5 / 2), so no game's short episodes dominate.
    assert len(returns) == 6 and all(math.isfinite(x) for x in returns)
    assert returns == script.random_returns("bigfish", 5, seed=3, num_envs=2)


def test_the_gap_to_random_is_in_standard_errors(benchmark_script) -> None:
    script = benchmark_script("procgen_learn")
    # Seeds 3 and 5: mean 4, standard error 1; random's mean 1 known exactly.
    assert script._gap([3.0, 5.0], 1.0, 0.0) == "+3.00 (3.0 s.e.)"
    assert script._gap([3.0, 5.0], 1.0, 1.0) == f"+3.00 ({3 / math.sqrt(2):.1f} s.e.)"
    assert script._gap([3.0], 1.0, 0.0) == "-"  # one seed has no spread to compare
