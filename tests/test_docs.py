"""The docs site: `mkdocs build --strict` passes with no warning (broken links and unresolved
references fail), holds no build helper, the API reference has an entry for every public
symbol (every `__all__` name of every package's top-level module), the config page shows plain
defaults in a headless browser, the results pages are built (their links and anchors checked
by the strict build), and the code of the "from other libraries" page and of the trainer
guide's kernel example runs."""

from __future__ import annotations

import dataclasses
import html
import importlib
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import imageio.v3 as iio
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = sorted(init.parent.name for init in ROOT.glob("*/src/puffer/*/__init__.py")) + sorted(
    init.parent.name for init in ROOT.glob("packages/*/src/puffer/*/__init__.py")
)

# Set to a path to keep the config page's screenshot there.
SCREENSHOT_ENV = "PUFFER_DOCS_SCREENSHOT"

pytest.importorskip("mkdocs")
pytest.importorskip("mkdocstrings")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
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
    return out, done.stderr


@pytest.fixture(scope="module")
def site(built: tuple[Path, str]) -> Path:
    return built[0]


@pytest.fixture(scope="module")
def build_log(built: tuple[Path, str]) -> str:
    return built[1]


def test_docs_build_strict(site: Path) -> None:
    pages = ["index.html", "guides/scaling/index.html", "guides/c-env/index.html"]
    # The results pages, which the READMEs link to by section (the build checks those anchors).
    pages += [f"results/{name}/index.html" for name in ("train", "defaults", "ocean", "envs")]
    for page in [*pages, "results/index.html"]:
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


def test_docs_build_has_no_warnings_and_no_build_helpers(site: Path, build_log: str) -> None:
    assert "WARNING" not in build_log and "unrecognized relative link" not in build_log, build_log
    assert not list(site.rglob("*.py")), "a build helper was copied into the site"


def _browser() -> str:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("no chromium on PATH: `apt-get install chromium` (.ci/run installs it)")
    return chromium


def test_config_page_shows_plain_defaults_in_a_browser(site: Path, tmp_path: Path) -> None:
    from puffer.train.config import PolicyConfig, TrainConfig, VecConfig

    chromium = _browser()
    page = (site / "api" / "train-config" / "index.html").as_uri()
    headless = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,1400"]
    shot = tmp_path / "config.png"
    subprocess.run([*headless, f"--screenshot={shot}", page], capture_output=True, timeout=120)
    image = iio.imread(shot)
    assert image.shape[:2] == (1400, 1280) and image.std() > 10, "a blank screenshot"
    dom = subprocess.run(
        [*headless, "--dump-dom", page], capture_output=True, text=True, timeout=120
    ).stdout
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", dom)))
    assert "_f(" not in text and "_Check" not in text and "lambda v" not in text
    for section in (TrainConfig, PolicyConfig, VecConfig):
        for field in dataclasses.fields(section):
            # Each row: the key, its type, its default as TOML writes it, its meaning.
            default = field.default
            if isinstance(default, bool):
                default = "true" if default else "false"
            elif isinstance(default, str):
                default = f'"{default}"'
            elif isinstance(default, int) and abs(default) >= 10_000:
                default = f"{default:_}"
            row = f"{field.name} {field.type} {default} {field.metadata['help'][:20]}"
            assert row.lower() in text.lower(), row
    keep = os.environ.get(SCREENSHOT_ENV)
    if keep:
        shutil.copyfile(shot, keep)


def test_from_other_libraries_page_runs() -> None:
    page = (ROOT / "docs" / "guides" / "from-other-libraries.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.DOTALL)
    assert len(blocks) == 4
    for block in blocks:
        namespace: dict = {}
        exec(compile(block, "from-other-libraries.md", "exec"), namespace)
    assert math.isfinite(namespace["result"].score) and namespace["result"].score_episodes > 0


def test_readme_says_how_to_build_and_read_the_docs() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "\n## Docs\n" in readme
    section = readme.split("\n## Docs\n", 1)[1].split("\n## ", 1)[0]
    assert "uv run mkdocs serve" in section and "uv run mkdocs build --strict" in section
    # What the README's build writes is no file to commit.
    assert "/site/" in (ROOT / ".gitignore").read_text().splitlines()


def test_trainer_guide_kernel_example_runs() -> None:
    page = (ROOT / "docs" / "guides" / "trainer.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.DOTALL)
    (block,) = [b for b in blocks if "puff_advantage(" in b]
    namespace: dict = {}
    exec(compile(block, "trainer.md", "exec"), namespace)
    assert namespace["adv"].shape == (4, 8) and float(namespace["probs"].sum()) == pytest.approx(1)


def test_readmes_say_how_to_install_a_cpu_torch() -> None:
    """Issue 61 item 9: a CPU box need not download 5.5 GB of CUDA wheels. The line is uv's,
    with options this uv has (PyTorch's index itself is unreachable from the test machines)."""
    line = "uv pip install torch --index-url https://download.pytorch.org/whl/cpu"
    for readme in ("README.md", "packages/puffer-cli/README.md"):
        text = " ".join((ROOT / readme).read_text().split())
        assert line in text and "--torch-backend cpu" in text, readme
    options = subprocess.run(
        ["uv", "help", "pip", "install", "--no-pager"], capture_output=True, text=True, check=True
    ).stdout
    assert "--index-url <INDEX_URL>" in options
    assert re.search(r"--torch-backend <TORCH_BACKEND>\s+The backend[^`]*`cpu`", options)
