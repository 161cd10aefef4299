"""The docs' results pages (docs/results/): the tables generated from committed result files are
what those files give, every script's `--write` finds its markers, the markers are replaced in
place, and the fault table names tests that exist."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "docs" / "results"
# Each script whose `--write` puts its table into a results page, and the markers' name there.
# The envs of the PufferNet learning table, as the page's command names them.
LEARNING_TABLE_ENVS = ("breakout", "cartpole", "connect4", "memory", "pong", "snake", "squared")
WRITERS = {
    "pufferlib4_learn": "ocean.md",
    "ocean_learn": "ocean.md",
    "profile_train": "train.md",
    "procgen_learn": "envs.md",
    "mujoco_learn": "mujoco.md",
}
# The games of the Procgen table, as the page's command names them.
PROCGEN_GAMES = ("bigfish", "starpilot", "fruitbot", "coinrun", "maze")


def test_the_pufferlib4_table_is_what_the_committed_curves_give(benchmark_script) -> None:
    script = benchmark_script("pufferlib4_learn")
    page = benchmark_script("results_page")
    # The command the page names: its envs, seeds 0-4 (breakout's headline row has 5), every
    # row, the committed folder.
    args = argparse.Namespace(
        envs=list(LEARNING_TABLE_ENVS),
        seeds=[0, 1, 2, 3, 4],
        rows=list(script.ROWS),
        out=str(ROOT / "benchmarks" / "results" / "pufferlib4"),
        targets=None,
    )
    table = script.report(args)
    assert table[2].startswith("| breakout | pufferlib4 | 0, 1, 2, 3, 4 |")
    assert sum(line.startswith("| pong | ") for line in table) == len(script.ROWS)
    assert page.table_in(PAGES / "ocean.md", "pufferlib4_learn") == table


def test_the_procgen_table_is_what_the_committed_runs_give(benchmark_script) -> None:
    script = benchmark_script("procgen_learn")
    page = benchmark_script("results_page")
    args = argparse.Namespace(
        games=list(PROCGEN_GAMES), seeds=[0, 1, 2], out=str(ROOT / "benchmarks/results/procgen")
    )
    table = script.report(args)
    # Every game has random play's 1,024 episodes; starpilot has trained seeds.
    assert all("(1,024)" in line for line in table[2:]) and len(table) == 2 + len(PROCGEN_GAMES)
    assert table[3].startswith("| starpilot | ") and "not run" not in table[3]
    assert page.table_in(PAGES / "envs.md", "procgen_learn") == table


def test_the_mujoco_table_is_what_the_committed_runs_give(benchmark_script) -> None:
    script = benchmark_script("mujoco_learn")
    page = benchmark_script("results_page")
    # The command the page names: every env of the family, seeds 3-5, the committed folder.
    args = argparse.Namespace(envs=list(script.ENVS), seeds=[3, 4, 5], out=str(script.OUT))
    table = script.report(args)
    assert len(table) > 2 and all(line.count("|") == 9 for line in table)
    assert page.table_in(PAGES / "mujoco.md", "mujoco_learn") == table


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_each_script_writes_into_a_page_that_holds_its_markers(name: str, benchmark_script) -> None:
    script = benchmark_script(name)
    assert script.PAGE == PAGES / WRITERS[name]
    lines = benchmark_script("results_page").table_in(script.PAGE, name)
    assert lines and lines[0].startswith("|"), f"{name}'s block holds no table"


def test_writing_a_table_replaces_only_the_marked_lines(tmp_path: Path, benchmark_script) -> None:
    page = benchmark_script("results_page")
    path = tmp_path / "page.md"
    path.write_text(
        "# Page\n\nMeasured on X.\n\n<!-- results: demo -->\n| a |\n|---|\n| 1 |\n"
        "<!-- /results: demo -->\n\nWhat it shows.\n"
    )
    page.write_table(path, "demo", ["| a |", "|---|", "| 2 |", "| 3 |"])
    assert path.read_text() == (
        "# Page\n\nMeasured on X.\n\n<!-- results: demo -->\n| a |\n|---|\n| 2 |\n| 3 |\n"
        "<!-- /results: demo -->\n\nWhat it shows.\n"
    )
    assert page.table_in(path, "demo") == ["| a |", "|---|", "| 2 |", "| 3 |"]


def test_a_page_without_the_markers_is_refused_in_one_line(
    tmp_path: Path, benchmark_script
) -> None:
    page = benchmark_script("results_page")
    path = tmp_path / "page.md"
    path.write_text("# Page\n\n| a |\n")
    with pytest.raises(SystemExit, match=r"add the lines <!-- results: demo --> and") as error:
        page.write_table(path, "demo", ["| b |"])
    assert "\n" not in str(error.value) and path.read_text() == "# Page\n\n| a |\n"
    with pytest.raises(SystemExit, match="has no table marked for demo"):
        page.table_in(tmp_path / "missing.md", "demo")


def test_every_test_the_fault_table_names_exists() -> None:
    text = (PAGES / "train.md").read_text(encoding="utf-8")
    faults = text.split("\n## Faults\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in faults.splitlines() if line.startswith("| ") and "---" not in line]
    sources = {
        path.name: path.read_text(encoding="utf-8")
        for path in [*ROOT.glob("tests/test_*.py"), *ROOT.glob("*/*/tests/test_*.py")]
    }
    named = 0
    for row in rows[1:]:  # the header names no test
        shown_by = row.rsplit("|", 2)[1]
        file = None
        # `file.py::test_a`, then `::test_b` of the same file, in the order written.
        for match in re.finditer(r"`(?:(?:[\w/]+/)?(test_\w+\.py))?(?:::(\w+))?`", shown_by):
            file = match.group(1) or file
            if match.group(2):
                assert file in sources, f"the fault table names {file}, which does not exist"
                assert f"def {match.group(2)}(" in sources[file], f"{file}::{match.group(2)}"
                named += 1
    assert named >= 30, f"only {named} tests named: the table's format changed"


def test_the_sweep_table_in_the_readme_is_what_the_committed_store_gives(benchmark_script) -> None:
    script = benchmark_script("sweep_breakout")
    table = script.report(script.STORE)
    assert len(table) >= 2 + 3, "the committed sweep holds fewer than 3 finished runs"
    assert benchmark_script("results_page").table_in(script.PAGE, "sweep_breakout") == table


def test_the_sweep_table_puts_the_quickest_to_the_last_target_first(
    tmp_path: Path, benchmark_script
) -> None:
    script = benchmark_script("sweep_breakout")
    from puffer.sweep import RunRecord, SweepStore

    store = SweepStore(tmp_path / "sweep.jsonl")
    store.open(list(script.COLUMNS))
    params = dict.fromkeys(script.COLUMNS, 0.5) | {"train.total_timesteps": 5e7}
    # run 0 reaches 800 at 200 s, run 1 at 100 s, run 2 never (but scores higher than run 3).
    curves = {
        0: [(1e7, 500.0, 100.0), (2e7, 810.0, 200.0)],
        1: [(1e7, 820.0, 100.0)],
        2: [(1e7, 450.0, 100.0)],
        3: [(1e7, 100.0, 100.0)],
    }
    for run_id, curve in curves.items():
        score = curve[-1][1]
        store.append(RunRecord(run_id, params, score, 300.0, curve=curve))
    store.append(RunRecord(4, params, None, 1.0, status="failed", error="boom"))
    table = script.report(store.path)
    assert [line.split(" | ")[0] for line in table[2:]] == ["| 1", "| 0", "| 2", "| 3"]
    assert table[2].endswith("| 10.0M steps, 1.7 min | 10.0M steps, 1.7 min |")
    assert table[4].endswith("| 10.0M steps, 1.7 min | not reached |")
    assert script.first_reached(store.open(list(script.COLUMNS))[0], 800.0) == (2e7, 200.0)


def test_the_sweep_table_refuses_a_file_that_is_not_a_sweep_store(
    tmp_path: Path, benchmark_script
) -> None:
    script = benchmark_script("sweep_breakout")
    for name, text in (("metrics.jsonl", '{"step": 1}\n'), ("empty.jsonl", "")):
        (tmp_path / name).write_text(text)
        with pytest.raises(SystemExit, match="is not a puffer sweep store"):
            script.load_runs(tmp_path / name)
    with pytest.raises(SystemExit, match="is not a puffer sweep store"):
        script.load_runs(tmp_path / "missing.jsonl")
