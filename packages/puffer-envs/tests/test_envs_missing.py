"""A family whose library is missing: the entry points still load, making an env says how to
install it in one line, and `puffer list` / `puffer train` show that."""

from __future__ import annotations

import dataclasses

import pytest
from typer.testing import CliRunner

from puffer.cli.main import app
from puffer.core import env_creator, make
from puffer.core._install import PUFFER_ENVS_FAMILIES
from puffer.envs import FAMILIES, MissingDependencyError


@pytest.fixture
def atari_missing(monkeypatch):
    # The real check runs against a module that does not exist, as it would without ale-py.
    missing = dataclasses.replace(FAMILIES["atari"], modules=("puffer_no_such_module",))
    monkeypatch.setitem(FAMILIES, "atari", missing)
    return missing


def test_make_names_the_install_command(atari_missing) -> None:
    assert not atari_missing.installed
    creator = env_creator("atari-breakout")  # loading the entry point needs no library
    assert callable(creator)
    with pytest.raises(MissingDependencyError, match=r'pip install "puffer-envs\[atari\]"'):
        make("atari-breakout")


def test_train_says_it_in_one_line(atari_missing, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["train", "atari-breakout", "--no-dashboard"])
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and result.output.rstrip().endswith(errors[0]), result.output
    assert "atari-breakout needs ale-py" in errors[0]
    assert 'pip install "puffer-envs[atari]"' in errors[0]


def test_list_shows_family_states(atari_missing) -> None:
    result = CliRunner().invoke(app, ["list"])
    assert result.exit_code == 0, result.output
    assert "env families (puffer-envs)" in result.output
    assert 'pip install "puffer-envs[atari]"' in result.output
    for name in ("minatar", "minigrid", "crafter", "butterfly", "nethack", "magent", "vizdoom"):
        assert name in result.output
    assert result.output.count("installed") >= len(FAMILIES) - 1


def test_list_gives_a_missing_family_one_line(atari_missing) -> None:
    result = CliRunner().invoke(app, ["list"])
    assert result.exit_code == 0, result.output
    assert "cannot build" not in result.output
    assert "atari-breakout" not in result.output  # its row would only repeat the hint
    lines = [line for line in result.output.splitlines() if "puffer-envs[atari]" in line]
    assert len(lines) == 1 and "atari" in lines[0], result.output


def test_core_knows_the_families_puffer_envs_has() -> None:
    # puffer-core repeats the table to name the extra where puffer-envs is not installed.
    assert PUFFER_ENVS_FAMILIES == {name: f.modules for name, f in FAMILIES.items()}
    assert all(f.extra == name for name, f in FAMILIES.items())


def test_family_lists_its_env_ids() -> None:
    assert "atari-breakout" in FAMILIES["atari"].env_ids()
    assert FAMILIES["minigrid"].env_ids()[0].startswith("minigrid-")
