"""Every package installs without the checkout: its README's install lines, run as written in a
clean copy of the repository, build a wheel and an sdist of every package (`twine check`
passes), install the package into a fresh venv, and its README example runs there.

Each README has an "## Install" section whose first bash block is the install lines; the block
after `<!-- example -->` is the package's example. The copy holds what git would hand a fresh
clone (tracked and new, non-ignored files), so nothing of this checkout's builds is reused: the
C envs and kernels are compiled from their sources, and their wheels repaired by auditwheel to
manylinux tags (the root README's line), which the installs then use. It is also the
wheel-layout check of every package (no wheel ships `puffer/__init__.py`, the compiled modules
sit inside their package).

Third-party packages are pinned to the workspace lock through `UV_CONSTRAINT` (an environment
variable, so the lines stay as written), so uv installs them from its cache: torch is
hardlinked, not downloaded. CUDA is off in the kernels build (`PUFFER_CUDA=0`):
`kernels/tests/test_kernels_cuda.py` compiles the CUDA sources on their own.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BUILD_LINE = "uv build --all-packages -o dist"
# The root README's line that gives the binary wheels manylinux tags (a package index refuses
# linux_x86_64); run here without its `uv run`, in this test's environment, which is that.
REPAIR_LINE = (
    "uv run auditwheel repair -w dist dist/*-linux_x86_64.whl && rm dist/*-linux_x86_64.whl"
)
EXAMPLE_MARK = "<!-- example -->"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(1500),
    pytest.mark.skipif(shutil.which("uv") is None, reason="uv not found: it builds and installs"),
]


def _members() -> list[Path]:
    workspace = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["uv"]["workspace"]
    return sorted(p.parent for g in workspace["members"] for p in ROOT.glob(f"{g}/pyproject.toml"))


def _name(member: Path) -> str:
    return tomllib.loads((member / "pyproject.toml").read_text())["project"]["name"]


def install_lines(readme: str) -> list[str]:
    """The commands of the first bash block of the README's "## Install" section."""
    section = readme.split("\n## Install\n", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.DOTALL)
    assert block, "no bash block in ## Install"
    return [line.split("  #")[0].strip() for line in block.group(1).splitlines() if line.strip()]


def example(readme: str) -> tuple[str, str]:
    """(language, code) of the block after EXAMPLE_MARK."""
    found = re.search(EXAMPLE_MARK + r"\s*```(\w+)\n(.*?)```", readme, flags=re.DOTALL)
    assert found, f"no block after {EXAMPLE_MARK}"
    return found.group(1), found.group(2)


def _run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}{done.stderr[-5000:]}"
    return done


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What a fresh clone holds, with every README's build line run in it."""
    out = tmp_path_factory.mktemp("clone")
    listed = _run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT)
    for name in filter(None, listed.stdout.split("\0")):
        source = ROOT / name
        if source.is_file():  # a file deleted but not yet staged is listed, and gone
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, out / name)
    env = {**os.environ, "PUFFER_CUDA": "0"}
    _run(["bash", "-euo", "pipefail", "-c", BUILD_LINE], cwd=out, env=env, timeout=1200)
    assert REPAIR_LINE in (ROOT / "README.md").read_text()
    tools = {**env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"}
    repair = REPAIR_LINE.removeprefix("uv run ")
    _run(["bash", "-euo", "pipefail", "-c", repair], cwd=out, env=tools, timeout=600)
    return out


def test_every_package_has_a_wheel_and_an_sdist_that_twine_accepts(clone: Path) -> None:
    dist = clone / "dist"
    for member in _members():
        stem = _name(member).replace("-", "_")
        assert len(list(dist.glob(f"{stem}-*.tar.gz"))) == 1, stem
        (wheel,) = dist.glob(f"{stem}-*.whl")
        names = set(zipfile.ZipFile(wheel).namelist())
        assert "puffer/__init__.py" not in names, f"{wheel.name}: PEP 420, `puffer` is shared"
        if stem in ("puffer_ocean", "puffer_kernels"):
            # Binary wheels, repaired by auditwheel: a manylinux tag an index accepts.
            assert re.search(r"-manylinux_2_\d+_x86_64\.whl$", wheel.name), wheel.name
        if stem == "puffer_kernels":
            assert "puffer/kernels/_kernels_cpu.so" in names
            assert "puffer/kernels/_kernels_cuda.so" not in names, "PUFFER_CUDA=0 skips CUDA"
        if stem == "puffer_view":
            page = {f"puffer/view/static/dashboard.{suffix}" for suffix in ("html", "js", "css")}
            assert page <= names, f"{wheel.name} lacks the dashboard page: {page - names}"
        if stem == "puffer_ocean":
            assert any(n.startswith("puffer/ocean/_ocean.") and n.endswith(".so") for n in names)
            assert {"puffer/ocean/_ocean.pyi", "puffer/ocean/__init__.py"} <= names, names
    files = sorted([*dist.glob("*.whl"), *dist.glob("*.tar.gz")])
    checked = _run([sys.executable, "-m", "twine", "check", "--strict", *map(str, files)])
    assert checked.stdout.count("PASSED") == 2 * len(_members()), checked.stdout


@pytest.mark.parametrize("member", _members(), ids=lambda m: m.name)
def test_readme_install_lines_and_example_work_outside_the_checkout(
    member: Path, clone: Path, tmp_path: Path
) -> None:
    readme = (member / "README.md").read_text()
    lines = install_lines(readme)
    assert lines[0] == BUILD_LINE, "every README builds with the same line (run once, above)"
    constraints = tmp_path / "constraints.txt"
    export = ["uv", "export", "--frozen", "--all-packages", "--no-emit-workspace", "--no-hashes"]
    _run([*export, "--all-extras", "-q", "-o", str(constraints)], cwd=ROOT)
    venv = tmp_path / "venv"
    _run(["uv", "venv", "-q", "--python", sys.executable, str(venv)])
    env = {
        **os.environ,
        "VIRTUAL_ENV": str(venv),
        "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "UV_CONSTRAINT": str(constraints),
    }
    env.pop("PYTHONPATH", None)
    for line in lines[1:]:
        _run(["bash", "-euo", "pipefail", "-c", line], cwd=clone, env=env, timeout=600)

    # The package and its puffer dependencies come from the venv, nothing from the checkout.
    python = venv / "bin" / "python"
    module = f"puffer.{member.name.removeprefix('puffer-')}"
    where = _run([str(python), "-c", f"import {module}; print({module}.__file__)"], cwd=tmp_path)
    assert Path(where.stdout.strip()).resolve().is_relative_to(venv.resolve()), where.stdout
    language, code = example(readme)
    work = tmp_path / "work"
    work.mkdir()
    if language == "python":
        done = _run([str(python), "-c", code], cwd=work, env=env, timeout=600)
    else:
        done = _run(["bash", "-euo", "pipefail", "-c", code], cwd=work, env=env, timeout=600)
    assert done.returncode == 0
