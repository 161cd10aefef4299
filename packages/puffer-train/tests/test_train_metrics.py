"""Metric sinks: JSONL rows, the rich dashboard, wandb in offline mode; the trainer's time split."""

from __future__ import annotations

import gc
import io
import math
import time
from pathlib import Path

import pytest
from rich.console import Console

import puffer.vector
from puffer.core import make
from puffer.train import (
    Config,
    JSONLSink,
    MetricsSink,
    PolicyConfig,
    PuffeRL,
    TrainConfig,
    make_policy,
)
from puffer.train.dashboard import Dashboard
from puffer.train.metrics import read_jsonl, read_metrics, truncate_jsonl
from puffer.train.progress import ProgressLines
from puffer.train.pufferl import TIME_SPLIT
from puffer.train.score import RunScore, ScoredSinks

METRICS = {
    "environment/episode_return": 21.5,
    "losses/policy_loss": -0.01,
    "losses/value_loss": math.nan,
    "performance/sps": 123456.0,
    "performance/iteration": 3.0,
    "performance/iterations": 10.0,
    "performance/time_left": 75.0,
    "time/env": 0.25,
    "time/rollout": 0.1,
    "time/forward": 0.15,
    "time/backward": 0.3,
    "time/optimizer": 0.05,
    "time/other": 0.15,
}


def test_jsonl_sink_appends_valid_rows(tmp_path: Path) -> None:
    path = tmp_path / "run" / "metrics.jsonl"
    sink = JSONLSink(path)
    assert isinstance(sink, MetricsSink)
    sink.log(METRICS, step=100)
    sink.close()
    sink.close()
    again = JSONLSink(path)  # a resumed run appends
    again.log({"losses/policy_loss": 1.0}, step=200)
    again.close()
    rows = read_jsonl(path)
    assert [row["step"] for row in rows] == [100, 200]
    assert rows[0]["losses/value_loss"] is None
    assert rows[0]["environment/episode_return"] == 21.5


def test_read_jsonl_leaves_out_a_row_still_being_written(tmp_path: Path) -> None:
    # A reader of a live run can see part of the trainer's append (seen in a test that polled
    # metrics.jsonl: the line stopped mid-key); complete rows before it are all returned.
    path = tmp_path / "metrics.jsonl"
    sink = JSONLSink(path)
    sink.log({"losses/policy_loss": 1.0}, step=100)
    sink.close()
    with path.open("a", encoding="utf-8") as file:
        file.write('{"step": 200, "losses/pol')
    assert [row["step"] for row in read_jsonl(path)] == [100]
    with path.open("a", encoding="utf-8") as file:
        file.write('icy_loss": 2.0}\n')
    assert [row["step"] for row in read_jsonl(path)] == [100, 200]


def test_dashboard_draws_every_section() -> None:
    out = io.StringIO()
    dashboard = Dashboard("cartpole", console=Console(file=out, width=140, force_terminal=False))
    dashboard.log(METRICS, step=4096)
    dashboard.close()
    text = out.getvalue()
    for expected in (
        "cartpole",
        "SPS 123.5k",
        "steps 4.1k",
        "iteration 3/10",
        "episode_return",
        "policy_loss",
        "env",
        "30%",
        "backward",
        "optimizer",
    ):
        assert expected in text, expected


def test_dashboard_shows_the_score_and_its_episodes() -> None:
    out = io.StringIO()
    score = RunScore()
    dashboard = Dashboard(
        "cartpole", console=Console(file=out, width=160, force_terminal=False), score=score
    )
    scored = ScoredSinks([dashboard], score)
    scored.log({**METRICS, "performance/episodes": 40.0}, step=4096)
    # An iteration in which no episode ended keeps the env table of the score's episodes.
    scored.log({k: v for k, v in METRICS.items() if not k.startswith("environment/")}, 8192)
    dashboard.close()
    last = out.getvalue().split("puffer · cartpole")[-1]
    assert "score 21.5 (episode_return, 40 episodes)" in last
    assert "episode_return" in last.split("env")[1]


def test_progress_lines_say_steps_speed_score_losses_and_time_left() -> None:
    out = io.StringIO()
    score = RunScore()
    lines = ScoredSinks([ProgressLines(out, interval=3600, label="cartpole", score=score)], score)
    lines.log({**METRICS, "performance/episodes": 40.0}, step=1024)
    lines.log({**METRICS, "performance/iteration": 4.0}, step=2048)  # within the interval: none
    lines.log({**METRICS, "performance/iteration": 10.0}, step=5120)  # the last iteration: always
    written = out.getvalue().splitlines()
    assert len(written) == 2
    first = written[0]
    assert first.startswith("[0s] cartpole step 1,024/3,413 (30%) | 123,456 steps/s |")
    assert "score 21.5 (episode_return, 40 episodes)" in first
    assert "policy_loss -0.01 value_loss nan" in first and first.endswith("| left 1m 15s")
    assert "step 5,120/5,120 (100%)" in written[1]


def _wait_for(lines: io.StringIO, count: int, seconds: float = 30.0) -> list[str]:
    """The lines written once there are `count` of them (or when `seconds` ran out)."""
    deadline = time.monotonic() + seconds
    while len(lines.getvalue().splitlines()) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    return lines.getvalue().splitlines()


def test_progress_lines_say_an_epoch_is_in_progress_when_it_runs_long() -> None:
    out = io.StringIO()
    lines = ProgressLines(out, interval=0.01, label="cartpole", heartbeat=0.05)
    # Before the first iteration ends: the run is alive.
    assert _wait_for(out, 1)[0] == "[0s] cartpole first iteration in progress"
    lines.log({**METRICS, "performance/iteration": 1.0}, step=1024)
    written = _wait_for(out, len(out.getvalue().splitlines()) + 2)
    assert written[-1] == "[0s] cartpole step 1,024/10,240 (10%) | iteration 2/10 in progress"
    # The last iteration's line is the last line: nothing is in progress after it.
    lines.log({**METRICS, "performance/iteration": 10.0}, step=10240)
    count = len(out.getvalue().splitlines())
    time.sleep(0.3)
    assert len(out.getvalue().splitlines()) == count
    assert "step 10,240/10,240 (100%)" in out.getvalue().splitlines()[-1]
    lines.close()
    assert not lines._beats.is_alive()


def test_progress_heartbeat_ends_with_close_or_with_its_sink() -> None:
    out = io.StringIO()
    closed = ProgressLines(out, interval=3600, heartbeat=0.05)
    closed.close()
    assert not closed._beats.is_alive()
    dropped = ProgressLines(out, interval=0.01, heartbeat=0.05)
    thread = dropped._beats
    del dropped
    gc.collect()
    thread.join(timeout=10)
    assert not thread.is_alive()
    # A file that goes away stops the lines quietly (no exception in the thread).
    gone = io.StringIO()
    broken = ProgressLines(gone, interval=0.01, heartbeat=0.05)
    gone.close()
    time.sleep(0.3)
    assert broken._stop.is_set()
    broken.close()


def test_wandb_sink_offline_places_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("wandb")
    from puffer.train.wandb_sink import WandbSink

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.chdir(tmp_path)
    config = Config(
        train=TrainConfig(
            run_id="offline-test",
            wandb_project="proj",
            wandb_entity="team",
            wandb_group="grp",
            wandb_tags="a, b",
        )
    )
    run_dir = tmp_path / "experiments" / "cartpole" / "offline-test"
    sink = WandbSink(config, "cartpole", run_dir)
    sink.log({"losses/policy_loss": 0.5}, step=10)
    sink.log({"losses/policy_loss": 0.25}, step=20)
    run = sink.run
    assert run.config["train"]["run_id"] == "offline-test"
    assert (run.project, run.entity, run.group, tuple(run.tags)) == (
        "proj",
        "team",
        "grp",
        ("a", "b"),
    )
    assert run.id == "cartpole-offline-test"
    sink.close()
    sink.close()
    assert list((run_dir / "wandb").rglob("*.wandb")), "no offline run file in <run dir>/wandb"
    assert not (tmp_path / "wandb").exists(), "wandb wrote into the current directory"


def test_trainer_reports_where_the_time_goes() -> None:
    """Every part of the split is in the metrics, each a fraction of the iteration, summing to 1."""
    env = make("squared", num_envs=16)
    config = TrainConfig(horizon=8, minibatch_size=32, total_timesteps=256, device="cpu")
    trainer = PuffeRL(config, env, make_policy(PolicyConfig(hidden_size=8, recurrent="lstm"), env))
    trainer.collect()
    trainer.train()
    metrics = trainer.mean_and_log()
    trainer.close()
    env.close()
    split = {key: metrics[f"time/{key}"] for key in (*TIME_SPLIT, "other")}
    assert all(0 <= value <= 1 for value in split.values()), split
    assert sum(split.values()) == pytest.approx(1.0, abs=1e-6)
    # An iteration of 4 minibatches spends measurable time in each timed part of the update.
    assert all(split[key] > 0 for key in ("rollout", "forward", "backward", "optimizer")), split


def test_metrics_count_the_episodes_their_means_cover() -> None:
    """`performance/episodes` is the number of episodes averaged in this iteration's env means."""
    env = puffer.vector.make("gym-CartPole-v1", num_instances=4, seed=0)
    config = TrainConfig(horizon=64, minibatch_size=64, total_timesteps=256, device="cpu")
    trainer = PuffeRL(config, env, make_policy(PolicyConfig(hidden_size=8), env))
    trainer.collect()
    episodes = len(trainer.stats["episode_return"])
    metrics = trainer.mean_and_log()
    assert episodes > 0
    assert metrics["performance/episodes"] == episodes
    assert trainer.mean_and_log()["performance/episodes"] == 0
    trainer.close()
    env.close()


def test_time_left_reads_the_runs_average_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    """One slow iteration (a loaded machine) moves the time left by the run's average, not by
    that iteration's rate alone."""
    clock = [0.0]
    monkeypatch.setattr(time, "perf_counter", lambda: clock[0])
    env = make("squared", num_envs=16)  # a batch of 16 agents x horizon 8 = 128 steps
    config = TrainConfig(horizon=8, minibatch_size=32, total_timesteps=512, device="cpu")
    trainer = PuffeRL(config, env, make_policy(PolicyConfig(hidden_size=8), env))
    left = []
    for seconds in (1.0, 1.0, 10.0):
        clock[0] += seconds
        trainer.global_step += 128
        trainer.iteration += 1
        left.append(trainer.mean_and_log()["performance/time_left"])
    trainer.close()
    env.close()
    # 3 iterations left at 1 s each, then 2; after the 10 s iteration, 1 iteration at the 4 s
    # average.
    assert left == pytest.approx([3.0, 2.0, 4.0])


def test_a_progress_line_counts_one_episode_in_the_singular() -> None:
    out = io.StringIO()
    score = RunScore()
    lines = ScoredSinks([ProgressLines(out, interval=3600, label="cartpole", score=score)], score)
    lines.log({**METRICS, "performance/episodes": 1.0}, step=1024)
    lines.close()
    assert "score 21.5 (episode_return, 1 episode)" in out.getvalue()


def test_no_in_progress_line_while_epochs_keep_ending(monkeypatch: pytest.MonkeyPatch) -> None:
    """Iterations ending between due lines keep the heartbeat quiet, so an in-progress line never
    comes a moment before the iteration line that is due (the same progress twice)."""
    clock = [0.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    out = io.StringIO()
    lines = ProgressLines(out, interval=30, label="cartpole", heartbeat=5)
    for now, iteration in ((1.0, 1.0), (20.0, 2.0)):  # the second is within the interval: no line
        clock[0] = now
        lines.log({**METRICS, "performance/iteration": iteration}, step=int(1024 * iteration))
    clock[0] = 31.0  # 30 s since the last line, 11 s since an iteration ended
    lines.beat()
    clock[0] = 31.5
    lines.log({**METRICS, "performance/iteration": 3.0}, step=3072)
    lines.close()
    written = out.getvalue().splitlines()
    assert len(written) == 2 and "in progress" not in out.getvalue(), written


def test_rows_logged_under_the_old_names_read_under_the_new(tmp_path: Path) -> None:
    """Runs logged `performance/epoch(s)` before the rename; every reader renames them, and a
    row that holds both names keeps the new one's value."""
    path = tmp_path / "metrics.jsonl"
    old = '{"step": 1, "performance/epoch": 1.0, "performance/epochs": 2.0}\n'
    both = '{"step": 2, "performance/epoch": 9.0, "performance/iteration": 2.0}\n'
    path.write_text(old + both)
    rows = read_metrics(path).rows
    assert rows == [
        {"step": 1, "performance/iteration": 1.0, "performance/iterations": 2.0},
        {"step": 2, "performance/iteration": 2.0},
    ]
    # Truncating for a resume keeps the lines as they were written, and reads them renamed.
    assert truncate_jsonl(path, 1).rows == rows[:1] and path.read_text() == old
