"""Saved data written before "epoch" was renamed "iteration" still loads and displays.

`tests/data/run_before_the_iteration_rename/squared/<run>/` is a run folder that main wrote
before the rename (`puffer train squared --train.total-timesteps 2048 --train.horizon 16
--policy.hidden-size 8 --env.num-envs 32`): its metrics rows say `performance/epoch(s)`, its
checkpoint's trainer state `epoch`. The metrics readers, the dashboard and resume read them
under the new names.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from puffer.train import Config, train
from puffer.train import checkpoint as ckpt
from puffer.train.metrics import read_metrics
from puffer.train.paths import RunPaths
from puffer.view.experiments import read_run

OLD = Path(__file__).parent / "data" / "run_before_the_iteration_rename"
RUN_ID = "20261202-033846-11119"
OLD_RUN = OLD / "squared" / RUN_ID


def _iterations(rows: list[dict]) -> list[tuple[float, float]]:
    return [(row["performance/iteration"], row["performance/iterations"]) for row in rows]


def test_the_old_files_hold_the_old_names() -> None:
    text = (OLD_RUN / RunPaths.METRICS).read_text()
    assert '"performance/epoch": 1.0' in text and "performance/iteration" not in text
    assert "epoch" in ckpt.torch.load(OLD_RUN / RunPaths.CHECKPOINT, weights_only=True)["trainer"]


def test_an_old_runs_metrics_read_under_the_new_names() -> None:
    rows = read_metrics(OLD_RUN / RunPaths.METRICS).rows
    assert _iterations(rows) == [(1.0, 4.0), (2.0, 4.0), (3.0, 4.0), (4.0, 4.0)]
    assert not any(key.startswith("performance/epoch") for row in rows for key in row)


def test_the_dashboard_draws_an_old_run_under_the_new_names() -> None:
    entry = read_run(OLD_RUN, OLD)
    assert entry["error"] is None and entry["steps"] == 2048.0
    assert entry["metrics"]["performance/iteration"] == [1.0, 2.0, 3.0, 4.0]
    assert not [key for key in entry["metrics"] if "epoch" in key]


def test_an_old_checkpoint_loads_and_resumes(tmp_path: Path) -> None:
    assert ckpt.load(OLD_RUN / RunPaths.CHECKPOINT)["trainer"]["iteration"] == 4
    run_dir = tmp_path / "squared" / RUN_ID
    shutil.copytree(OLD_RUN, run_dir)
    config = Config.from_dict(json.loads((OLD_RUN / RunPaths.CONFIG).read_text()))
    config.train.data_dir, config.train.resume = str(tmp_path), True
    config.train.total_timesteps = 2560  # one iteration more
    result = train("squared", config)
    assert (result.global_step, result.iterations) == (2560, 5)
    trainer = ckpt.load(run_dir / RunPaths.CHECKPOINT)["trainer"]
    assert trainer["iteration"] == 5 and "epoch" not in trainer
    # The resumed run appended rows under the new names; all of them read alike.
    rows = read_metrics(run_dir / RunPaths.METRICS).rows
    assert _iterations(rows) == [(float(i), 4.0) for i in range(1, 5)] + [(5.0, 5.0)]
