"""The README's main job, `puffer train breakout`, scaled down, learns: the check that would
have caught the trainer's plateau on PufferLib's breakout.

Until 2026-11-28 the shipped breakout config (an MLP at our own hyperparameters) plateaued at
~6.7 whatever the budget, and our trainer given PufferLib 3.0's breakout config collapsed after
~14M steps. Since 2026-12-01 the shipped config is PufferLib 4.0's (PufferNet 2 x 64, 4,096
agents, minibatch 65,536, 5 minibatches an epoch). Scaled to 1,024 agents and 16,384-step
minibatches (a quarter of the epoch's segments each, 5 per epoch, as shipped), 3M steps reach 20.9
on seed 0 (2-core Intel Xeon, 2026-12-01; the LSTM 128 at PufferLib 3.0's config, scaled the
same way, reached 13.5-16.8 on seeds 0-2); an MLP or a collapsing update stays near 6. The bar
sits between, at 10.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

_SCRIPT = shutil.which("puffer", path=str(Path(sys.executable).parent))
PUFFER = [_SCRIPT] if _SCRIPT else [sys.executable, "-m", "puffer.cli"]


@pytest.mark.slow
@pytest.mark.timeout(900)  # ~1 min on an idle 2-core machine, 2.5 min at load 5; 3x for slower ones
def test_shipped_breakout_config_learns_scaled_down(tmp_path: Path) -> None:
    done = subprocess.run(
        [*PUFFER, "train", "breakout", "--no-dashboard",
         "--env.num-envs", "1024", "--train.minibatch-size", "16384",
         "--train.total-timesteps", "3000000", "--train.seed", "0",
         "--train.device", "cpu", "--train.torch-threads", "1",
         "--train.data-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=900, env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (metrics,) = tmp_path.glob("breakout/*/metrics.jsonl")
    rows = [json.loads(line) for line in metrics.read_text().splitlines()]
    scores = [row["environment/score"] for row in rows if "environment/score" in row]
    assert scores, "no breakout episode finished in 3M steps"
    assert scores[-1] >= 10, (
        f"`puffer train breakout` scaled to 1,024 agents scored {scores[-1]:.1f} after 3M steps "
        "(20.9 on seed 0 when it learns; an MLP or a collapsing update stays near 6)"
    )
