"""The examples in puffer.cli docstrings run as written."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["puffer.cli.commands.listing"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
