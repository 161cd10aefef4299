"""Workspace-wide rules: package layout, the import table of docs/architecture.md, lint and format."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# kernels/ is a member at the top of the workspace, the rest live in packages/.
PACKAGES = sorted(
    [p for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").exists()]
    + [ROOT / "kernels"]
)

# Which puffer packages each package may import (the table in docs/architecture.md).
ALLOWED_IMPORTS = {
    "core": set(),
    "vector": {"core"},
    "ocean": {"core"},
    "kernels": set(),
    "train": {"core", "vector", "kernels", "sweep"},
    "sweep": set(),
    "envs": {"core", "vector"},
    "view": {"core", "train", "sweep"},
    "cli": {"core", "vector", "ocean", "train", "sweep", "kernels", "envs", "view"},
}


def _short_name(package: Path) -> str:
    return tomllib.loads((package / "pyproject.toml").read_text())["project"]["name"].removeprefix(
        "puffer-"
    )


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_package_layout(package: Path) -> None:
    name = _short_name(package)
    meta = tomllib.loads((package / "pyproject.toml").read_text())["project"]
    assert meta["name"] in (package.name, f"puffer-{package.name}")
    assert meta["version"], f"{package.name} has no version"
    assert (package / "README.md").is_file(), f"{package.name} has no README.md"
    assert (package / "tests").is_dir(), f"{package.name} has no tests/"
    assert (package / "src" / "puffer" / name / "__init__.py").is_file()
    # PEP 420: `puffer` is a namespace shared by every package, so none may own it.
    assert not (package / "src" / "puffer" / "__init__.py").exists(), (
        f"{package.name}/src/puffer/__init__.py would shadow the other puffer packages"
    )


# A README is a guide (what the package is for, its use, its limits, links); measured results
# live in the docs' results pages (docs/results/), which the READMEs link to.
README_MAX_LINES = 300


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_readme_is_a_guide_of_at_most_300_lines(package: Path) -> None:
    lines = len((package / "README.md").read_text(encoding="utf-8").splitlines())
    assert lines <= README_MAX_LINES, (
        f"{package.name}/README.md has {lines} lines (at most {README_MAX_LINES}): move measured "
        "tables and long notes to docs/results/ or docs/guides/ and link them"
    )


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_version_matches_metadata(package: Path) -> None:
    import importlib
    from importlib.metadata import version

    module = importlib.import_module(f"puffer.{_short_name(package)}")
    assert module.__version__ == version(f"puffer-{_short_name(package)}")


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_imports_follow_the_package_table(package: Path) -> None:
    name = _short_name(package)
    allowed = ALLOWED_IMPORTS[name] | {name}
    offenders = []
    for path in (package / "src").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            modules = []
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            for module in modules:
                parts = module.split(".")
                if parts[0] == "puffer" and len(parts) > 1 and parts[1] not in allowed:
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {module}")
    assert not offenders, f"puffer.{name} may import only {sorted(allowed)}:\n" + "\n".join(
        offenders
    )


def test_ruff_lint_and_format() -> None:
    ruff = [sys.executable, "-m", "ruff"]
    paths = ["."]  # every Python file and the Python blocks of the Markdown files
    lint = subprocess.run([*ruff, "check", *paths], cwd=ROOT, capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = subprocess.run(
        [*ruff, "format", "--check", *paths], cwd=ROOT, capture_output=True, text=True
    )
    assert fmt.returncode == 0, "run `uv run ruff format`:\n" + fmt.stdout + fmt.stderr


def test_clang_format() -> None:
    clang_format = shutil.which("clang-format", path=str(Path(sys.executable).parent))
    assert clang_format, "clang-format is a dev dependency; run `uv sync`"
    sources = [
        p
        for pattern in ("*.h", "*.c", "*.cpp", "*.cu", "*.cuh")
        for base in (ROOT / "packages", ROOT / "kernels")
        if base.exists()
        for p in base.rglob(pattern)
        if ".venv" not in p.parts and "build" not in p.parts
    ]
    if not sources:
        pytest.skip("no C, C++ or CUDA sources in the tree yet")
    result = subprocess.run(
        [clang_format, "--dry-run", "--Werror", *map(str, sources)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, "run clang-format -i on:\n" + result.stderr[-4000:]


@pytest.mark.parametrize("native", ["kernels", "packages/puffer-ocean"])
def test_uv_rebuilds_a_native_package_when_its_sources_change(native: str) -> None:
    """A stale extension loaded against changed ctypes bindings crashes (a segfault, not an
    error): every C/C++/CUDA source and the build files must be among uv's cache keys."""
    root = ROOT / native
    keys = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["uv"]["cache-keys"]
    globs = [key["file"] for key in keys]
    keyed = {path for glob in globs for path in root.glob(glob) if path.is_file()}
    native_sources = {
        root / "CMakeLists.txt",
        *(p for p in (root / "csrc").rglob("*") if p.is_file()),
    }
    missing = sorted(str(p.relative_to(root)) for p in native_sources - keyed)
    assert "pyproject.toml" in globs and not missing, missing
