"""Every backend, sync and async, equals stepping each env alone (1,000 steps per env)."""

from __future__ import annotations

import pytest

from puffer.vector import make
from puffer.vector.testing import DeterministicEnv, check_against_single_envs

ENVS = {
    "single-agent": {},
    "multi-agent": {"num_agents": 3, "action": "multidiscrete"},
    "bytes-obs-box-action": {"obs": "bytes", "action": "box"},
}

# (backend, num_workers, batch_size, zero_copy) over 4 envs.
MODES = {
    "serial-sync": ("serial", 4, 4, True),
    "serial-async": ("serial", 4, 2, True),
    "mp-sync": ("multiprocessing", 2, 4, True),
    "mp-async-zero-copy": ("multiprocessing", 4, 2, True),
    "mp-async-gather": ("multiprocessing", 4, 1, False),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("env", ENVS)
def test_vector_matches_single_envs(env: str, mode: str) -> None:
    backend, workers, batch, zero_copy = MODES[mode]
    with make(
        DeterministicEnv,
        4,
        backend=backend,
        num_workers=workers,
        batch_size=batch,
        zero_copy=zero_copy,
        env_kwargs=ENVS[env],
    ) as vec:
        check_against_single_envs(vec, steps=1000, seed=7)
