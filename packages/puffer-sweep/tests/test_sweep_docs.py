"""The docstring examples of every public module run as written."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["config", "driver", "gp", "methods", "protein", "runners", "space", "store"]


@pytest.mark.parametrize("name", MODULES)
def test_sweep_docstring_examples(name: str) -> None:
    module = importlib.import_module(f"puffer.sweep.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
