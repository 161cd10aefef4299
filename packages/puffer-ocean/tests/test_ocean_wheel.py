"""The wheel: the extension and its stub inside puffer/ocean, and no file that would own `puffer`."""

from __future__ import annotations

import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("uv") is None, reason="uv not found: it builds the wheel")
def test_ocean_wheel_holds_extension_and_no_namespace_init(tmp_path: Path) -> None:
    # A private build dir, so this never races the editable install's build/ directory.
    command = ["uv", "build", "--wheel", "-q", "-o", str(tmp_path)]
    command += ["--config-setting", f"build-dir={tmp_path / 'build'}", str(PACKAGE)]
    result = subprocess.run(
        command, env=dict(os.environ), capture_output=True, text=True, timeout=280
    )
    assert result.returncode == 0, result.stderr[-4000:]
    (wheel,) = tmp_path.glob("puffer_ocean-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "puffer/__init__.py" not in names, "PEP 420: `puffer` is shared by every package"
    assert any(n.startswith("puffer/ocean/_ocean.") and n.endswith(".so") for n in names), names
    assert {"puffer/ocean/_ocean.pyi", "puffer/ocean/env.py", "puffer/ocean/__init__.py"} <= names
