"""The README's snippets run as written, in order, and docstring examples pass as doctests."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

import puffer.vector.factory
import puffer.vector.gym
import puffer.vector.multiprocessing
import puffer.vector.sb3
import puffer.vector.serial

README = Path(__file__).resolve().parents[1] / "README.md"


def test_vector_readme_snippets_run() -> None:
    snippets = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)
    assert len(snippets) == 4
    namespace: dict = {}
    for snippet in snippets:
        exec(compile(snippet, str(README), "exec"), namespace)
    namespace["envs"].close()


@pytest.mark.parametrize(
    "module",
    [
        puffer.vector.factory,
        puffer.vector.gym,
        puffer.vector.multiprocessing,
        puffer.vector.sb3,
        puffer.vector.serial,
    ],
    ids=lambda m: m.__name__,
)
def test_vector_docstring_examples(module) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
