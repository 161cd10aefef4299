"""Subcommands through typer's test runner: help, list, config errors, bench, build, eval."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from rich.text import Text
from typer.testing import CliRunner

from puffer.cli import __version__
from puffer.cli.bench import machine
from puffer.cli.commands._common import console
from puffer.cli.commands.sweep import _on_event
from puffer.cli.commands.train import resume_command
from puffer.cli.main import app
from puffer.core import registered_envs
from puffer.sweep import RunRecord, SweepEvent
from puffer.train.paths import RunPaths

ENV = "squared"
runner = CliRunner()


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch) -> None:
    # Runs write experiments/ under the working directory.
    monkeypatch.chdir(tmp_path)


def invoke(*args: str):
    return runner.invoke(app, list(args))


def test_version_and_help() -> None:
    result = invoke("--version")
    assert result.exit_code == 0 and result.output.strip() == f"puffer {__version__}"
    result = invoke("--help")
    assert result.exit_code == 0
    for command in (
        "train",
        "eval",
        "sweep",
        "list",
        "bench",
        "build",
        "config",
        "dashboard",
        "play",
    ):
        assert command in result.output


def test_command_help_loses_no_text_to_rich_markup() -> None:
    # Help is rendered as rich markup, where "[vec]" would be a (silently dropped) style tag.
    for command in app.registered_commands:
        doc = command.callback.__doc__
        assert Text.from_markup(doc).plain == doc, command.callback.__name__


def test_a_failed_sweep_run_is_reported_with_its_brackets() -> None:
    error = "ValueError: [sweep] metric 'score' was never reported by squared"
    record = RunRecord(run_id=3, params={}, score=None, cost=1.5, status="failed", error=error)
    event = SweepEvent("finished", 3, {}, record, num_finished=4, max_runs=8, best=None)
    with console.capture() as captured:
        _on_event(event)
    assert error in captured.get()


def test_list_shows_every_registered_env() -> None:
    result = invoke("list")
    assert result.exit_code == 0, result.output
    for name in registered_envs():
        assert name in result.output
    assert "puffer-ocean" in result.output and "Discrete" in result.output


def test_misspelled_key_suggests_the_right_one() -> None:
    result = invoke("train", ENV, "--train.learnin-rate", "1")
    assert result.exit_code == 2
    assert "did you mean --train.learning-rate" in result.output


@pytest.mark.parametrize(
    ("old", "new"), [("num-envs", "num_instances"), ("batch-size", "instances_per_recv")]
)
def test_a_renamed_key_names_the_new_one(old: str, new: str) -> None:
    result = invoke("train", ENV, f"--vec.{old}", "2")
    assert result.exit_code == 2
    assert f"was renamed vec.{new}" in " ".join(result.output.split())


def test_unknown_env_lists_close_names() -> None:
    result = invoke("train", "squred")
    assert result.exit_code == 2
    assert "no env named 'squred'" in result.output and "squared" in result.output
    result = invoke("train", "no-such-env")
    assert result.exit_code == 2 and "closest puffer envs:" in result.output


def test_an_env_whose_module_is_missing_names_the_import_not_other_envs() -> None:
    result = invoke("train", "gym-puffer_no_such_module:Empty-v0")
    assert result.exit_code == 2
    output = " ".join(result.output.split())
    assert "needs the module puffer_no_such_module, whose import failed" in output
    assert "pip install puffer-no-such-module" in output
    assert "closest puffer envs" not in output and "did you mean" not in output


def test_wrong_type_names_the_expected_type() -> None:
    result = invoke("train", ENV, "--train.total-timesteps", "lots")
    assert result.exit_code == 2
    assert "--train.total-timesteps expects an int" in result.output


def test_config_prints_the_resolved_toml() -> None:
    result = invoke("config", ENV, "--train.gamma", "0.9", "--env.max-steps=12")
    assert result.exit_code == 0, result.output
    assert "gamma = 0.9\n" in result.output and "max_steps = 12\n" in result.output
    result = invoke("config", ENV, "--keys")
    assert result.exit_code == 0, result.output
    assert "--train.learning-rate" in result.output and "--env.max-steps" in result.output


def test_bench_reports_steps_per_second() -> None:
    result = invoke("bench", ENV, "--seconds", "0.05", "--repeats", "1", "--env.num-envs", "8")
    assert result.exit_code == 0, result.output
    assert "agent steps/s" in result.output and "8 agents" in result.output
    assert " ".join(result.output.split()).startswith(machine())  # the benchmarks' header


def test_bench_through_a_vectorizer() -> None:
    result = invoke(
        "bench", ENV, "--seconds", "0.05", "--repeats", "1", "--vec.backend", "serial",
        "--vec.num-instances", "2", "--vec.num-workers", "2", "--env.num-envs", "4", "--vec.instances-per-recv", "1",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert "backend serial, 2 env(s)" in output and "8 agents, 1 env(s) per recv" in output


def test_build_refuses_non_ocean_envs_and_dry_runs() -> None:
    result = invoke("build", "gym-CartPole-v1", "--debug")
    assert result.exit_code == 2 and "Ocean (C) envs only" in result.output
    result = invoke("build", ENV, "--debug", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "PUFFER_SANITIZE=ON" in result.output and "build/sanitize" in result.output


def test_eval_without_a_run_says_to_train_first() -> None:
    result = invoke("eval", ENV, "--video", "out.gif")
    assert result.exit_code == 2
    assert "train first" in result.output


TINY = [
    "--train.total-timesteps", "1024",
    "--train.horizon", "16",
    "--train.minibatch-size", "128",
    "--train.device", "cpu",
    "--env.num-envs", "8",
]  # fmt: skip


SHORT = ["--env.max-steps", "10"]  # squared episodes end within 10 steps


def test_train_then_eval_in_a_window(monkeypatch) -> None:
    trained = invoke("train", ENV, "--no-dashboard", *TINY)
    assert trained.exit_code == 0, trained.output
    assert "model: experiments/squared/" in trained.output
    # The start line names the thread count (the suite pins OMP_NUM_THREADS to 1).
    assert "on cpu (1 torch thread) for" in trained.output
    # A display is claimed, and SDL's dummy driver stands in for it.
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    result = invoke("eval", ENV, "--episodes", "3", "--fps", "1000", *SHORT)
    assert result.exit_code == 0, result.output
    assert "3 episodes:" in result.output and "return" in result.output
    assert "video:" not in result.output
    cut = invoke("eval", ENV, "--no-render", "--episodes", "100", "--max-steps", "15", *SHORT)
    assert cut.exit_code == 0, cut.output
    assert "stopped at --max-steps 15 before 100 episodes ended" in " ".join(cut.output.split())


def test_train_a_turn_based_game_then_pit_it_against_opponents() -> None:
    game = "pettingzoo-classic.tictactoe_v3"
    tiny = ["--train.total-timesteps", "256", "--train.horizon", "16"]
    tiny += ["--train.batch-size", "128", "--train.minibatch-size", "128", "--train.device", "cpu"]
    tiny += ["--vec.backend", "serial", "--vec.num-instances", "4"]
    trained = invoke("train", game, "--no-dashboard", *tiny)
    assert trained.exit_code == 0, trained.output
    for opponent in ("random", "one-ply", "latest"):
        result = invoke("eval", game, "--opponent", opponent, "--games", "4")
        assert result.exit_code == 0, result.output
        assert f"vs {opponent}: 4 games" in result.output and "losses" in result.output


def test_resume_command_names_each_run_key_once(tmp_path: Path) -> None:
    """The printed resume line keeps the user's overrides but gives the run's data dir, run id
    and resume flag once, in place of any the user typed."""
    args = ["--train.data-dir", "old", "--train.seed=3", "--train.run_id", "x", "--train.gamma",
            "-1", "--train.resume", "--train.compile"]  # fmt: skip
    words = shlex.split(
        resume_command("cartpole", None, args, RunPaths(tmp_path, "cartpole", "r7"))
    )
    assert words == [
        "puffer", "train", "cartpole", "--train.seed", "3", "--train.gamma", "-1",
        "--train.compile", "--train.data-dir", str(tmp_path.resolve()), "--train.run-id", "r7",
        "--train.resume", "true",
    ]  # fmt: skip


def test_a_long_result_line_is_printed_as_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    # A run's path makes result lines longer than the 80 columns a pipe gets; scripts and
    # tests grep them, so the console must not break them (CI failed on "vs\nrandom").
    line = "experiments/" + "x" * 70 + "/checkpoint.pt vs random: 4 games, 1 wins"
    console.print(line)
    assert capsys.readouterr().out == line + "\n"
