"""The installed `puffer` command in real subprocesses: train -> eval GIF, Ctrl-C -> resume,
sweep, worker faults, a full disk; refusals of bad input through its entry point in this process
(nothing runs before them that a process start would change)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest
import torch

from puffer.train.metrics import read_jsonl

# Real `puffer` subprocesses that train, sweep and resume: minutes on 2 cores, so scheduled first.
pytestmark = pytest.mark.slow

# The console script when installed, else the module (same code path: puffer.cli.main:main).
_SCRIPT = shutil.which("puffer", path=str(Path(sys.executable).parent))
PUFFER = [_SCRIPT] if _SCRIPT else [sys.executable, "-m", "puffer.cli"]

# A few seconds of CPU training: enough to write a run directory and a checkpoint.
TINY = [
    "--train.total-timesteps", "2048",
    "--train.horizon", "16",
    "--train.minibatch-size", "128",
    "--train.device", "cpu",
    "--env.num-envs", "8",
]  # fmt: skip


def puffer(*args: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200"}
    env.pop("DISPLAY", None)  # headless: eval must fall back to a video file
    env.pop("WAYLAND_DISPLAY", None)
    return subprocess.run(
        [*PUFFER, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )


def test_train_then_eval_latest_writes_a_moving_gif(tmp_path: Path) -> None:
    trained = puffer("train", "breakout", "--no-dashboard", *TINY, cwd=tmp_path)
    assert trained.returncode == 0, trained.stdout + trained.stderr
    checkpoints = list((tmp_path / "experiments" / "breakout").glob("*/checkpoint.pt"))
    assert len(checkpoints) == 1
    assert f"model: {checkpoints[0].relative_to(tmp_path)}" in trained.stdout
    assert (checkpoints[0].parent / "config.toml").is_file()

    gif = tmp_path / "breakout.gif"
    evaluated = puffer(
        "eval", "breakout", "--load-model-path", "latest", "--video", str(gif),
        "--max-steps", "120", "--fps", "15", cwd=tmp_path,
    )  # fmt: skip
    assert evaluated.returncode == 0, evaluated.stdout + evaluated.stderr
    assert f"video: {gif}" in evaluated.stdout
    frames = iio.imread(gif, index=None)
    assert frames.ndim == 4 and frames.shape[-1] == 3 and frames.dtype == np.uint8
    assert len(frames) > 10
    # Non-blank: every frame has more than one colour. Changing: the ball moves.
    assert all(frame.reshape(-1, 3).std(axis=0).max() > 0 for frame in frames)
    changes = np.abs(np.diff(frames.astype(np.int16), axis=0)).sum(axis=(1, 2, 3))
    assert (changes > 0).sum() >= len(frames) // 2


def test_errors_exit_nonzero_with_a_suggestion(tmp_path: Path, puffer_in_process) -> None:
    # Refused before anything runs: the entry point in this process says the same lines.
    typo = puffer_in_process("train", "breakout", "--train.learnin-rate", "1", cwd=tmp_path)
    assert typo.returncode == 2
    assert "did you mean --train.learning-rate" in typo.stderr
    assert not (tmp_path / "experiments").exists()
    # typer's own usage errors take the same one-line form instead of a boxed panel
    usage = puffer_in_process("eval", "breakout", "--episodes", "0", cwd=tmp_path)
    assert usage.returncode == 2
    assert usage.stderr.startswith("error: Invalid value for '--episodes'")
    assert usage.stderr.count("\n") == 1 and "Traceback" not in usage.stderr


# Without a GPU, "cuda" is the case; with one, a device index no machine has.
_NO_SUCH_DEVICE = "cuda:99" if torch.cuda.is_available() else "cuda"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--train.learning-rate", "fast"], "--train.learning-rate expects a float, got 'fast'"),
        (["--train.total-timesteps", "-5"], "--train.total-timesteps is -5; set it to an int >= 1"),
        (["--train.gamma", "nan"], "--train.gamma is nan; set it to a finite float in [0, 1]"),
        (["--train.device", _NO_SUCH_DEVICE], f"train.device is '{_NO_SUCH_DEVICE}' but"),
        (["--train.data-dir", "{blocker}/runs"], "is not a directory; point it at a writable"),
        (["--config", "{bad_toml}"], "unknown section [trainer] in"),
    ],
    ids=["type", "range", "nan", "device", "data-dir", "brackets"],
)
def test_bad_input_is_one_line_exit_2_and_nothing_on_disk(
    args: list[str],
    expected: str,
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    puffer_in_process,
) -> None:
    elsewhere = tmp_path_factory.mktemp("inputs")
    blocker = elsewhere / "a-file"
    blocker.write_text("not a directory")
    bad_toml = elsewhere / "bad.toml"
    bad_toml.write_text("[trainer]\ngamma = 0.9\n")
    args = [a.format(blocker=blocker, bad_toml=bad_toml) for a in args]
    done = puffer_in_process("train", "squared", "--no-dashboard", *args, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: "), done.stderr
    assert expected in done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert list(tmp_path.iterdir()) == []
    assert sorted(p.name for p in elsewhere.iterdir()) == ["a-file", "bad.toml"]


def test_list_in_a_pipe(tmp_path: Path) -> None:
    listed = puffer("list", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    for env in ("squared", "cartpole", "breakout"):
        assert env in listed.stdout


def test_sweep_runs_end_to_end_and_logs_every_run(tmp_path: Path) -> None:
    done = puffer(
        "sweep", "cartpole", "--name", "ci", "--sweep.max-runs", "8", "--train.update-epochs",
        "1", *TINY, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    store = tmp_path / "experiments" / "cartpole" / "sweep-ci" / "sweep.jsonl"
    lines = [json.loads(line) for line in store.read_text().splitlines()]
    runs = [line for line in lines if "run_id" in line]  # the first line is the store header
    assert len(runs) == 8
    for run in runs:
        assert run["status"] == "ok", run["error"]
        assert np.isfinite(run["score"]) and run["cost"] > 0
        assert set(run["params"]) >= {"train.learning_rate", "train.gamma"}
        assert run["curve"], "every run reports its learning curve"
    assert "best runs by score" in done.stdout
    assert "8 runs, 0 failed" in done.stdout


def test_ctrl_c_checkpoints_and_the_printed_command_resumes(tmp_path: Path) -> None:
    """SIGINT mid-run: exit 130, a loadable checkpoint, a resume command that finishes the
    run, and every iteration's metrics row exactly once."""
    total, batch = 300 * 256, 256  # cartpole.toml's batch
    args = ["--train.total-timesteps", str(total), "--train.update-epochs", "2",
            "--train.device", "cpu", "--train.checkpoint-interval", "1000"]  # fmt: skip
    env = {**os.environ, "COLUMNS": "400"}
    child = subprocess.Popen(
        [*PUFFER, "train", "cartpole", "--no-dashboard", *args],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        metrics = []
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and child.poll() is None and len(metrics) < 3:
            metrics = list(tmp_path.glob("experiments/cartpole/*/metrics.jsonl"))
            metrics = read_jsonl(metrics[0]) if metrics else []
            time.sleep(0.05)
        assert child.poll() is None, "the run finished before it could be interrupted"
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=120)
    finally:
        child.kill()
        child.communicate()
    assert child.returncode == 130, out + err
    assert "stopped by SIGINT" in out, out + err
    checkpoint = tmp_path / out.split("checkpoint: ")[1].split()[0]
    stopped_at = torch.load(checkpoint, weights_only=True)["trainer"]["global_step"]
    assert 0 < stopped_at < total
    # Nothing after the checkpoint was logged: the last row is the checkpointed iteration.
    rows = read_jsonl(checkpoint.parent / "metrics.jsonl")
    assert rows[-1]["step"] == stopped_at

    command = shlex.split(out.split("resume it: ")[1].strip())
    assert command[:3] == ["puffer", "train", "cartpole"]
    resumed = subprocess.run(
        [*PUFFER, *command[1:], "--no-dashboard"], cwd=tmp_path, capture_output=True,
        text=True, timeout=300, env=env,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    steps = [row["step"] for row in read_jsonl(checkpoint.parent / "metrics.jsonl")]
    assert steps == list(range(batch, total + 1, batch))


# Faults: a vectorizer worker killed or stopped, a reused run id, a full disk -----------------

MULTIPROCESSING = [
    "--vec.backend", "multiprocessing", "--vec.num-instances", "2", "--vec.num-workers", "2",
    "--env.num-envs", "4", "--train.total-timesteps", "100000000",
]  # fmt: skip


def _children(pid: int) -> list[int]:
    """The vectorizer workers of process `pid`: its children, less the resource tracker."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid and b"resource_tracker" not in command:
            found.append(int(entry.name))
    return found


def _train_until(tmp_path: Path, ready, *args: str) -> tuple[subprocess.Popen, list[int]]:
    """`puffer train cartpole` over 2 multiprocessing workers, once `ready(workers)` holds."""
    child = subprocess.Popen(
        [*PUFFER, "train", "cartpole", "--no-dashboard", *MULTIPROCESSING, *args],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 240
    while len(workers := _children(child.pid)) < 2 or not ready(workers):
        if child.poll() is not None or time.monotonic() > deadline:
            child.kill()
            raise AssertionError(f"the run never got ready: {child.communicate()}")
        time.sleep(0.01)
    return child, workers


def test_a_worker_killed_before_the_first_epoch_is_an_error_not_a_silent_exit(tmp_path):
    # Killed as soon as it exists: while the envs are built or before the first reset, whose
    # seeds go down the dead worker's pipe (that write once ended the trainer by SIGPIPE).
    child, workers = _train_until(tmp_path, lambda workers: True)
    os.kill(workers[1], signal.SIGKILL)
    out, err = child.communicate(timeout=120)
    assert child.returncode == 2, (child.returncode, out, err)
    assert re.search(rf"^error: worker 1 \(pid {workers[1]}\) .* killed by SIGKILL", err, re.M)
    assert "Traceback" not in err


def test_a_stopped_worker_stops_the_run_with_its_pid_and_envs(tmp_path: Path) -> None:
    def training(workers: list[int]) -> bool:
        return any(p.stat().st_size for p in tmp_path.glob("experiments/cartpole/*/metrics.jsonl"))

    child, workers = _train_until(tmp_path, training, "--vec.worker-timeout", "2")
    os.kill(workers[0], signal.SIGSTOP)
    try:
        out, err = child.communicate(timeout=120)
    finally:
        with contextlib.suppress(ProcessLookupError):  # if the run hung, let the worker go on
            os.kill(workers[0], signal.SIGCONT)
    assert child.returncode == 2, (child.returncode, out, err)
    assert re.search(
        rf"^error: worker 0 \(pid {workers[0]}\) .* no heartbeat for [\d.]+ s "
        r"\(worker_timeout 2 s\): it is stopped .* while running envs 0\.\.0",
        err,
        re.M,
    ), err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert _exited(workers[0]), "close() did not kill the stopped worker"


def _exited(pid: int) -> bool:
    """True once `pid` is gone or a zombie (waiting for init to reap it), within a minute."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def test_a_killed_worker_checkpoints_the_last_finished_update_which_resumes(
    tmp_path: Path,
) -> None:
    metrics = tmp_path / "experiments" / "cartpole" / "r1" / "metrics.jsonl"

    def two_epochs(workers: list[int]) -> bool:
        return metrics.is_file() and metrics.read_bytes().count(b"\n") >= 2

    # No periodic checkpoint within the run (every 1,000 iterations or 5 minutes): all it trained
    # is in the one the worker's death writes, or lost.
    args = ["--train.run-id", "r1", "--train.checkpoint-interval", "1000"]
    child, workers = _train_until(tmp_path, two_epochs, *args)
    os.kill(workers[1], signal.SIGKILL)
    out, err = child.communicate(timeout=120)
    assert child.returncode == 2, (child.returncode, out, err)
    rows = read_jsonl(metrics)
    last, batch = rows[-1]["step"], rows[0]["step"]
    assert re.fullmatch(
        rf"error: worker 1 \(pid {workers[1]}\) .* killed by SIGKILL .*; checkpoint "
        rf"\S+/r1/checkpoint\.pt holds step {last:,}, the last finished update .*"
        r"resume it with --train\.resume true\n",
        err,
    ), err
    trainer = torch.load(metrics.with_name("checkpoint.pt"), weights_only=True)["trainer"]
    assert (trainer["global_step"], trainer["iteration"]) == (last, len(rows))
    more = ["--train.resume", "true", "--train.total-timesteps", str(last + 2 * batch)]
    resumed = puffer("train", "cartpole", "--no-dashboard", *MULTIPROCESSING, *args, *more,
                     cwd=tmp_path)  # fmt: skip
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert [row["step"] for row in read_jsonl(metrics)] == list(
        range(batch, last + 2 * batch + 1, batch)
    )


def _namespaces_work() -> bool:
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    probe = subprocess.run([unshare, "-rm", "true"], capture_output=True)
    return probe.returncode == 0


needs_namespaces = pytest.mark.skipif(
    not _namespaces_work(), reason="needs `unshare -rm` to mount a tmpfs of its own"
)


# In a user + mount namespace of its own (`unshare -rm`) over a /dev/shm of its own, so that no
# other process on the machine sweeps the blocks first: a live vectorizer, a `puffer train`
# over 2 workers killed as a whole process group once it trains, then `puffer --version`. Prints the
# killed run's blocks before and after, and whether the live one's are all there.
SHM_SWEEP = """
import glob, json, os, signal, subprocess, sys, time
puffer, train = json.loads(sys.argv[1]), json.loads(sys.argv[2])
subprocess.run(["mount", "-t", "tmpfs", "tmpfs", "/dev/shm"], check=True)
from puffer.vector import Multiprocessing
from puffer.vector.testing import DeterministicEnv
def blocks(pid):
    return sorted(os.path.basename(name) for name in glob.glob(f"/dev/shm/puffer-vec-{pid}-*"))
live = Multiprocessing(DeterministicEnv, 2, num_workers=2)
run = subprocess.Popen(
    [*puffer, *train], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
)
deadline = time.monotonic() + 240
while not any(os.path.getsize(p) for p in glob.glob("experiments/cartpole/*/metrics.jsonl")):
    assert run.poll() is None and time.monotonic() < deadline, run.stderr.read()
    time.sleep(0.05)
os.killpg(run.pid, signal.SIGKILL)  # kill -9 -PGID: the resource tracker dies too
run.wait()
killed = blocks(run.pid)
listed = subprocess.run([*puffer, "--version"], capture_output=True, text=True)
print(json.dumps({"killed": killed, "after": blocks(run.pid), "rc": listed.returncode,
                  "live": all(os.path.exists(f"/dev/shm/{n}") for n in live.shm_names)}))
live.close()
"""


@needs_namespaces
def test_any_puffer_command_removes_the_blocks_of_a_killed_process_group(tmp_path: Path) -> None:
    train = ["train", "cartpole", "--no-dashboard", *MULTIPROCESSING]
    done = subprocess.run(
        ["unshare", "-rm", sys.executable, "-c", SHM_SWEEP, json.dumps(PUFFER), json.dumps(train)],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert len(result["killed"]) >= 8, result  # the 6 arrays of the buffer, flags, heartbeats
    assert result["rc"] == 0 and result["after"] == [], result
    assert result["live"], "a live vectorizer's blocks were removed"


# The run id and checkpoints of the suite's `trained_cartpole` run, which the tests below go on from.
RUN_R1 = ["--train.run-id", "r1", "--train.checkpoint-interval", "1"]


def test_a_reused_run_id_is_refused_and_resume_skips_bad_metrics_lines(
    tmp_path: Path, trained_cartpole: Path
) -> None:
    run_dir = tmp_path / "experiments" / "cartpole" / "r1"
    shutil.copytree(trained_cartpole, run_dir)
    before = {name: (run_dir / name).read_bytes() for name in ("checkpoint.pt", "metrics.jsonl")}
    again = puffer("train", "cartpole", "--no-dashboard", *TINY, *RUN_R1, cwd=tmp_path)
    assert again.returncode == 2
    assert again.stderr.count("\n") == 1 and again.stderr.startswith("error: run directory ")
    assert "--train.resume true" in again.stderr and "--train.run-id NAME" in again.stderr
    assert before == {name: (run_dir / name).read_bytes() for name in before}
    # Lines no trainer wrote are skipped on resume, with a count, instead of a traceback.
    with (run_dir / "metrics.jsonl").open("ab") as file:
        file.write(b'\xff\xfe\n{"step": "abc"}\n')
    more = ["--train.total-timesteps", "2560", "--train.resume", "true"]
    resumed = puffer("train", "cartpole", "--no-dashboard", *TINY, *RUN_R1, *more, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert resumed.stderr.startswith("warning: ") and resumed.stderr.count("\n") == 1
    assert "skipped 2 line(s) that are not metrics rows" in resumed.stderr
    assert [row["step"] for row in read_jsonl(run_dir / "metrics.jsonl")][-1] == 2560


# Mounts a 1 MB tmpfs in a user + mount namespace of its own (`unshare -rm`, no root needed)
# as the data dir, copies a trained run there, then takes each step: an int fills the disk
# leaving that many bytes, a list runs that command. Prints, as JSON, every file under the
# data dir (but the filler) with its sha256 before the first command and after each, and what
# each command returned.
DISK_FULL = """
import hashlib, json, os, shutil, subprocess, sys
data, trained, steps = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", data], check=True)
shutil.copytree(trained, os.path.join(data, "cartpole", "r1"))
filler = os.path.join(data, "filler")
def files():
    found = {}
    for root, _, names in os.walk(data):
        for name in names:
            path = os.path.join(root, name)
            if path != filler:
                with open(path, "rb") as file:
                    found[os.path.relpath(path, data)] = hashlib.sha256(file.read()).hexdigest()
    return found
def fill(leave):
    # One file takes the space; then `leave` bytes are given back.
    with open(filler, "ab", buffering=0) as file:
        try:
            while file.write(bytes(4096)):
                pass
        except OSError:
            pass
    os.truncate(filler, max(0, os.path.getsize(filler) - leave))
results = [{"files": files()}]
for step in steps:
    if isinstance(step, int):
        fill(step)
        continue
    done = subprocess.run(step, capture_output=True, text=True, cwd=data)
    results.append({"rc": done.returncode, "stderr": done.stderr, "files": files()})
print(json.dumps(results))
"""


def _on_a_full_disk(data: Path, trained: Path, *steps: int | list[str]) -> list[dict]:
    """`DISK_FULL`'s results: the files on the disk first, then each command's."""
    data.mkdir()
    env = {key: value for key, value in os.environ.items() if "DISPLAY" not in key}
    done = subprocess.run(
        ["unshare", "-rm", sys.executable, "-c", DISK_FULL, str(data), str(trained),
         json.dumps(steps)],
        capture_output=True, text=True, timeout=600, env={**env, "COLUMNS": "300"},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def _no_space(result: dict, where: str) -> None:
    """One line, exit 2, naming the file that could not be written and the space left."""
    assert result["rc"] == 2, result["stderr"]
    assert result["stderr"].count("\n") == 1 and "Traceback" not in result["stderr"]
    assert re.match(
        rf"error: cannot write {where}: .*; [\d.]+ k?B free on its disk", result["stderr"]
    ), result["stderr"]


@needs_namespaces
def test_a_full_disk_is_one_line_exit_2_and_the_checkpoint_survives(
    tmp_path: Path, trained_cartpole: Path
) -> None:
    data = tmp_path / "data"
    train = [*PUFFER, "train", "cartpole", "--no-dashboard", *TINY, *RUN_R1,
             "--train.data-dir", str(data), "--train.total-timesteps", "2048",
             "--train.resume", "true"]  # fmt: skip
    # Not a byte left: the run dir's config.json cannot be written. Then room for config.json
    # and a few metrics rows, not for a checkpoint.
    first, *results = _on_a_full_disk(data, trained_cartpole, 0, train, 16384, train)
    checkpoint = "cartpole/r1/checkpoint.pt"
    for result, where in zip(results, ("config.json", "checkpoint.pt"), strict=True):
        _no_space(result, f"{data}/cartpole/r1/{where}")
        # The run's last checkpoint is the one the trained run wrote, whole.
        assert result["files"][checkpoint] == first["files"][checkpoint], where


@needs_namespaces
def test_eval_on_a_full_disk_is_one_line_exit_2_and_keeps_the_old_video(
    tmp_path: Path, trained_cartpole: Path
) -> None:
    data = tmp_path / "data"
    run = data / "cartpole" / "r1"
    old = tmp_path / "trained"
    shutil.copytree(trained_cartpole, old / "r1")
    (old / "r1" / "eval.gif").write_bytes(b"GIF89a an old video")
    evaluate = [*PUFFER, "eval", "cartpole", "--load-model-path", str(run), "--max-steps", "20"]
    elsewhere = [*evaluate, "--video", str(data / "mine.gif")]
    first, *results = _on_a_full_disk(data, old / "r1", 0, evaluate, elsewhere)
    for result, where in zip(results, (run / "eval.gif", data / "mine.gif"), strict=True):
        _no_space(result, str(where))
        # Nothing lost, nothing left: the old video whole, no temp file.
        assert result["files"] == first["files"], where


@needs_namespaces
def test_sweep_on_a_full_disk_is_one_line_exit_2_and_its_store_stays_whole(
    tmp_path: Path, trained_cartpole: Path
) -> None:
    data = tmp_path / "data"
    sweep = [*PUFFER, "sweep", "cartpole", "--name", "s", *TINY, "--train.total-timesteps",
             "512", "--train.data-dir", str(data), "--sweep.max-runs"]  # fmt: skip
    # Not a byte left: the sweep's config.toml cannot be written. Then room for one run, which
    # is stored; then room for config.toml and a run's first files only: that run is no fault
    # of its params, so the sweep stops rather than record it (and every run after) as failed.
    first, full, one, halted = _on_a_full_disk(
        data, trained_cartpole, 0, [*sweep, "1"], 200_000, [*sweep, "1"], 16384, [*sweep, "2"]
    )
    _no_space(full, f"{data}/cartpole/sweep-s/config.toml")
    assert set(full["files"]) == set(first["files"])
    assert one["rc"] == 0, one["stderr"]
    run_file = r"(metrics\.jsonl|checkpoint\.pt)"
    _no_space(halted, rf"{data}/cartpole/sweep-s/runs/cartpole/run-\w+/{run_file}")
    assert "the same --name goes on from its store" in halted["stderr"]
    store = "cartpole/sweep-s/sweep.jsonl"
    assert halted["files"][store] == one["files"][store]  # the stored run, and nothing more
