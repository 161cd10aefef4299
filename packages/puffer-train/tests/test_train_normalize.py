"""Observation and reward normalization: the running statistics, and that checkpoints keep them
(the policy's for evaluation, the trainer's reward scaler for resume)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from puffer.train import Config, PolicyConfig, PuffeRL, TrainConfig, VecConfig, make_policy, train
from puffer.train import checkpoint as ckpt
from puffer.train.normalize import ObsNormalizer, RewardScaler, RunningMeanStd
from puffer.train.run import make_vecenv


def test_running_statistics_match_numpy_over_weighted_batches() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(5.0, [1.0, 2.0, 3.0], size=(500, 3)).astype(np.float32)
    keep = rng.random(500) < 0.7  # rows with weight 0 (padded agents) must not count
    stats = RunningMeanStd((3,))
    for rows, weights in zip(np.array_split(x, 9), np.array_split(keep, 9), strict=True):
        stats.update(torch.from_numpy(rows), torch.from_numpy(weights))
    stats.update(torch.from_numpy(x[:4]), torch.zeros(4))  # an all-padding batch: no change
    np.testing.assert_allclose(stats.mean.numpy(), x[keep].mean(0), rtol=1e-5)
    np.testing.assert_allclose(stats.var.numpy(), x[keep].var(0), rtol=1e-4)
    assert stats.count.item() == keep.sum()


def test_obs_normalizer_standardizes_and_clips() -> None:
    norm = ObsNormalizer(2, clip=3.0)
    data = torch.tensor([[0.0, 10.0], [2.0, 30.0]])
    norm.update(data)
    out = norm(torch.tensor([[1.0, 20.0], [101.0, 20.0]]))
    assert out[0].abs().max() < 1e-3
    assert out[1, 0] == pytest.approx(3.0)  # 100 std away, clipped


def test_reward_scaler_divides_by_the_return_std_and_restarts_returns() -> None:
    scaler = RewardScaler(num_agents=2, gamma=0.5)
    ids = torch.tensor([0, 1])
    done = torch.tensor([False, True])
    scaler(torch.tensor([2.0, 4.0]), done, ids)
    # Agent 1's episode ended: its return restarts at 0; agent 0's carries on.
    assert scaler.returns.tolist() == [2.0, 0.0]
    scaled = scaler(torch.tensor([2.0, 2.0]), torch.tensor([False, False]), ids)
    # Returns seen: [2, 4], then [3, 2]: variance 0.6875.
    assert scaled.tolist() == pytest.approx([2 / 0.6875**0.5] * 2, rel=1e-5)


def _config(tmp_path, **train) -> Config:
    return Config(
        train=TrainConfig(
            horizon=16,
            minibatch_size=32,
            total_timesteps=256,
            device="cpu",
            optimizer="adam",
            normalize_reward=True,
            data_dir=str(tmp_path),
            run_id="run",
            **train,
        ),
        policy=PolicyConfig(hidden_size=16, normalize_obs=True),
        vec=VecConfig(backend="serial", num_instances=2),
    )


def test_checkpoint_keeps_the_statistics_for_eval_and_resume(tmp_path) -> None:
    config = _config(tmp_path)
    result = train("gym-Pendulum-v1", config)
    trained = result.policy.encoder.normalizer.stats
    assert trained.count.item() >= 256 and trained.var.min() > 0

    # Evaluation builds the policy from the checkpoint alone and normalizes like training.
    state = ckpt.load(result.run_dir / "checkpoint.pt")
    env = make_vecenv("gym-Pendulum-v1", config)
    try:
        loaded = ckpt.load_policy(result.run_dir / "checkpoint.pt", env)
        stats = loaded.encoder.normalizer.stats
        for name in ("mean", "var", "count"):
            assert torch.equal(getattr(stats, name), getattr(trained, name))
        obs = torch.randn(5, 3)
        expected = result.policy.cpu().eval().forward_eval(obs, ())[1]
        assert torch.allclose(loaded.forward_eval(obs, ())[1], expected)

        # Resume: the trainer's reward scaler comes back with its return statistics.
        saved = state["reward_scaler"]
        assert saved["stats.count"].item() >= 256
        resume = _config(tmp_path, resume=True)
        trainer = PuffeRL(resume, env, make_policy(resume.policy, env))
        trainer.load_state_dict(state)
        assert torch.equal(trainer.reward_scaler.stats.var, saved["stats.var"])
        assert torch.equal(trainer.reward_scaler.returns, saved["returns"])
        trainer.close()
    finally:
        env.close()
