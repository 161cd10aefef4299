"""The examples in puffer.view docstrings run as written."""

from __future__ import annotations

import doctest

import puffer.view.play


def test_docstring_examples() -> None:
    result = doctest.testmod(puffer.view.play, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
