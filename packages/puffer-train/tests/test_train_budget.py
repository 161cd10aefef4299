"""A budget that is not a whole number of batches: rounded up to whole iterations, and said so."""

from __future__ import annotations

from pathlib import Path

from puffer.train import Config, TrainConfig, VecConfig, train
from puffer.train.config import Sizes
from puffer.train.run import budget_note


def _sizes(total: int, horizon: int = 32, agents: int = 8) -> Sizes:
    return Sizes.derive(TrainConfig(horizon=horizon, total_timesteps=total), num_agents=agents)


def test_a_whole_number_of_batches_needs_no_note() -> None:
    assert budget_note(_sizes(512), 512) is None


def test_a_budget_between_batches_says_the_steps_it_trains() -> None:
    note = budget_note(_sizes(1000), 1000)
    assert note == (
        "train.total_timesteps 1,000 is not a whole number of batches of 256 agent steps "
        "(8 agents x horizon 32); training 4 iterations = 1,024 steps, rounded up"
    )


def test_a_budget_under_one_batch_says_it_trains_a_whole_batch() -> None:
    note = budget_note(_sizes(20_000, horizon=512, agents=1024), 20_000)
    assert note is not None
    assert note.startswith("train.total_timesteps 20,000 is less than one batch of 524,288")
    assert "training 1 iteration = 524,288 steps" in note and "lower train.horizon" in note


def test_ranks_share_the_batch_in_the_note() -> None:
    sizes = Sizes.derive(TrainConfig(horizon=32, total_timesteps=600), num_agents=8, world_size=2)
    assert "512 agent steps (8 agents x horizon 32, over 2 ranks)" in budget_note(sizes, 600, 2)


def test_train_tells_its_caller_and_trains_the_rounded_budget(tmp_path: Path) -> None:
    config = Config(
        train=TrainConfig(
            total_timesteps=40, horizon=16, minibatch_size=64, device="cpu", data_dir=str(tmp_path)
        ),
        vec=VecConfig(backend="serial", num_instances=4),
    )
    notes: list[str] = []
    result = train("gym-CartPole-v1", config, notify=notes.append)
    assert result.global_step == 64 and result.iterations == 1
    assert notes == [
        "train.total_timesteps 40 is less than one batch of 64 agent steps (4 agents x horizon "
        "16); training 1 iteration = 64 steps (for fewer, lower train.horizon or the env's agents)"
    ]
