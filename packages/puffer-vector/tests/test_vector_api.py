"""Call order, argument checks, batching and zero-copy views."""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest

from puffer.core import APIUsageError
from puffer.vector import Multiprocessing, Serial, make
from puffer.vector.testing import DeterministicEnv, check_against_single_envs

BACKENDS = ["serial", "multiprocessing"]


@pytest.fixture(params=BACKENDS)
def vec(request):
    vec = make(DeterministicEnv, 4, backend=request.param, num_workers=2)
    yield vec
    vec.close()


def test_vector_call_order_names_the_next_legal_call(vec) -> None:
    with pytest.raises(APIUsageError, match=r"recv\(\) called before the first reset.*reset\(\)"):
        vec.recv()
    with pytest.raises(APIUsageError, match=r"send\(\) called before the first reset"):
        vec.send(np.zeros(4, np.int32))
    vec.async_reset(seed=0)
    with pytest.raises(
        APIUsageError,
        match=r"send\(\) called while a recv\(\) is pending.*"
        r"call recv\(\) next",
    ):
        vec.send(np.zeros(4, np.int32))
    with pytest.raises(APIUsageError, match=r"async_reset\(\) called while a recv\(\) is pending"):
        vec.async_reset()
    vec.recv()
    with pytest.raises(APIUsageError, match=r"recv\(\) called after recv\(\).*call send\(\)"):
        vec.recv()
    vec.step(np.zeros(4, np.int32))
    vec.reset(seed=1)  # legal again once the batch is back
    vec.close()
    with pytest.raises(APIUsageError, match=r"step\(\) called on .* after close\(\)"):
        vec.step(np.zeros(4, np.int32))


@pytest.mark.parametrize(
    ("actions", "match"),
    [
        (np.zeros(3, np.int32), r"actions have shape \(3,\), expected \(4,\)"),
        (np.zeros(4, np.float32), r"dtype float32, expected integers .*pass int32"),
        (np.array([0, 1, 5, 0], np.int32), r"action 5 at row 2 is outside Discrete\(5\)"),
        (np.array([0, -1, 0, 0]), r"action -1 at row 1 is outside"),
    ],
    ids=["shape", "dtype", "too-high", "negative"],
)
def test_vector_send_validates_actions(vec, actions, match) -> None:
    vec.reset(seed=0)
    with pytest.raises(APIUsageError, match=match):
        vec.step(actions)
    vec.step(np.zeros(4, np.int32))  # a refused send changes nothing


def test_vector_float_actions_must_be_floats() -> None:
    with make(DeterministicEnv, 2, env_kwargs={"action": "box"}) as vec:
        vec.reset(seed=0)
        with pytest.raises(APIUsageError, match=r"dtype int64, expected floats"):
            vec.step(np.zeros((2, 2), np.int64))
        vec.step(np.zeros((2, 2), np.float32))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"num_workers": 3}, r"num_workers=3 must divide num_instances=4"),
        (
            {"num_workers": 2, "instances_per_recv": 1},
            r"instances_per_recv=1 must divide .* envs_per_worker=2",
        ),
        ({"num_workers": 2, "instances_per_recv": 3}, r"instances_per_recv=3"),
        ({"backend": "threads"}, r"unknown backend 'threads'; use one of"),
    ],
)
def test_vector_rejects_bad_sizes(kwargs, match) -> None:
    with pytest.raises(APIUsageError, match=match):
        make(DeterministicEnv, 4, **kwargs)


def test_vector_sync_calls_refuse_partial_batches() -> None:
    with Serial(DeterministicEnv, 4, instances_per_recv=2) as vec:
        with pytest.raises(
            APIUsageError, match=r"instances_per_recv=2 < num_instances=4; use async_reset"
        ):
            vec.reset(seed=0)


def test_vector_env_creator_by_registered_name() -> None:
    with make("gym-CartPole-v1", 2, backend="multiprocessing", num_workers=2) as vec:
        obs, _infos = vec.reset(seed=0)
        assert obs.shape == (2, 4)
        assert vec.step(np.ones(2, np.int32))[1].tolist() == [1.0, 1.0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_vector_batches_are_views_of_the_shared_buffer(backend) -> None:
    with make(DeterministicEnv, 4, backend=backend, num_workers=4, instances_per_recv=2) as vec:
        vec.async_reset(seed=0)
        obs, rewards, _terminals, _truncations, _infos, agent_ids, masks = vec.recv()
        for array, name in [(obs, "observations"), (rewards, "rewards"), (masks, "masks")]:
            assert np.shares_memory(array, getattr(vec.buf, name))
        assert agent_ids.tolist() in ([0, 1], [2, 3])
        assert obs.shape == (2, 4) and vec.observation_space.shape == (2, 4)


def test_vector_gathered_batches_are_copies_with_their_rows() -> None:
    with Multiprocessing(
        DeterministicEnv, 4, num_workers=4, instances_per_recv=2, zero_copy=False
    ) as v:
        v.async_reset(seed=0)
        obs, _, _, _, _, agent_ids, _ = v.recv()
        assert np.array_equal(obs, v.buf.observations[agent_ids])


def test_vector_recv_returns_the_first_ready_block() -> None:
    with Multiprocessing(DeterministicEnv, 4, num_workers=2, instances_per_recv=2) as vec:
        vec.async_reset(seed=0)
        first = vec.recv()[5].tolist()
        stalled = vec.worker_pids[first[0] // 2]
        os.kill(stalled, signal.SIGSTOP)  # this block cannot finish its step
        try:
            vec.send(np.zeros(2, np.int32))
            for _ in range(3):
                other = vec.recv()[5].tolist()
                assert other != first
                vec.send(np.zeros(2, np.int32))
        finally:
            os.kill(stalled, signal.SIGCONT)
        # The resumed worker needs a moment to wake (longer on a loaded machine); until it is
        # done the other block may come first, but the stalled block must come back (oldest
        # first, never starved).
        deadline = time.monotonic() + 30
        while vec.recv()[5].tolist() != first:
            assert time.monotonic() < deadline, "the resumed block never came back"
            vec.send(np.zeros(2, np.int32))


def test_vector_seed_of_make_is_used_by_the_first_reset() -> None:
    with Serial(DeterministicEnv, 2, seed=5) as a, Serial(DeterministicEnv, 2) as b:
        assert np.array_equal(a.reset()[0], b.reset(seed=5)[0])


def test_vector_spawn_start_method_with_a_picklable_creator() -> None:
    with Multiprocessing(DeterministicEnv, 4, num_workers=2, start_method="spawn") as vec:
        check_against_single_envs(vec, steps=100, seed=1)


@pytest.mark.parametrize(
    ("old", "new"), [("num_envs", "num_instances"), ("batch_size", "instances_per_recv")]
)
def test_make_refuses_the_old_keywords_naming_the_new(old: str, new: str) -> None:
    with pytest.raises(TypeError, match=rf"make\({old}=\.\.\.\) was renamed {new}.*pass {new}=2"):
        make(DeterministicEnv, **{old: 2})


@pytest.mark.parametrize("cls", [Serial, Multiprocessing])
@pytest.mark.parametrize(
    ("old", "new"), [("num_envs", "num_instances"), ("batch_size", "instances_per_recv")]
)
def test_the_classes_refuse_the_old_keywords_naming_the_new(cls: type, old: str, new: str) -> None:
    name = cls.__name__
    with pytest.raises(
        TypeError, match=rf"^{name}\({old}=\.\.\.\) was renamed {new}.*pass {new}=2$"
    ):
        cls(DeterministicEnv, **{old: 2})
    with pytest.raises(TypeError, match=rf"^{name}\(\) got an unexpected keyword argument 'envs'$"):
        cls(DeterministicEnv, envs=2)


def test_make_takes_the_vec_config_names() -> None:
    with make(DeterministicEnv, num_instances=4, num_workers=2, instances_per_recv=2) as vec:
        assert (vec.num_instances, vec.instances_per_recv) == (4, 2)


def test_workers_default_to_one_per_instance_in_process_and_one_per_core_in_processes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With no num_workers, Serial runs one worker per instance; Multiprocessing the largest
    divisor of the instances not above the usable cores (here 3 of 6 on a faked 4 cores)."""
    monkeypatch.setattr("puffer.vector.base.usable_cores", lambda: 4)
    serial = Serial(DeterministicEnv, num_instances=6)
    assert serial.num_workers == 6
    serial.close()
    processes = Multiprocessing(DeterministicEnv, num_instances=6)
    try:
        assert processes.num_workers == 3 and processes.envs_per_worker == 2
    finally:
        processes.close()
