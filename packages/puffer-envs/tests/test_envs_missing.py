"""A family whose library is missing: the entry points still load, making an env says how to
install it in one line, and `puffer list` / `puffer train` show that."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from puffer.cli.main import app
from puffer.core import env_creator, make
from puffer.core._install import PUFFER_ENVS_FAMILIES
from puffer.envs import FAMILIES, MissingDependencyError
from puffer.envs.procgen import GAMES
from puffer.vector.isolated import find_program


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
    assert PUFFER_ENVS_FAMILIES == {name: f.modules + f.programs for name, f in FAMILIES.items()}
    assert all(f.extra == name for name, f in FAMILIES.items())


@pytest.fixture
def uv_missing(monkeypatch):
    # The real lookup (PATH, then beside the interpreter) of a program that does not exist,
    # as it would run on a machine without uv.
    missing = dataclasses.replace(FAMILIES["procgen"], programs=("puffer_no_such_program",))
    monkeypatch.setitem(FAMILIES, "procgen", missing)
    return missing


def test_procgen_is_a_family_that_needs_uv() -> None:
    procgen = FAMILIES["procgen"]
    assert procgen.env_ids() == sorted(f"procgen-{game}" for game in GAMES)
    assert procgen.programs == ("uv",) and procgen.install_command.endswith('[procgen]"')
    # uv builds the games' venv; the procgen tests need it, so it is here.
    assert procgen.installed


def test_find_program_looks_beside_the_interpreter(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing on PATH
    beside = Path(sys.executable).parent / "python"
    assert find_program("python") == str(beside)
    assert find_program("puffer_no_such_program") is None


def test_list_gives_procgen_without_uv_one_line(uv_missing) -> None:
    assert uv_missing.missing() == ["puffer_no_such_program"]
    result = CliRunner().invoke(app, ["list"])
    assert result.exit_code == 0, result.output
    assert "procgen-coinrun" not in result.output  # the family's line says it for all 16
    lines = [line for line in result.output.splitlines() if "puffer-envs[procgen]" in line]
    assert len(lines) == 1 and lines[0].split()[1] == "procgen", result.output


def test_family_lists_its_env_ids() -> None:
    assert "atari-breakout" in FAMILIES["atari"].env_ids()
    assert FAMILIES["minigrid"].env_ids()[0].startswith("minigrid-")
