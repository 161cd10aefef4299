"""benchmarks/pufferlib4_learn.py: the learning table reads every row at the same env steps."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def _store(path: Path, budget: int, points: list[tuple[int, float]], **meta: object) -> None:
    path.parent.mkdir(parents=True)
    head = {"machine": "test box", "date": "2026-12-02", "seed": 0, "budget": budget, **meta}
    rows = [head] + [{"step": step, "sps": 1000.0, "score": score} for step, score in points]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def _table(benchmark_script, out: Path) -> dict[str, list[str]]:
    learn = benchmark_script("pufferlib4_learn")
    args = argparse.Namespace(
        envs=["pong"], rows=["pufferlib4", "pufferlib3"], seeds=[0], out=str(out), targets=None
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
    verdict = benchmark_script("pufferlib4_learn")._verdict
    # Means 10 and 4, sds 1 and 1: the ranges 9-11 and 3-5 do not overlap.
    assert verdict([9.0, 10.0, 11.0], [3.0, 4.0, 5.0]).endswith("leads)")
    assert verdict([3.0, 4.0, 5.0], [9.0, 10.0, 11.0]).startswith("-6 (Welch t -7.3, trails")
    # Means 10 and 8 with sds 3 and 1: 7-13 overlaps 7-9, so it only matches.
    assert verdict([7.0, 10.0, 13.0], [7.0, 8.0, 9.0]).endswith("matches)")
    assert verdict([1.0], [1.0, 2.0]) == "fewer than 2 seeds"
