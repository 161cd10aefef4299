"""make(): entry points, gym-<id>, pettingzoo-<module>, close-name suggestions; doctests."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import numpy as np
import pytest

from puffer.core import (
    ENTRY_POINT_GROUP,
    EnvNotFoundError,
    GymnasiumPufferEnv,
    PettingZooPufferEnv,
    make,
    registered_envs,
    resolve_gym_id,
)


@pytest.fixture
def installed_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A real (tiny) installed distribution declaring one env in the puffer.envs group."""
    dist_info = tmp_path / "puffer_test_envs-0.0.1.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: puffer-test-envs\n")
    (dist_info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\ntest-space = puffer.core.emulation:GymnasiumPufferEnv\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return "test-space"


def test_entry_point_names_resolve(installed_env: str) -> None:
    assert registered_envs()[installed_env] == "puffer.core.emulation:GymnasiumPufferEnv"
    env = make(installed_env, env="CartPole-v1")
    assert isinstance(env, GymnasiumPufferEnv) and env.name == "CartPole-v1"


def test_gym_prefix() -> None:
    env = make("gym-CartPole-v1", max_episode_steps=5)
    env.reset(seed=0)
    finished = [env.step(np.zeros(1, np.int32))[4] for _ in range(5)]
    assert finished[-1] == [{"episode_return": 5.0, "episode_length": 5.0}]


def test_gym_module_form_imports_the_registering_module() -> None:
    # MiniGrid registers its ids when imported, as `gymnasium.make("minigrid:...")` relies on.
    env = make("gym-minigrid:MiniGrid-Empty-5x5-v0")
    assert isinstance(env, GymnasiumPufferEnv) and env.name == "MiniGrid-Empty-5x5-v0"
    # Its `mission` (a string space) is left out of the row; direction and image remain.
    assert list(env.obs_layout.tree) == ["direction", "image"]
    env.close()
    with pytest.raises(EnvNotFoundError, match=r"gym-no_such_module:Empty-v0 needs the module"):
        make("gym-no_such_module:Empty-v0")
    assert resolve_gym_id("minigrid:MiniGrid-Empty-5x5-v0")
    assert not resolve_gym_id("minigrid:NoSuchGrid-v0")


@pytest.mark.parametrize("name", ["pettingzoo-classic.rps_v2", "pettingzoo-classic/rps-v2"])
def test_pettingzoo_prefix(name: str) -> None:
    env = make(name)
    assert isinstance(env, PettingZooPufferEnv) and env.num_agents == 2


@pytest.mark.parametrize(
    ("name", "suggestion"),
    [
        ("gym-CartPol-v1", "gym-CartPole-v1"),
        ("pettingzoo-classic.rps_v3", "pettingzoo-classic/rps-v2"),
    ],
)
def test_unknown_name_suggests_close_names(name: str, suggestion: str) -> None:
    with pytest.raises(
        EnvNotFoundError, match=f"no env named '{name}'; did you mean.*{suggestion}"
    ):
        make(name)


MODULES = [
    "actions",
    "buffer",
    "env",
    "layout",
    "emulation",
    "pettingzoo",
    "registry",
    "vectorization",
    "machine",
    "_install",
]


@pytest.mark.parametrize("module_name", MODULES)
def test_docstring_examples_run(module_name: str) -> None:
    module = importlib.import_module(f"puffer.core.{module_name}")
    globs = {**vars(module), "np": np}
    result = doctest.testmod(module, globs=globs, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
