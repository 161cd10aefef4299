"""The Ray backend against a real local Ray (one instance for the whole module: it is slow)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from puffer.core import APIUsageError, WorkerError
from puffer.vector import make
from puffer.vector.testing import (
    DeterministicEnv,
    FaultyEnv,
    check_against_single_envs,
    check_final_observations,
)

# Under `uv run`, Ray starts every actor through `uv run` as well (a sync per actor: tens of
# seconds here) unless this is off when ray is imported; the workspace env is already right.
os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
ray = pytest.importorskip("ray")

# Starts a local Ray and its actors: about a minute on 2 cores, so scheduled first.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.mark.parametrize(
    ("batch_size", "zero_copy", "env_kwargs"),
    [
        (4, True, {}),
        (2, True, {"num_agents": 3, "action": "multidiscrete"}),
        (2, False, {"obs": "bytes", "action": "box"}),
    ],
    ids=["sync-single", "async-multi-agent", "async-gather-bytes"],
)
def test_vector_ray_matches_single_envs(local_ray, batch_size, zero_copy, env_kwargs) -> None:
    with make(
        DeterministicEnv,
        4,
        backend="ray",
        num_workers=2,
        instances_per_recv=batch_size,
        zero_copy=zero_copy,
        env_kwargs=env_kwargs,
    ) as vec:
        check_against_single_envs(vec, steps=1000, seed=3)


def test_vector_ray_env_exception_reaches_caller(local_ray) -> None:
    vec = make(FaultyEnv, 2, backend="ray", num_workers=2, env_kwargs={"fail_at": 2})
    vec.reset(seed=0)
    vec.step(np.zeros(2, np.int32))
    with pytest.raises(WorkerError, match="FaultyEnv failed on purpose") as info:
        vec.step(np.zeros(2, np.int32))
    assert info.value.worker in (0, 1)
    with pytest.raises(APIUsageError, match=r"after a worker failed.*call close"):
        vec.step(np.zeros(2, np.int32))
    vec.close()
    vec.close()


@pytest.mark.parametrize("step", [1, 100])
def test_vector_ray_send_checks_actions_every_step(local_ray, step) -> None:
    with make(
        DeterministicEnv, 2, backend="ray", num_workers=2, env_kwargs={"action": "box"}
    ) as vec:
        vec.reset(seed=0)
        for _ in range(step - 1):
            vec.step(np.zeros((2, 2), np.float32))
        with pytest.raises(APIUsageError, match=r"send\(\) on Ray.*nan at row 1, element 0"):
            vec.step(np.array([[0, 0], [np.nan, 0]], np.float32))
        with pytest.raises(APIUsageError, match=r"action 1.5 at row 0, element 1 is outside"):
            vec.step(np.array([[0, 1.5], [0, 0]], np.float32))


@pytest.mark.parametrize("batch_size", [2, 1])
def test_vector_ray_final_observations_match_raw_envs(local_ray, batch_size) -> None:
    import gymnasium

    with make(
        "gym-CartPole-v1",
        2,
        backend="ray",
        num_workers=2,
        instances_per_recv=batch_size,
        env_kwargs={"max_episode_steps": 12},
    ) as vec:
        check_final_observations(
            vec, lambda: gymnasium.make("CartPole-v1", max_episode_steps=12), steps=150
        )


def test_vector_ray_carries_action_masks(local_ray) -> None:
    creator = "pettingzoo-classic.tictactoe_v3"
    with make(creator, 4, backend="ray", num_workers=2, instances_per_recv=2) as vec:
        assert vec.action_masks is not None
        check_against_single_envs(vec, steps=200, seed=3)
