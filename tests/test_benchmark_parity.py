"""The benchmarks run beside PufferLib 3.0: parity_trainer.py (equal trainers pass, a deliberate
difference is flagged), parity_policy.py and ocean_learn.py (both curves stored)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

SCRIPT = Path(__file__).parents[1] / "benchmarks" / "parity_trainer.py"
OCEAN_LEARN = SCRIPT.with_name("ocean_learn.py")
PUFFERLIB = Path(os.environ.get("PUFFER_PUFFERLIB", "/work/pl3"))
needs_pufferlib = pytest.mark.skipif(
    not any((PUFFERLIB / sub / "python").is_file() for sub in ("bin", "venv/bin")),
    reason=f"no PufferLib 3.0 venv at {PUFFERLIB} (shared/anchors/pl3/setup.sh builds one; "
    "PUFFER_PUFFERLIB names another folder)",
)


def _trainer_report(*extra: str) -> subprocess.CompletedProcess:
    # At its default 256 agents: with fewer, the kept advantage-std difference (1/n relative,
    # n = agents x horizon) exceeds the harness's tolerance.
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--pufferlib", str(PUFFERLIB), *extra],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def _rows(report: str, kind: str) -> list[str]:
    return [line for line in report.splitlines() if line.strip().startswith(kind)]


def test_the_float64_redo_is_the_step_train_took(benchmark_script) -> None:
    parity = benchmark_script("parity_trainer")
    from puffer.train.optim import PufferMuon

    model = torch.nn.Linear(8, 4)
    weights = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = PufferMuon(model.parameters(), lr=0.1, momentum=0.9)
    step = parity.StepCapture(optimizer, model)
    model(torch.randn(16, 8)).square().sum().backward()
    optimizer.step()
    taken = {k: (v - weights[k]).double() for k, v in model.state_dict().items()}
    redone = step.float64_update(model, weights, step.grads)
    for name, update in redone.items():
        assert update.dtype == torch.float64
        # float32's step is the float64 one up to float32 rounding (orthogonalization magnifies it)
        assert torch.allclose(update, taken[name], rtol=0, atol=1e-5), name
    step.steps = 2
    with pytest.raises(SystemExit, match="took 2 optimizer steps"):
        step.float64_update(model, weights, step.grads)


@needs_pufferlib
@pytest.mark.slow
def test_equal_trainers_show_no_unintended_difference() -> None:
    done = _trainer_report()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 unintended difference(s)" in done.stdout
    assert len(_rows(done.stdout, "update:")) == 10 + 6  # every parameter of the LSTM and MLP


@needs_pufferlib
@pytest.mark.slow
def test_a_one_percent_learning_rate_change_is_flagged(benchmark_script) -> None:
    peers = benchmark_script("peers")
    config = peers.pufferlib_config(peers.pufferlib_python(PUFFERLIB), "breakout")
    learning_rate = 1.01 * config["train"]["learning_rate"]
    done = _trainer_report(f"--ours=--train.learning-rate {learning_rate!r}")
    assert done.returncode == 1, done.stdout + done.stderr
    updates, grads = _rows(done.stdout, "update:"), _rows(done.stdout, "grad:")
    assert updates and all(row.endswith("DIFFERS") for row in updates)
    assert grads and all(row.endswith("match") for row in grads)


def test_parity_policy_plays_each_side_from_its_own_state(benchmark_script) -> None:
    """Two equal sides and one policy give the same episodes; cartpole pays at most 1 a step."""
    import numpy as np

    from puffer.train import PolicyConfig, make_policy

    parity = benchmark_script("parity_policy")
    sides = [parity.OursSide("cartpole", 8, seed=3) for _ in range(2)]
    torch.manual_seed(0)
    policy = make_policy(PolicyConfig(hidden_size=16, recurrent="lstm"), sides[0].env)
    (returns, lengths), (returns2, lengths2) = (
        parity.play(policy, side, 300, seed=1) for side in sides
    )
    for side in sides:
        side.close()
    assert len(returns) > 8 and lengths.sum() <= 8 * 300
    assert np.array_equal(returns, returns2) and np.array_equal(lengths, lengths2)
    assert (returns <= lengths).all() and returns.sum() > 0


@needs_pufferlib
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_short_budget_stores_both_curves_and_the_table(tmp_path: Path) -> None:
    # One of squared's 524,288-step batches (PufferLib's 2 x 4,096 agents, 64-step horizon).
    budget = 524_288
    command = [sys.executable, str(OCEAN_LEARN), "squared", "--rows", "pufferlib", "same",
               "--budget", str(budget), "--threads", "1", "--pufferlib", str(PUFFERLIB),
               "--out", str(tmp_path)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    for row in ("pufferlib", "same"):
        lines = (tmp_path / "squared" / row / "seed0.jsonl").read_text().splitlines()
        meta, *curve = map(json.loads, lines)
        assert (meta["row"], meta["budget"]) == (row, budget)
        assert curve[-1]["step"] >= budget and all(point["sps"] > 0 for point in curve)
    assert not list(tmp_path.rglob("*.partial"))
    # One epoch ends no squared episode on either side: no score yet, and the table still prints.
    table = [line for line in done.stdout.splitlines() if line.startswith("| squared |")]
    assert [line.split(" | ")[1] for line in table] == ["pufferlib", "same"]
    # A stored run is not run again: the second call only prints the table.
    again = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and "pufferlib squared seed 0" not in again.stdout


def _running(pid: int) -> bool:
    """Whether `pid` is alive and not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_killed_driver_leaves_no_trainer_running() -> None:
    # The learning drivers start each trainer with ocean_learn.die_with_parent; a driver killed
    # mid-run (SIGKILL: no cleanup of its own runs) must not leave the trainer on the cores.
    driver = (
        f"import subprocess, sys, time; sys.path.insert(0, {str(SCRIPT.parent)!r})\n"
        "from ocean_learn import die_with_parent\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'],\n"
        "                         preexec_fn=die_with_parent)\n"
        "print(child.pid, flush=True); time.sleep(120)\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", driver], stdout=subprocess.PIPE, text=True
    ) as parent:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert _running(child)
        parent.kill()
    for _ in range(100):
        if not _running(child):
            break
        time.sleep(0.1)
    assert not _running(child), f"the trainer ({child}) outlived its killed driver"


def test_a_trainer_stopped_at_a_step_keeps_its_rows_to_there(
    tmp_path: Path, benchmark_script
) -> None:
    # `--pl3-stop-at`: PufferLib's trainer runs its whole budget's schedule and is stopped once
    # it logs the step; a real child that would log 1M rows stands in for the trainer's output.
    stream_rows = benchmark_script("ocean_learn").stream_rows
    trainer = (
        "import json, time\n"
        "for i in range(1, 1_000_001):\n"
        "    print('ROW ' + json.dumps({'step': i * 1000}), flush=True); time.sleep(0.01)\n"
    )
    partial = tmp_path / "seed0.partial"
    with subprocess.Popen(
        [sys.executable, "-c", trainer], stdout=subprocess.PIPE, text=True
    ) as child:
        rows = stream_rows(child, partial, "test", steps=1_000_000_000, stop_at=4_500)
    assert [row["step"] for row in rows] == [1000, 2000, 3000, 4000, 5000]
    assert child.returncode is not None and child.returncode < 0  # terminated, not finished
    assert [json.loads(x)["step"] for x in partial.read_text().splitlines()] == [
        1000, 2000, 3000, 4000, 5000
    ]  # fmt: skip


PARITY4 = SCRIPT.with_name("parity_pufferlib4.py")
PUFFERLIB4 = Path(os.environ.get("PUFFER_PUFFERLIB4", "/work/pl4src"))
needs_pufferlib4 = pytest.mark.skipif(
    not all((PUFFERLIB4 / "pufferlib" / f"{name}.py").is_file() for name in ("models", "muon")),
    reason=f"no PufferLib 4.0 checkout at {PUFFERLIB4} (4.0 is not on PyPI: git clone "
    "PufferAI/PufferLib at 8e3e754; PUFFER_PUFFERLIB4 names the folder)",
)


def test_the_pufferlib4_harness_names_a_folder_without_its_files(tmp_path) -> None:
    done = subprocess.run(
        [sys.executable, str(PARITY4), "--pufferlib4", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1
    assert f"--pufferlib4 {tmp_path}: no pufferlib/models.py there" in done.stderr


def test_a_pufferlib4_row_flags_a_difference_beyond_float_rounding(benchmark_script) -> None:
    parity = benchmark_script("parity_pufferlib4")
    x = torch.randn(64, 64)
    assert parity.row("same", x + 1e-7, x)[3] == "match"
    assert parity.row("moved", x * 1.001, x)[3] == "DIFFERS"
    assert parity.row("shape", x[:1], x)[3].startswith("DIFFERS: shape")


@needs_pufferlib4
@pytest.mark.slow
# With the other rule every matrix's steps after the first differ (4 parameters, steps 2-4): the
# first is (2 - beta) g against (1 + beta) g, one direction, which Newton-Schulz makes one step.
@pytest.mark.parametrize(("rule", "unintended"), [("sum", 0), ("average", 12)])
def test_pufferlib4s_torch_path_matches_ours_and_a_changed_rule_is_flagged(
    rule: str, unintended: int
) -> None:
    done = subprocess.run(
        [sys.executable, str(PARITY4), "--pufferlib4", str(PUFFERLIB4), "--momentum-rule", rule],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert f"\n{unintended} unintended difference(s)" in done.stdout, done.stdout + done.stderr
    assert done.returncode == (1 if unintended else 0)
    assert _rows(done.stdout, "core:") and all(
        line.endswith("match")
        for line in _rows(done.stdout, "core:") + _rows(done.stdout, "policy:")
    )
