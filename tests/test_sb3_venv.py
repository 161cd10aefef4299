"""A fresh venv with only puffer-vector[sb3] (and puffer-core, its one workspace dependency) runs
the SB3 example: the `[sb3]` extra is all an SB3 user installs.

The two packages are built as wheels from their workspace folders; third-party packages are pinned to the
workspace lock, so uv installs them from its cache (torch is hardlinked, not downloaded).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Runs in the fresh venv after the example: only the two packages are there.
CHECK = """
import importlib.util, sys
from pathlib import Path
import puffer.core, puffer.vector
venv = Path(sys.prefix).resolve()
for module in (puffer.core, puffer.vector):
    assert venv in Path(module.__file__).resolve().parents, module.__file__
for other in ("puffer.train", "puffer.ocean", "puffer.cli", "ray"):
    assert importlib.util.find_spec(other) is None, other
"""


def _run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, capture_output=True, text=True, timeout=280, **kwargs)
    assert done.returncode == 0, f"{command}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.mark.skipif(shutil.which("uv") is None, reason="uv not found: it builds the venv")
def test_sb3_example_in_a_venv_with_only_puffer_vector(tmp_path: Path) -> None:
    uv = shutil.which("uv")
    assert uv is not None
    constraints = tmp_path / "constraints.txt"
    export = [uv, "export", "--frozen", "--all-packages", "--no-emit-workspace", "--no-hashes"]
    _run([*export, "--all-extras", "-q", "-o", str(constraints)], cwd=ROOT)
    venv = tmp_path / "venv"
    _run([uv, "venv", "-q", "--python", sys.executable, str(venv)], cwd=tmp_path)
    python = venv / "bin" / "python"
    # Wheels, not folders: from a folder uv would follow the workspace sources and install
    # puffer-core editable, pointing back into this checkout.
    wheels = tmp_path / "wheels"
    for package in ("puffer-core", "puffer-vector"):
        _run([uv, "build", "--wheel", "-q", "--package", package, "-o", str(wheels)], cwd=ROOT)
    (core,) = wheels.glob("puffer_core-*.whl")
    (vector,) = wheels.glob("puffer_vector-*.whl")
    _run(
        [
            uv, "pip", "install", "-q", "--python", str(python), "-c", str(constraints),
            f"puffer-core @ {core.as_uri()}", f"puffer-vector[sb3] @ {vector.as_uri()}",
        ],
        cwd=tmp_path,
    )  # fmt: skip
    example = [str(python), str(ROOT / "examples" / "sb3_ppo.py")]
    done = _run(
        [*example, "--total-timesteps", "512", "--eval-episodes", "2", "--num-workers", "2"],
        cwd=tmp_path,
    )
    assert "mean return" in done.stdout
    _run([str(python), "-c", CHECK], cwd=tmp_path)
