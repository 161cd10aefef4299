"""keep_freed_memory: a freed activation-sized block is reused without page faults."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from puffer.core import make
from puffer.train import PolicyConfig, PuffeRL, TrainConfig, make_policy, pufferl

# In a child process: the setting is process-wide and permanent.
_FAULTS = """
import resource, torch
from puffer.train.host_memory import keep_freed_memory
assert keep_freed_memory()
def one_pass():
    # A pass's activations, freed together: three 16 MiB blocks and two 4 MiB ones.
    blocks = [torch.ones(n << 20) for n in (4, 4, 4, 1, 1)]
    del blocks
one_pass()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    one_pass()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults_kept() -> int:
    """Minor page faults of 20 passes after a first one, in a fresh process that kept freed
    memory."""
    out = subprocess.run(
        [sys.executable, "-c", _FAULTS], capture_output=True, text=True, check=True
    )
    return int(out.stdout.split()[-1])


@pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
    reason="mallopt is glibc's; elsewhere keep_freed_memory is a no-op",
)
def test_freed_blocks_come_back_without_page_faults() -> None:
    # With glibc's defaults the 56 MiB freed at once is usually unmapped or trimmed, so each pass
    # faults its 4 KiB pages in again (about 10,000 a pass; how often depends on where Python's
    # own blocks land, so that side is not asserted). Kept, they are reused warm.
    assert _faults_kept() < 20 * 1000  # at most a pass or two of first touches


def test_trainer_on_cpu_keeps_freed_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    monkeypatch.setattr(pufferl, "keep_freed_memory", lambda: calls.append(True))
    env = make("squared", num_envs=2)
    config = TrainConfig(horizon=4, minibatch_size=8, total_timesteps=8, device="cpu")
    PuffeRL(config, env, make_policy(PolicyConfig(hidden_size=8), env)).close()
    env.close()
    assert calls == [True]
