"""The CLI's small frictions: help that offers only what a command takes and reads evenly at
80 columns (prose and option tables), one list of names per unknown-env error, counts in the
right number."""

from __future__ import annotations

import itertools

import pytest
from typer.testing import CliRunner

from puffer.cli.commands.train import score_words
from puffer.cli.main import app
from puffer.train.run import TrainResult

COMMANDS = [command.name for command in app.registered_commands]


def _help(*command: str) -> str:
    result = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    return result.output


def test_sweep_help_offers_no_option_sweep_refuses() -> None:
    assert "--no-dashboard" not in _help("sweep")
    assert "--no-dashboard" in _help("train")
    refused = CliRunner().invoke(app, ["sweep", "cartpole", "--no-dashboard"])
    assert refused.exit_code == 2


@pytest.mark.parametrize("command", COMMANDS)
def test_help_prose_fills_its_lines_at_80_columns(command: str) -> None:
    # A line of prose followed by more of the same paragraph was wrapped by rich, so it is
    # nearly full; a short one is a line break carried over from the docstring.
    lines = _help(command).splitlines()
    prose = [line.rstrip() for line in lines if not line.lstrip().startswith(("│", "╭", "╰"))]
    for line, following in itertools.pairwise(prose):
        if line.strip() and following.strip() and not line.strip().startswith("Usage:"):
            assert len(line) > 55, f"{command} --help breaks early: {line!r}"


@pytest.mark.parametrize("command", COMMANDS)
def test_option_tables_give_the_help_the_line_at_80_columns(command: str) -> None:
    """Names and type in one column, the help in the rest: no name cut short, and the help
    column starts within the first 30 of the 78 (typer's six columns left it 21 wide)."""
    text = _help(command)
    assert "…" not in text, text
    (row,) = [line for line in text.splitlines() if "--help" in line]
    assert "Show this message and exit." in row, text
    assert row.index("Show this message") <= 30, row


def test_an_unknown_env_lists_its_close_names_once() -> None:
    result = CliRunner().invoke(app, ["train", "squred"])
    assert result.exit_code == 2
    output = " ".join(result.output.split())
    assert output.count("did you mean") == 1 and "closest puffer envs" not in output
    assert output.count("squared") == 1


def test_a_single_episode_and_epoch_are_singular() -> None:
    result = TrainResult(
        run_dir=None,
        global_step=256,
        iterations=1,
        metrics={},
        score=9.0,
        score_stat="score",
        score_episodes=1,
        recent={"score": 9.0},
    )
    assert "over the last 1 episode)" in score_words(result)
