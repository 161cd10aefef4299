"""The wheel: kernels inside, PUFFER_CUDA=0 honoured, and no file that would own `puffer`."""

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
def test_cpu_only_wheel_holds_the_cpu_kernels_and_no_namespace_init(tmp_path: Path) -> None:
    # A private build dir, so this never races the editable install's build/ directory.
    command = ["uv", "build", "--wheel", "-q", "-o", str(tmp_path)]
    command += ["--config-setting", f"build-dir={tmp_path / 'build'}", str(PACKAGE)]
    result = subprocess.run(
        command,
        env={**os.environ, "PUFFER_CUDA": "0"},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    (wheel,) = tmp_path.glob("puffer_kernels-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "puffer/__init__.py" not in names, "PEP 420: `puffer` is shared by every package"
    assert "puffer/kernels/_kernels_cpu.so" in names
    assert "puffer/kernels/ops.py" in names
    assert "puffer/kernels/_kernels_cuda.so" not in names, "PUFFER_CUDA=0 must skip the CUDA build"
