"""`puffer train` with a budget that is not a whole number of batches says what it trains."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from puffer.cli.main import app


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # runs write experiments/ under the working directory


def test_a_budget_under_one_batch_is_not_changed_silently() -> None:
    # cartpole's batch is 256 agent steps (8 agents x horizon 32).
    result = CliRunner().invoke(
        app, ["train", "cartpole", "--train.total-timesteps", "100", "--no-dashboard"]
    )
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert (
        "note: train.total_timesteps 100 is less than one batch of 256 agent steps (8 agents x "
        "horizon 32); training 1 iteration = 256 steps" in output
    )
    assert "done: 256 steps in 1 iteration;" in output
