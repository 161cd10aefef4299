"""One score: what `train` returns is what every epoch of `metrics.jsonl` logged, recomputed
from the rows alone by the stated definition; a resumed run's window goes on across the stop."""

from __future__ import annotations

import doctest
import math
from pathlib import Path

import pytest

import puffer.train.progress
import puffer.train.score
from puffer.train import Config, TrainConfig, VecConfig, train
from puffer.train.metrics import read_jsonl
from puffer.train.paths import RunPaths
from puffer.train.score import SCORE, SCORE_EPISODES, WINDOW_EPISODES, RunScore


def _config(data_dir: Path, steps: int, **train_keys: object) -> Config:
    return Config(
        train=TrainConfig(
            total_timesteps=steps,
            horizon=16,
            minibatch_size=64,
            device="cpu",
            data_dir=str(data_dir),
            run_id="scored",
            **train_keys,
        ),
        vec=VecConfig(backend="serial", num_instances=4),
        env={"max_episode_steps": 20},
    )


def _recomputed(rows: list[dict]) -> list[tuple[float, int]]:
    """(score, episodes) after each row, by the definition in puffer.train.score's docstring:
    the episode-weighted mean over the latest epochs holding >= 100 episodes."""
    out, window = [], []
    for row in rows:
        episodes = row.get("performance/episodes", 0)
        value = row.get("environment/episode_return")
        if episodes and value is not None:
            window.append((episodes, value))
            while sum(n for n, _ in window) - window[0][0] >= WINDOW_EPISODES:
                window.pop(0)
        total = sum(n for n, _ in window)
        out.append((sum(n * v for n, v in window) / total if total else math.nan, int(total)))
    return out


def test_the_score_is_the_same_in_the_result_and_every_metrics_row(tmp_path: Path) -> None:
    result = train("gym-CartPole-v1", _config(tmp_path, 2048))
    rows = read_jsonl(RunPaths(tmp_path, "gym-CartPole-v1", "scored").metrics)
    expected = _recomputed(rows)
    for row, (score, episodes) in zip(rows, expected, strict=True):
        if math.isnan(score):
            assert row[SCORE] is None  # nan is written as null
        else:
            assert row[SCORE] == pytest.approx(score) and row[SCORE_EPISODES] == episodes
    assert result.score_stat == "episode_return"  # "auto": CartPole reports no `score`
    assert result.score == pytest.approx(rows[-1][SCORE])
    assert result.score_episodes == rows[-1][SCORE_EPISODES] >= WINDOW_EPISODES
    assert result.recent["episode_return"] == pytest.approx(result.score)


def test_a_resumed_run_keeps_the_score_window(tmp_path: Path) -> None:
    train("gym-CartPole-v1", _config(tmp_path, 1024))
    result = train("gym-CartPole-v1", _config(tmp_path, 2048, resume=True))
    rows = read_jsonl(RunPaths(tmp_path, "gym-CartPole-v1", "scored").metrics)
    assert [r["step"] for r in rows] == list(range(64, 2049, 64))
    score, episodes = _recomputed(rows)[-1]
    assert result.score == pytest.approx(score) and result.score_episodes == episodes


def test_a_chosen_statistic_is_scored() -> None:
    score = RunScore("episode_length")
    score.update({"environment/episode_length": 7.0, "performance/episodes": 3})
    assert (score.stat, score.value) == ("episode_length", 7.0)
    auto = RunScore()
    auto.update(
        {"environment/score": 2.0, "environment/episode_return": 9.0, "performance/episodes": 1}
    )
    assert (auto.stat, auto.value) == ("score", 2.0)


@pytest.mark.parametrize("module", [puffer.train.score, puffer.train.progress])
def test_docstring_examples(module) -> None:
    result = doctest.testmod(module)
    assert result.failed == 0 and result.attempted > 0
