"""benchmarks/pufferlib4_learn.py: the learning table reads every row at the same env steps."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest


def _store(
    path: Path, budget: int, points: list[tuple[int, float]], seed: int = 0, **meta: object
) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    head = {"machine": "test box", "date": "2026-12-02", "seed": seed, "budget": budget, **meta}
    rows = [head] + [{"step": step, "sps": 1000.0, "score": score} for step, score in points]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def _table(
    benchmark_script, out: Path, rows: tuple[str, ...] = ("pufferlib4", "pufferlib3"),
    seeds: tuple[int, ...] = (0,), targets: list[float] | None = None,
) -> dict[str, list[str]]:  # fmt: skip
    learn = benchmark_script("pufferlib4_learn")
    args = argparse.Namespace(
        envs=["pong"], rows=list(rows), seeds=list(seeds), out=str(out), targets=targets
    )
    lines = learn.report(args)
    cells = {line.split(" | ")[1]: line.split(" | ") for line in lines if line.startswith("| pong")}
    cells["header"] = lines[0].split(" | ")
    # A markdown table: the delimiter row has as many cells as the header and every row.
    assert lines[1].count("|") == lines[0].count("|") == lines[2].count("|")
    return cells


def test_rows_of_different_budgets_are_read_at_the_smaller_ones_steps(
    tmp_path: Path, benchmark_script
) -> None:
    # pufferlib4 trains 4M steps, pufferlib3 8M: 25/50/100 % are 1M/2M/4M for both rows.
    _store(tmp_path / "pong/pufferlib4/seed0.jsonl", 4_000_000,
           [(1_000_000, 1.0), (2_000_000, 2.0), (4_000_000, 4.0)])  # fmt: skip
    _store(tmp_path / "pong/pufferlib3/seed0.jsonl", 8_000_000,
           [(1_000_000, -1.0), (2_000_000, -2.0), (4_000_000, -4.0), (8_000_000, -8.0)],
           load=[2.0, 3.5])  # fmt: skip
    table = _table(benchmark_script, tmp_path)
    assert "25 % of 4M" in table["header"][3]
    assert table["pufferlib4"][3:7] == ["1.000 (1 seed)", "2.000 (1 seed)", "4.000 (1 seed)",
                                        "4.000 (1 seed) at 4M (4.000)"]  # fmt: skip
    # The longer row is read at the same steps; its own end is the last column of scores.
    assert table["pufferlib3"][3:7] == ["-1.000 (1 seed)", "-2.000 (1 seed)", "-4.000 (1 seed)",
                                        "-8.000 (1 seed) at 8M (-8.000)"]  # fmt: skip
    # A run that recorded its load average is labelled loaded; one that did not, not.
    assert "loaded (1-min load 2.0-3.5)" in table["pufferlib3"][-1]
    assert "loaded" not in table["pufferlib4"][-1]


def test_a_lead_is_claimed_only_outside_seed_noise(benchmark_script) -> None:
    verdict = benchmark_script("results_page").verdict
    # Means 10 and 4, sds 1 and 1: the ranges 9-11 and 3-5 do not overlap.
    assert verdict([9.0, 10.0, 11.0], [3.0, 4.0, 5.0]).endswith("leads)")
    assert verdict([3.0, 4.0, 5.0], [9.0, 10.0, 11.0]).startswith("-6 (Welch t -7.3, trails")
    # Means 10 and 8 with sds 3 and 1: 7-13 overlaps 7-9, so it only matches.
    assert verdict([7.0, 10.0, 13.0], [7.0, 8.0, 9.0]).endswith("matches)")
    assert verdict([1.0], [1.0, 2.0]) == "fewer than 2 seeds"
    # PufferLib 3.0's cartpole first logs after the shortest row's 25 % point: nothing to compare.
    assert verdict([], [1.0, 2.0]) == "one row has no score there"


def test_each_row_gives_the_steps_and_training_time_to_each_target(
    tmp_path: Path, benchmark_script
) -> None:
    # Epochs of 1,000 steps at 1,000 steps/s: one second of training each.
    _store(tmp_path / "pong/pufferlib4/seed0.jsonl", 4_000,
           [(1_000, 5.0), (2_000, 21.0), (3_000, 20.0), (4_000, 21.0)])  # fmt: skip
    _store(tmp_path / "pong/pufferlib4/seed1.jsonl", 4_000,
           [(1_000, 5.0), (2_000, 10.0), (3_000, 20.0), (4_000, 20.9)], seed=1)  # fmt: skip
    # PufferLib 3.0's trainer: a longer budget that never reaches 21.
    _store(tmp_path / "pong/pl3/seed0.jsonl", 8_000, [(2_000, -21.0), (8_000, 18.0)])
    _store(tmp_path / "pong/pl3/seed1.jsonl", 8_000, [(2_000, -21.0), (8_000, 19.0)], seed=1)
    table = _table(benchmark_script, tmp_path, ("pufferlib4", "pl3"), (0, 1), [20.0])
    assert table["header"][8:10] == ["to 20", "to 21"]
    # The first logged score at or above the target: seed 0 passes 20 on its way to 21.
    assert table["pufferlib4"][8] == "2k steps, 0.0 min; 3k steps, 0.1 min"
    assert table["pufferlib4"][9] == "2k steps, 0.0 min; not reached in 4k steps"
    # No seed got there and both ran the same steps: said once.
    assert table["pl3"][8] == table["pl3"][9] == "not reached in 8k steps"
    assert table["pl3"][3] == "-"  # nothing logged by 1k steps (25 % of the smaller budget)


def test_the_first_row_is_set_against_every_other_row_and_ours_against_pl3(
    tmp_path: Path, benchmark_script
) -> None:
    for row, score in (("pufferlib4", 3.0), ("pufferlib3", 2.0), ("pl3", 1.0)):
        for seed in (0, 1):
            _store(tmp_path / f"pong/{row}/seed{seed}.jsonl", 1_000,
                   [(1_000, score + seed)], seed=seed)  # fmt: skip
    learn = benchmark_script("pufferlib4_learn")
    args = argparse.Namespace(
        envs=["pong"], rows=list(learn.ROWS), seeds=[0, 1], out=str(tmp_path), targets=None
    )
    verdicts = [line for line in learn.report(args) if " against " in line]
    assert [line.split(" at ")[0] for line in verdicts] == [
        "pong, pufferlib4 against pufferlib3",
        "pong, pufferlib4 against pl3",
        "pong, pufferlib3 against pl3",  # our trainer against PufferLib 3.0's, same config
    ]
    assert verdicts[1].endswith("+2 (Welch t 2.8, leads)")
    assert verdicts[2].endswith("+1 (Welch t 1.4, matches)")


def test_connect4_rows_meet_only_rows_on_their_side_of_the_masks(
    tmp_path: Path, benchmark_script
) -> None:
    # connect4's masks-off row is PufferLib 3.0's terms: it, not a masked row, meets pl3.
    rows = (("pufferlib4", 0.9), ("pufferlib3", 0.8), ("pl3", 0.5), ("unmasked", 0.7))
    for row, score in rows:
        for seed in (0, 1):
            _store(tmp_path / f"connect4/{row}/seed{seed}.jsonl", 1_000,
                   [(1_000, score + seed / 100)], seed=seed)  # fmt: skip
    learn = benchmark_script("pufferlib4_learn")
    args = argparse.Namespace(
        envs=["connect4"], rows=list(learn.ROWS), seeds=[0, 1], out=str(tmp_path), targets=None
    )
    lines = learn.report(args)
    assert [line.split(" | ")[1] for line in lines if line.startswith("| connect4")] == [
        "pufferlib4", "pufferlib3", "pl3", "unmasked",
    ]  # fmt: skip
    verdicts = [line.split(" at ")[0] for line in lines if " against " in line]
    assert verdicts == ["connect4, pufferlib4 against pufferlib3", "connect4, unmasked against pl3"]
    assert lines[-1].endswith("+0.2 (Welch t 28.3, leads)")


def test_the_pl3_row_asks_for_pufferlib_s_venv(tmp_path: Path, benchmark_script) -> None:
    learn = benchmark_script("pufferlib4_learn")
    args = argparse.Namespace(pufferlib=None, threads=1)
    with pytest.raises(SystemExit, match="pass --pufferlib DIR"):
        learn.run_pl3(args, "pong", 0, tmp_path / "seed0.jsonl")
    args.pufferlib = str(tmp_path)  # a folder without bin/python
    with pytest.raises(SystemExit, match="no bin/python or venv/bin/python"):
        learn.run_pl3(args, "pong", 0, tmp_path / "seed0.jsonl")


def test_an_env_with_no_stored_run_gives_each_row_as_not_run(
    tmp_path: Path, benchmark_script
) -> None:
    learn = benchmark_script("pufferlib4_learn")
    args = argparse.Namespace(
        envs=["pong"], rows=list(learn.ROWS), seeds=[0], out=str(tmp_path), targets=None
    )
    lines = learn.report(args)
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]
    assert [(row[1], row[3]) for row in cells] == [(row, "not run") for row in learn.ROWS]
    assert lines[1].count("|") == lines[0].count("|") == lines[2].count("|")


def test_a_row_stopped_short_of_its_budget_says_so(tmp_path: Path, benchmark_script) -> None:
    # PufferLib 3.0's snake.ini budgets 500M; its row stopped at ours' 50M is read at the same
    # points, and its end cell names the budget its schedule ran to.
    _store(tmp_path / "pong/pufferlib4/seed0.jsonl", 4_000,
           [(1_000, 1.0), (2_000, 2.0), (4_000, 4.0)])  # fmt: skip
    _store(tmp_path / "pong/pl3/seed0.jsonl", 4_096,
           [(1_000, 0.5), (2_000, 1.0), (4_000, 2.0), (4_096, 3.0)], stopped_of=500_000_000)  # fmt: skip
    table = _table(benchmark_script, tmp_path, rows=("pufferlib4", "pl3"))
    assert table["pl3"][3:7] == ["0.500 (1 seed)", "1.000 (1 seed)", "2.000 (1 seed)",
                                 "3.000 (1 seed) at 4.1k (3.000, stopped short of its 500M)"]  # fmt: skip
    assert "stopped" not in table["pufferlib4"][6]
