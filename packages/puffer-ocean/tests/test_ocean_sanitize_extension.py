"""The sanitizer build of the extension itself (`PUFFER_SANITIZE=ON`), under Python.

`test_ocean_sanitize.py` runs each env header under ASan + UBSan from C. This test builds the
real pybind11 module with the same flags into a temporary wheel (the installed build is left
alone), loads it in a child Python with libasan preloaded, and drives every C env through the
binding and the thread pool for at least 100,000 random agent steps, rendering as it goes. So
the binding's array and action checks, logging, state save/load and the pool run under the sanitizers too; any report ends
the child with an error and fails the test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from puffer.ocean import _ocean

PACKAGE = Path(__file__).resolve().parents[1]
C_ENVS = list(_ocean.ENVS)  # every header in csrc/envs.h
STEPS = 100_000

CHILD = textwrap.dedent(
    """
    import importlib.util, sys
    import numpy as np
    from gymnasium import spaces

    # The sanitized module stands in for the installed one before puffer.ocean imports it.
    spec = importlib.util.spec_from_file_location("puffer.ocean._ocean", sys.argv[1])
    sanitized = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sanitized)
    sys.modules["puffer.ocean._ocean"] = sanitized
    import puffer.core

    rng = np.random.default_rng(0)
    for name in sys.argv[3:]:
        env = puffer.core.make(name, num_envs=64, num_threads=2)
        space, n = env.single_action_space, env.num_agents
        env.reset(seed=1)
        for step in range(-(-int(sys.argv[2]) // n)):
            if isinstance(space, spaces.Discrete):
                actions = rng.integers(0, space.n, n)
            elif isinstance(space, spaces.MultiDiscrete):
                actions = rng.integers(0, space.nvec, (n, len(space.nvec)))
            else:
                actions = rng.uniform(space.low, space.high, (n, *space.shape))
            env.step(actions.astype(env.actions.dtype))
            if step % 1000 == 0:
                assert env.render().any(), name
                env.load_state(env.save_state())
        env.close()
        print(name, "ok", flush=True)
    assert sys.modules["puffer.ocean._ocean"] is sanitized
    """
)


@pytest.fixture(scope="module")
def sanitized_module(tmp_path_factory: pytest.TempPathFactory) -> Path:
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("building the sanitizer wheel needs uv (`pip install uv`)")
    out = tmp_path_factory.mktemp("sanitized")
    build = subprocess.run(
        [uv, "build", "--wheel", str(PACKAGE), "-o", str(out),
         "-C", "cmake.define.PUFFER_SANITIZE=ON",
         "-C", f"build-dir={out / 'build'}"],  # not the editable install's build folder
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    (wheel,) = out.glob("puffer_ocean-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        (member,) = [
            m
            for m in archive.namelist()
            if m.startswith("puffer/ocean/_ocean.") and m.endswith(".so")
        ]
        return Path(archive.extract(member, out))


# The sanitized build alone takes minutes on a loaded 2-core machine: more than the default.
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_ocean_sanitized_extension_runs_every_c_env(sanitized_module: Path) -> None:
    libasan = subprocess.run(
        ["gcc", "-print-file-name=libasan.so"], capture_output=True, text=True
    ).stdout.strip()
    assert os.path.isabs(libasan), "gcc's libasan.so was not found"
    env = dict(
        os.environ,
        LD_PRELOAD=libasan,
        # Python itself leaks by design at exit; UBSan reports must stop the run.
        ASAN_OPTIONS="detect_leaks=0:abort_on_error=0",
        UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1",
    )
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(sanitized_module), str(STEPS), *C_ENVS],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    report = child.stdout + child.stderr[-6000:]
    assert child.returncode == 0, report
    assert "runtime error" not in child.stderr and "AddressSanitizer" not in child.stderr, report
    assert child.stdout.split() == [word for name in C_ENVS for word in (name, "ok")]
