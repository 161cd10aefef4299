"""An env id whose package does not import: the message names the failed import and the
install line, instead of "no env named ..." and a list of unrelated names.

A missing package is made real with a module name that does not exist, or with
`sys.modules[name] = None`, which makes Python's own import of `name` fail as if it were absent.
"""

from __future__ import annotations

import sys

import pytest

from puffer.core import EnvNotFoundError, MissingPackageError, make, registry, resolve_gym_id


@pytest.fixture(autouse=True)
def _fresh_gym_lookups():
    # resolve_gym_id caches its answers; an id resolved before a module was hidden stays True.
    resolve_gym_id.cache_clear()
    yield
    resolve_gym_id.cache_clear()


def test_a_gym_module_that_does_not_exist_is_named() -> None:
    with pytest.raises(MissingPackageError) as caught:
        make("gym-puffer_no_such_module:Empty-v0")
    message = str(caught.value)
    assert "needs the module puffer_no_such_module, whose import failed" in message
    assert "No module named 'puffer_no_such_module'" in message
    assert "pip install puffer-no-such-module" in message
    assert "did you mean" not in message
    assert isinstance(caught.value, EnvNotFoundError)  # callers catching the old error still do


def test_gym_minigrid_without_minigrid_names_the_family_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "minigrid", None)
    with pytest.raises(
        MissingPackageError,
        match=r"gym-minigrid:MiniGrid-DoorKey-6x6-v0 needs the module minigrid.*"
        r'pip install "puffer-envs\[minigrid\]"',
    ):
        make("gym-minigrid:MiniGrid-DoorKey-6x6-v0")


def test_pettingzoo_ids_without_pettingzoo_name_the_install_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "pettingzoo", None)
    with pytest.raises(
        MissingPackageError,
        match=r"pettingzoo-classic.tictactoe_v3 needs PettingZoo.*"
        r'pip install "puffer-core\[classic\]"',
    ):
        make("pettingzoo-classic.tictactoe_v3")
    with pytest.raises(MissingPackageError, match=r'pip install "puffer-core\[pettingzoo\]"'):
        make("pettingzoo-magent2.environments.battle_v4")


def test_a_pettingzoo_creator_module_that_does_not_exist_is_named() -> None:
    with pytest.raises(MissingPackageError, match="needs the module puffer_no_such_module"):
        make("pettingzoo-puffer_no_such_module:env")


def test_a_module_whose_dependency_is_missing_names_the_dependency(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The module exists; what fails is an import inside it, and that is what to install.
    monkeypatch.delitem(sys.modules, "puffer.core.testing", raising=False)
    monkeypatch.setitem(sys.modules, "gymnasium", None)
    with pytest.raises(
        MissingPackageError,
        match=r"needs the module puffer\.core\.testing.*halted.*pip install gymnasium",
    ):
        make("pettingzoo-puffer.core.testing:env")


def test_a_family_id_without_puffer_envs_names_its_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # What the registry sees where puffer-envs is not installed: none of its entry points.
    entries = {
        name: entry
        for name, entry in registry._entries().items()
        if not entry[0].startswith("puffer.envs.")
    }
    monkeypatch.setattr(registry, "_entries", lambda: entries)
    with pytest.raises(
        MissingPackageError,
        match=r"atari-breakout is an id of puffer-envs' atari family, which is not installed.*"
        r'pip install "puffer-envs\[atari\]"',
    ):
        make("atari-breakout")
    with pytest.raises(MissingPackageError, match=r"puffer-envs\[crafter\]"):
        make("crafter")


def test_an_unknown_name_of_no_package_still_suggests_close_names() -> None:
    with pytest.raises(EnvNotFoundError, match="did you mean squared") as caught:
        make("squred")
    assert not isinstance(caught.value, MissingPackageError)
