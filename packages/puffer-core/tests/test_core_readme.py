"""The README's example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_examples_run() -> None:
    examples = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)
    assert len(examples) == 3
    for example in examples:
        exec(compile(example, str(README), "exec"), {})
