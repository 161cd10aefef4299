"""`puffer.train.runtime`: `train.torch_threads` (an explicit count, or auto (0) from the cores and
the env workers), the device, and the settings applied to torch."""

import doctest
import os

import pytest
import torch

from puffer.core import usable_cores
from puffer.train import Config, TrainConfig, VecConfig, runtime
from puffer.train.runtime import apply_torch_settings, resolve_device, torch_threads


def _config(threads: int = 0, backend: str = "native", workers: int = 1) -> Config:
    num_envs = 1 if backend == "native" else 4
    return Config(
        train=TrainConfig(torch_threads=threads),
        vec=VecConfig(backend=backend, num_instances=num_envs, num_workers=workers),
    )


def test_the_default_is_auto():
    assert TrainConfig().torch_threads == 0


def test_an_explicit_count_is_kept(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "5")
    assert torch_threads(_config(3, "multiprocessing", 2)) == 3


@pytest.mark.parametrize(
    ("backend", "workers", "expected"),
    [("native", 1, 6), ("serial", 3, 6), ("multiprocessing", 2, 4), ("ray", 5, 1)],
)
def test_auto_leaves_a_core_per_env_worker(monkeypatch, backend, workers, expected):
    monkeypatch.setenv("OMP_NUM_THREADS", "6")
    assert torch_threads(_config(0, backend, workers)) == expected


@pytest.mark.parametrize("value", [None, "4,2", "0"])
def test_auto_counts_the_cores_without_a_usable_omp_setting(monkeypatch, value):
    if value is None:
        monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    else:
        monkeypatch.setenv("OMP_NUM_THREADS", value)
    assert torch_threads(_config()) == usable_cores() == len(os.sched_getaffinity(0))


def test_apply_sets_torch(monkeypatch):
    before = torch.get_num_threads()
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    try:
        apply_torch_settings(_config())
        assert torch.get_num_threads() == 2
        apply_torch_settings(_config(1))
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_resolve_device():
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device("auto") == torch.device(expected)
    assert resolve_device("cpu") == torch.device("cpu")


def test_docstring_examples():
    result = doctest.testmod(runtime)
    assert result.failed == 0 and result.attempted > 0


def test_the_trainer_checks_the_thread_count_it_does_not_set(monkeypatch):
    from puffer.core import APIUsageError, make
    from puffer.train import PolicyConfig, PuffeRL, make_policy

    before = torch.get_num_threads()
    env = make("gym-CartPole-v1")
    try:
        small = dict(horizon=8, minibatch_size=8, total_timesteps=16, device="cpu")
        config = Config(train=TrainConfig(torch_threads=2, **small))
        torch.set_num_threads(1)
        policy = make_policy(PolicyConfig(hidden_size=8), env)
        with pytest.raises(APIUsageError, match=r"thread count is 1 but the config asks for 2"):
            PuffeRL(config, env, policy)
        assert torch.get_num_threads() == 1
        apply_torch_settings(config)
        PuffeRL(config, env, make_policy(PolicyConfig(hidden_size=8), env)).close()
    finally:
        env.close()
        torch.set_num_threads(before)
