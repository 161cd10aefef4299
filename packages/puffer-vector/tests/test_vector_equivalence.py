"""Every backend, sync and async, equals stepping each env alone (1,000 steps per env)."""

from __future__ import annotations

import pytest

from puffer.core import GymnasiumPufferEnv
from puffer.core.testing import ACTION_CATALOG, OBSERVATION_CATALOG, SpaceEnv
from puffer.vector import make
from puffer.vector.testing import DeterministicEnv, check_against_single_envs


def nested_space_env(buf=None):
    """Gymnasium env with a nested Dict/Tuple observation and a mixed Dict action."""
    spaces = (OBSERVATION_CATALOG["nested"], ACTION_CATALOG["dict-discrete"])
    return GymnasiumPufferEnv(SpaceEnv, env_args=spaces, buf=buf)


# name -> (env creator, env_kwargs)
ENVS = {
    "native-single-agent": (DeterministicEnv, {}),
    "native-multi-agent": (DeterministicEnv, {"num_agents": 3, "action": "multidiscrete"}),
    "native-bytes-obs-box-action": (DeterministicEnv, {"obs": "bytes", "action": "box"}),
    "gym-cartpole": ("gym-CartPole-v1", {}),
    "gym-nested-spaces": (nested_space_env, {}),
    "pettingzoo-rps": ("pettingzoo-classic.rps_v2", {}),
    # Turn-based, with legal-action masks in their own shared array (random moves include
    # illegal ones, which end the game: a deterministic outcome all the same).
    "pettingzoo-tictactoe": ("pettingzoo-classic.tictactoe_v3", {}),
}

# (backend, num_workers, batch_size, zero_copy) over 4 envs.
MODES = {
    "serial-sync": ("serial", 4, 4, True),
    "serial-async": ("serial", 4, 2, True),
    "mp-sync": ("multiprocessing", 2, 4, True),
    "mp-async-zero-copy": ("multiprocessing", 4, 2, True),
    "mp-async-gather": ("multiprocessing", 4, 1, False),
}


# Native envs under every mode; emulated ones (slower per step) under one sync and one async
# mode per process model.
CASES = [
    (env, mode)
    for env in ENVS
    for mode in MODES
    if env.startswith("native") or mode in ("serial-async", "mp-sync", "mp-async-gather")
]


@pytest.mark.parametrize(("env", "mode"), CASES)
def test_vector_matches_single_envs(env: str, mode: str) -> None:
    backend, workers, batch, zero_copy = MODES[mode]
    creator, env_kwargs = ENVS[env]
    with make(
        creator,
        4,
        backend=backend,
        num_workers=workers,
        instances_per_recv=batch,
        zero_copy=zero_copy,
        env_kwargs=env_kwargs,
    ) as vec:
        check_against_single_envs(vec, steps=1000, seed=7)
