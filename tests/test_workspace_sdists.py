"""Every sdist is complete: sdist -> wheel in isolation -> fresh venv -> kernels and an Ocean env run.

It is also the wheel-layout test of every package (each C extension is built once in the suite
here, not again per package): no wheel ships `puffer/__init__.py` (PEP 420), and the compiled
modules and stubs sit inside their package.

The check behind issue 10's "complete sdists": a package that reaches outside its directory
(as puffer-train once reached `../../kernels`) builds from the workspace but not from its sdist.
Third-party dependencies are pinned to the workspace lock, so uv installs them from its cache
(torch is hardlinked, not downloaded). CUDA is off in the kernels build here (PUFFER_CUDA=0):
`kernels/tests/test_kernels_cuda.py` compiles the CUDA sources on their own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import textwrap
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Runs in the fresh venv: everything must come from the installed wheels, not the workspace.
SMOKE = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    import numpy as np
    import torch

    import puffer.core
    import puffer.kernels
    import puffer.ocean
    import puffer.train.advantage as advantage
    from puffer.kernels.testing import assert_relative_close, random_advantage_batch

    venv = Path(sys.prefix).resolve()
    for module in (puffer.kernels, puffer.ocean, advantage):
        assert venv in Path(module.__file__).resolve().parents, module.__file__
    cpu = puffer.kernels.kernel_libraries()["cpu"]
    assert cpu is not None and venv in Path(cpu).resolve().parents, cpu

    batch = random_advantage_batch(64, 16, seed=0)
    args = (*batch, 0.995, 0.9, 1.0, 1.0)
    adv = advantage.puff_advantage(*args)
    assert_relative_close(adv, puffer.kernels.puff_advantage_reference(*args))
    probs = advantage.segment_priorities(adv, 0.8)
    assert_relative_close(probs, puffer.kernels.segment_priorities_reference(adv, 0.8))

    env = puffer.core.make("breakout", num_envs=4)
    obs, _ = env.reset(seed=0)
    for _ in range(100):
        actions = np.stack([env.single_action_space.sample() for _ in range(env.num_agents)])
        obs, rewards, terminals, truncations, _ = env.step(actions)
    assert np.isfinite(obs).all() and obs.shape[0] == 4
    env.close()
    print("wheels ok", cpu)
    """
)


def _members() -> list[Path]:
    workspace = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["uv"]["workspace"]
    return sorted(p.parent for g in workspace["members"] for p in ROOT.glob(f"{g}/pyproject.toml"))


def _run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    assert result.returncode == 0, (
        f"{' '.join(command)}\n{result.stdout[-2000:]}{result.stderr[-4000:]}"
    )
    return result


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.skipif(shutil.which("uv") is None, reason="uv not found: it builds and installs")
def test_every_sdist_builds_a_wheel_that_runs(tmp_path: Path) -> None:
    uv = shutil.which("uv")
    assert uv is not None
    sdists, wheels = tmp_path / "sdist", tmp_path / "wheels"
    members = _members()
    assert "kernels" in {m.name for m in members}, "puffer-kernels is a workspace member"
    _run([uv, "build", "--all-packages", "--sdist", "-q", "-o", str(sdists)], cwd=ROOT)
    archives = sorted(sdists.glob("*.tar.gz"))
    assert len(archives) == len(members), [a.name for a in archives]
    with tarfile.open(sdists / "puffer_kernels-0.1.0.tar.gz") as tar:
        names = {Path(n).name for n in tar.getnames()}
    assert {"recurrence.h", "kernels_cpu.cpp", "kernels_cuda.cu", "puffer_kernels.h"} <= names

    # Each wheel from its sdist alone, in an isolated build env, outside the workspace; all at
    # once, since the C builds dominate and the rest are quick.
    env = {**os.environ, "PUFFER_CUDA": "0"}
    builds = [
        subprocess.Popen(
            [uv, "build", "--wheel", "-q", "-o", str(wheels), str(archive)],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for archive in archives
    ]
    for archive, build in zip(archives, builds, strict=True):
        _, err = build.communicate(timeout=480)
        assert build.returncode == 0, f"wheel from {archive.name} failed:\n{err[-4000:]}"
    built = sorted(wheels.glob("*.whl"))
    assert len(built) == len(archives), [w.name for w in built]
    for wheel in built:
        names = set(zipfile.ZipFile(wheel).namelist())
        assert "puffer/__init__.py" not in names, f"{wheel.name}: PEP 420, `puffer` is shared"
        if wheel.name.startswith("puffer_kernels-"):
            assert "puffer/kernels/_kernels_cpu.so" in names
            assert "puffer/kernels/_kernels_cuda.so" not in names, "PUFFER_CUDA=0 skips CUDA"
        if wheel.name.startswith("puffer_ocean-"):
            # The extension and its stub live inside puffer/ocean.
            assert any(n.startswith("puffer/ocean/_ocean.") and n.endswith(".so") for n in names)
            assert {"puffer/ocean/_ocean.pyi", "puffer/ocean/env.py"} <= names, names
            assert "puffer/ocean/__init__.py" in names, names

    # A fresh venv: our wheels plus third-party packages at the workspace lock's versions.
    constraints = tmp_path / "constraints.txt"
    export = [uv, "export", "--frozen", "--all-packages", "--no-emit-workspace", "--no-hashes"]
    _run([*export, "--all-extras", "-q", "-o", str(constraints)], cwd=ROOT)
    venv = tmp_path / "venv"
    _run([uv, "venv", "-q", "--python", sys.executable, str(venv)], cwd=tmp_path)
    python = venv / "bin" / "python"
    install = [uv, "pip", "install", "-q", "--python", str(python), "-c", str(constraints)]
    _run([*install, *map(str, built)], cwd=tmp_path)
    result = _run([str(python), "-c", SMOKE], cwd=tmp_path, timeout=240)
    assert "wheels ok" in result.stdout
