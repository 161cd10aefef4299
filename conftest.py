"""Suite-wide setup: one torch thread per test process, the slow modules scheduled first, a
fixture that imports a script of `benchmarks/`, `puffer` run in the test's own process (for
commands whose behaviour is what they print, exit with and leave on disk, not the process
start), and one tiny trained run that the CLI tests needing only a checkpoint share
(`trained_cartpole`).

The suite runs in two xdist workers on the 2-core machines it is tested on, so the trainer's
auto thread count (`train.torch_threads = 0`: every core) would oversubscribe them. It honours
`OMP_NUM_THREADS`, as torch does for its default; a value set by the caller is kept.

xdist hands each worker whole modules (`--dist loadscope`) in collection order
(`--no-loadscope-reorder`). A few modules take minutes (a sanitizer build, sdist builds, Ray
clusters, CLI subprocesses); started last, one of them runs alone on one core while the other
idles, and the suite's wall time grows by up to its length. Modules holding a `slow` test are
therefore collected first, longest-first scheduling in its simplest form.
"""

import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    slow_modules = {item.path for item in items if item.get_closest_marker("slow")}
    # A stable sort: modules (and tests within them) keep their collection order otherwise.
    items.sort(key=lambda item: item.path not in slow_modules)


@pytest.fixture
def benchmark_script() -> Callable[[str], ModuleType]:
    """Import `benchmarks/<name>.py` (not a package) as a module, for tests of its parts."""

    def load(name: str) -> ModuleType:
        path = Path(__file__).parent / "benchmarks" / f"{name}.py"
        if str(path.parent) not in sys.path:
            sys.path.append(str(path.parent))  # as for a script run there: `import peers` works
        spec = importlib.util.spec_from_file_location(f"_benchmark_{name}", path)
        assert spec is not None and spec.loader is not None, f"{path} is missing"
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its dataclasses look their module up there
        spec.loader.exec_module(module)
        return module

    return load


@pytest.fixture(scope="session")
def trained_cartpole(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`experiments/cartpole/r1/` of a finished 1,024-step `puffer train cartpole` (8 envs,
    horizon 16, a checkpoint every epoch), trained once per test process for every test that
    only needs a checkpoint: copy it before changing it."""
    where = tmp_path_factory.mktemp("trained-cartpole")
    script = shutil.which("puffer", path=str(Path(sys.executable).parent))
    puffer = [script] if script else [sys.executable, "-m", "puffer.cli"]
    done = subprocess.run(
        [*puffer, "train", "cartpole", "--no-dashboard", "--train.horizon", "16",
         "--train.minibatch-size", "128", "--train.device", "cpu", "--env.num-envs", "8",
         "--train.checkpoint-interval", "1", "--train.run-id", "r1",
         "--train.total-timesteps", "1024"],
        cwd=where, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return where / "experiments" / "cartpole" / "r1"


@pytest.fixture
def puffer_in_process(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> Callable[..., subprocess.CompletedProcess]:
    """Run `puffer ARGS` through its console-script entry point (`puffer.cli.main:main`) in
    this process, in `cwd`, as a subprocess test would see it: exit status, stdout, stderr.

    A fresh process costs a torch import (5-15 s of a loaded 2-core machine) before the first
    line of the command runs; for a refusal or a short run that is most of the test. What a
    subprocess alone shows (sys.path of `python -m`, signals, a second process, the console
    script itself) stays in subprocess tests. The suite's warning filters ("error") are
    replaced by a fresh interpreter's for the call, so warnings reach stderr as `warning:` lines.
    """
    from puffer.cli.main import main

    def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
        capfd.readouterr()  # what the test printed before is not the command's
        with monkeypatch.context() as patch, warnings.catch_warnings():
            patch.chdir(cwd)
            patch.setattr(sys, "argv", ["puffer", *args])
            for name in ("DISPLAY", "WAYLAND_DISPLAY"):  # headless, as the subprocess tests
                patch.delenv(name, raising=False)
            patch.setenv("COLUMNS", "300")
            patch.setenv("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # main() sets it; undone after
            warnings.resetwarnings()  # then CPython's default filters, as a new interpreter has
            for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning,
                             ResourceWarning):  # fmt: skip
                warnings.simplefilter("ignore", category)
            interrupt = signal.getsignal(signal.SIGINT)
            try:
                main()
                code = 0
            except SystemExit as exit:  # main() always ends in sys.exit(an int)
                code = exit.code
            finally:
                signal.signal(signal.SIGINT, interrupt)
        out, err = capfd.readouterr()
        return subprocess.CompletedProcess(["puffer", *args], code, out, err)

    return run
