"""The top-level examples run and learn (examples/ is not a package: loaded by path)."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

pytest.importorskip("torch")
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def test_cleanrl_ppo_example_learns_cartpole() -> None:
    """A small budget: seed 1 averages 258 over its last 20 episodes at 20k steps (a
    random policy about 22); the default 200k-step run is the README's figure."""
    main = runpy.run_path(str(EXAMPLES / "cleanrl_ppo.py"))["main"]
    mean_return = main(["--total-timesteps", "20480", "--backend", "serial", "--num-envs", "8"])
    assert mean_return >= 100, mean_return
