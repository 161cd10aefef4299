"""The `run_c` fixture: compile and run a C snippet against one Ocean env header.

The rules tests use it. A snippet gets the header; `CHECK(cond)`, an expression that prints the
failing line and exits 1 (so it also fits after a comma: `c_step(&env), CHECK(...)`); `NEAR(a,
b)`; row arrays for up to 1,024 agents (4 action values each, typed like the env's actions);
`OPEN(env, obs, ...)`, which binds the rows, sets the header's config defaults, applies the
`field = value` overrides given after `obs`, and runs c_init and c_reset with a fixed seed; and
`BIND(env, obs)`, the same without overrides. Builds use AddressSanitizer and UBSan, so a snippet
that reads out of bounds fails too.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

CSRC = Path(__file__).resolve().parents[1] / "csrc"
CC = shutil.which("gcc") or shutil.which("cc")

PRELUDE = r"""
#include <stdio.h>
#include HEADER
#define CHECK(c) \
    ((c) ? (void)0 : (printf("CHECK failed at line %d: %s\n", __LINE__, #c), exit(1)))
#define NEAR(a, b) (fabs((double)(a) - (double)(b)) < 1e-4)
typedef __typeof__(*((OceanEnv *)0)->actions) Act;
/* Room for every agent of a multi-agent env (snake: up to 1024 snakes). */
static float rewards[1024];
static Act actions[1024 * 4];
static uint8_t terminals[1024], truncations[1024];
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
#define BIND(env, obs) OPEN(env, obs, (void)0)
"""


def compile_and_run(tmp_path: Path, header: str, body: str, prelude: str = "") -> None:
    """Builds `body` as main() after PRELUDE, the included `header` and the test's own
    `prelude` (helper functions), with ASan/UBSan; runs it."""
    source = tmp_path / "rules.c"
    main = f"int main(void) {{\n{body}\nreturn 0;\n}}\n"
    source.write_text(f'#define HEADER "{header}"\n{PRELUDE}\n{prelude}\n{main}')
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
def run_c(tmp_path: Path) -> Callable[..., None]:
    """`run_c(header, body, prelude="")`: compile `body` against csrc/`header` and run it; a
    failed CHECK fails the test; skips when no C compiler is on PATH."""
    if CC is None:
        pytest.skip("no C compiler on PATH")
    return lambda header, body, prelude="": compile_and_run(tmp_path, header, body, prelude)
