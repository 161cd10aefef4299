"""The TOMLs shipped with puffer-envs: their registrations name them, and they resolve."""

from __future__ import annotations

import doctest
import importlib

import pytest

from puffer.envs import FAMILIES
from puffer.train.config import load_config

ENV_IDS = [env_id for family in FAMILIES.values() for env_id in family.env_ids()]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_every_env_id_has_a_config_that_resolves(env_id: str) -> None:
    config = load_config(env_id)
    family = env_id.split("-")[0]
    expected = {
        "atari": "nature_cnn",
        "minatar": "mlp",
        "minigrid": "mlp",
        "crafter": "nature_cnn",
        "nethack": "puffer.envs.nethack_encoder:NetHackEncoder",
        "magent": "mlp",
        "vizdoom": "nature_cnn",
    }.get(family)
    if expected is not None:
        assert config.policy.encoder == expected
    assert config.train.optimizer == "adam"


def test_overrides_apply_over_the_shipped_config() -> None:
    config = load_config("atari-pong", overrides=["--env.num-envs", "4"])
    assert config.env["num_envs"] == 4 and config.env["game"] == "pong"


MODULES = [
    "puffer.envs.atari",
    "puffer.envs.minatar",
    "puffer.envs.minigrid",
    "puffer.envs.crafter",
    "puffer.envs.butterfly",
    "puffer.envs.nethack",
    "puffer.envs.magent",
    "puffer.envs.vizdoom",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
