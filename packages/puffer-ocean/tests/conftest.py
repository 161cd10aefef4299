"""The `run_rules` fixture: compile and run a C snippet against one Ocean env header.

Used by the `test_ocean_rules_*.py` files of the envs ported from PufferLib 3.0. A snippet gets
the header, a
`CHECK(cond)` macro that prints the failing line and exits 1, row arrays for up to 256 agents
and `OPEN(env, obs, ...)`, which binds the rows, sets the header's config defaults, applies the
`field = value` overrides given after `obs`, and runs c_init and c_reset with a fixed seed.
Builds use AddressSanitizer and UBSan, so a snippet that reads out of bounds fails too.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

__all__ = ["run_rules"]

CSRC = Path(__file__).resolve().parents[1] / "csrc"
CC = shutil.which("gcc") or shutil.which("cc")

PRELUDE = r"""
#include <stdio.h>
#include HEADER
#define CHECK(c)                                                    \
    do {                                                            \
        if (!(c)) {                                                 \
            printf("CHECK failed at line %d: %s\n", __LINE__, #c);  \
            return 1;                                               \
        }                                                           \
    } while (0)
#define NEAR(a, b) (fabs((double)(a) - (double)(b)) < 1e-4)
typedef __typeof__(*((OceanEnv *)0)->actions) Act;
static float rewards[256];
static Act actions[256 * 4];
static uint8_t terminals[256], truncations[256];
#define OPEN(env, obs, ...)              \
    (env)->observations = (obs);         \
    (env)->actions = actions;            \
    (env)->rewards = rewards;            \
    (env)->terminals = terminals;        \
    (env)->truncations = truncations;    \
    puffer_set_defaults(&SPEC, env);     \
    __VA_ARGS__;                         \
    c_init(env);                         \
    (env)->rng = 1;                      \
    c_reset(env)
"""


def _run_c(tmp_path: Path, header: str, body: str) -> None:
    source = tmp_path / "rules.c"
    source.write_text(f'#define HEADER "{header}"\n{PRELUDE}\nint main(void) {{\n{body}\n}}\n')
    binary = tmp_path / "rules"
    # The snippets call only some of a header's functions: unused ones are expected.
    flags = ["-std=gnu11", "-Wall", "-Werror", "-Wno-unused-function", "-g", "-O1"]
    sanitize = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"]
    build = subprocess.run(
        [CC, *flags, *sanitize, f"-I{CSRC}", str(source), "-o", str(binary), "-lm"],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(binary)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.fixture
def run_rules(tmp_path: Path) -> Callable[[str, str], None]:
    """`run_rules(header, body)` builds `body` as main() against csrc/`header` and asserts it
    exits 0; skips the test when no C compiler is on PATH."""
    if CC is None:
        pytest.skip("no C compiler on PATH")
    return lambda header, body: _run_c(tmp_path, header, body)
