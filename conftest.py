"""Suite-wide setup: one torch thread per test process, the slow modules scheduled first, a
fixture that imports a script of `benchmarks/`, and one tiny trained run that the CLI tests
needing only a checkpoint share (`trained_cartpole`).

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
import subprocess
import sys
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
