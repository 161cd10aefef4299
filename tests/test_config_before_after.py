"""`puffer config ENV` prints, for every env, what it printed before the config moved into
puffer-train (`tests/data/config_before/<env>.toml`): the same keys, values, order and notes,
renamed keys aside.

The files hold what the command printed on a 2-core machine. A derived worker or env count
follows the cores this process may use, so on another machine those numbers are compared as
"derived from the cores", not as digits. A change of a default or of a shipped TOML value is a
change of these files too: write them anew (`puffer config ENV > tests/data/config_before/
ENV.toml`) in the same commit, so that its diff shows what moved.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from puffer.cli.commands._common import resolve_config
from puffer.cli.main import app
from puffer.core import registered_envs
from puffer.train import train
from puffer.train.config import load_config
from puffer.train.run import _resolve

BEFORE = Path(__file__).parent / "data" / "config_before"
# `num_instances = 8  # derived: 4 copies per core`, `num_workers = 2  # derived: one per core (2
# here), ...`: the value, and the count in parentheses, are the machine's.
_PER_CORE_VALUE = re.compile(r"^(\w+) = \d+(?=  # derived: .*per core)", re.M)
_CORES_HERE = re.compile(r"\(\d+ here\)")


def _core_counts_masked(text: str) -> str:
    return _CORES_HERE.sub("(N here)", _PER_CORE_VALUE.sub(r"\1 = N", text))


@pytest.mark.parametrize("path", sorted(BEFORE.glob("*.toml")), ids=lambda p: p.stem)
def test_puffer_config_prints_what_it_printed_before(path: Path) -> None:
    result = CliRunner().invoke(app, ["config", path.stem])
    assert result.exit_code == 0, result.output
    assert _core_counts_masked(result.output) == _core_counts_masked(path.read_text())


@pytest.mark.parametrize("name", sorted(registered_envs()))
def test_python_train_resolves_what_puffer_train_resolves(name: str) -> None:
    """`train(name)` from Python and `puffer train name` fold the same sources: the same
    keys, values, derived values and notes."""
    assert _resolve(name, None, None, ()).to_toml() == resolve_config(name, None, []).to_toml()


def test_a_python_runs_folder_holds_the_config_puffer_train_reproduces(tmp_path: Path) -> None:
    overrides = ["--train.total-timesteps", "256", "--train.horizon", "16"]
    overrides += ["--train.device", "cpu", "--train.data-dir", str(tmp_path)]
    asked = load_config("squared", overrides=overrides)
    result = train("squared", overrides=overrides)
    assert result.run_dir is not None
    saved = result.run_dir / "config.toml"
    assert json.loads((result.run_dir / "config.json").read_text())["train"]["run_id"]
    # make_run_dir named the run in the run's files, not in the caller's config.
    assert load_config("squared", overrides=overrides).train.run_id == asked.train.run_id == ""
    # `puffer train squared --config <run>/config.toml` resolves this, byte for byte.
    assert resolve_config("squared", saved, []).to_toml().encode() == saved.read_bytes()
