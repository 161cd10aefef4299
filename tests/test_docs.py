"""The docs site: `mkdocs build --strict` passes (broken links and unresolved references fail)
and the API reference has an entry for every public symbol, i.e. every `__all__` name of every
package's top-level module."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = sorted(init.parent.name for init in ROOT.glob("*/src/puffer/*/__init__.py")) + sorted(
    init.parent.name for init in ROOT.glob("packages/*/src/puffer/*/__init__.py")
)

pytest.importorskip("mkdocs")
pytest.importorskip("mkdocstrings")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=280,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return out


def test_docs_build_strict(site: Path) -> None:
    for page in ("index.html", "guides/scaling/index.html", "guides/c-env/index.html"):
        assert (site / page).is_file(), page


@pytest.mark.parametrize("package", PACKAGES)
def test_docs_api_reference_lists_every_public_symbol(site: Path, package: str) -> None:
    page = site / "api" / package / "index.html"
    assert page.is_file(), f"no API page for puffer.{package}; add docs/api/{package}.md"
    ids = set(re.findall(r'id="(puffer\.[^"]+)"', page.read_text(encoding="utf-8")))
    module = importlib.import_module(f"puffer.{package}")
    prefix = f"puffer.{package}."
    # An entry documented where it is defined (puffer.vector.ray.Ray) counts for its re-export.
    missing = [
        name
        for name in module.__all__
        if prefix + name not in ids
        and not any(i.startswith(prefix) and i.endswith("." + name) for i in ids)
    ]
    assert not missing, f"puffer.{package} names missing from docs/api/{package}.md: {missing}"
