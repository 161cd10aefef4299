"""The TensorBoard sink, chosen by `train.tensorboard`: its event file read back holds the
same scalars, at the same steps, as the run's JSONL metrics."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from puffer.train import Config, PolicyConfig, TrainConfig, VecConfig, train
from puffer.train.metrics import read_jsonl

event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")


def test_tensorboard_sink_event_file_matches_jsonl(tmp_path: Path) -> None:
    config = Config(
        train=TrainConfig(
            total_timesteps=512,
            horizon=16,
            batch_size=128,
            minibatch_size=64,
            device="cpu",
            data_dir=str(tmp_path),
            run_id="tb",
            tensorboard=True,
        ),
        policy=PolicyConfig(hidden_size=16),
        vec=VecConfig(backend="serial", num_instances=8),
    )
    result = train("gym-CartPole-v1", config)
    log_dir = result.run_dir / "tensorboard"
    assert len(list(log_dir.glob("events.out.tfevents.*"))) == 1
    events = event_accumulator.EventAccumulator(str(log_dir), size_guidance={"scalars": 0})
    events.Reload()
    rows = read_jsonl(result.run_dir / "metrics.jsonl")
    assert len(rows) == 4  # 512 steps / 128 per epoch
    assert set(events.Tags()["scalars"]) == {k for row in rows for k in row} - {"step"}
    for row in rows:
        step = row.pop("step")
        for name, value in row.items():
            logged = {e.step: e.value for e in events.Scalars(name)}
            if value is None:  # non-finite: JSONL writes null, TensorBoard the float itself
                assert math.isnan(logged[step]) or math.isinf(logged[step]), name
            else:
                assert logged[step] == pytest.approx(value, rel=1e-6, abs=1e-6), name
    assert "config/text_summary" in events.Tags()["tensors"]  # the resolved config, as text
