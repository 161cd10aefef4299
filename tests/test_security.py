"""Nothing runs that the user did not ask for (issue 62): checkpoints, folder names and
files in a run directory as an attacker would plant them, against the real `puffer` command:
in subprocesses where the process is the point (what `python -m` puts on sys.path, a server, a
second process holding a run dir), else through its entry point in this process. The dashboard's web-facing cases are in puffer-cli's test_cli_security.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

_SCRIPT = shutil.which("puffer", path=str(Path(sys.executable).parent))
# The console script and `python -m`: the second puts the current directory on sys.path.
PUFFERS = {
    "script": [_SCRIPT] if _SCRIPT else [sys.executable, "-m", "puffer.cli"],
    "module": [sys.executable, "-m", "puffer.cli"],
}
PUFFER = PUFFERS["script"]

TINY = [
    "--train.horizon", "16",
    "--train.minibatch-size", "128",
    "--train.device", "cpu",
    "--env.num-envs", "8",
    "--train.checkpoint-interval", "1",
]  # fmt: skip

# Written by the planted module whenever it is imported: its existence is the exploit.
HELPER = """
import pathlib
pathlib.Path(__file__).with_name("HELPER-RAN").write_text("imported")

def factory(env, config):
    pathlib.Path(__file__).with_name("HELPER-RAN").write_text("called")
    raise SystemExit(0)
"""


def puffer(*args: str, cwd: Path, how: str = "script", timeout: float = 240):
    env = {**os.environ, "COLUMNS": "300"}
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    return subprocess.run(
        [*PUFFERS[how], *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )


def _one_line_refusal(done: subprocess.CompletedProcess, *needles: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr
    for needle in needles:
        assert needle in done.stderr, (needle, done.stderr)


def _planted(tmp_path: Path, trained: Path, edit) -> Path:
    """A copy of the trained run whose checkpoint `edit(state)` changed, and pufferhelper.py in
    `tmp_path` (the directory the command runs in)."""
    run = tmp_path / "experiments" / "cartpole" / "r1"
    shutil.copytree(trained, run)
    state = torch.load(run / "checkpoint.pt", weights_only=True)
    edit(state)
    torch.save(state, run / "checkpoint.pt")
    (tmp_path / "pufferhelper.py").write_text(HELPER)
    return run


def _set_encoder(state: dict) -> None:
    state["config"]["policy"]["encoder"] = "pufferhelper:factory"


# H1 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["script", "module"])
def test_a_checkpoint_cannot_name_code_to_import(
    tmp_path: Path, trained_cartpole: Path, how: str
) -> None:
    run = _planted(tmp_path, trained_cartpole, _set_encoder)
    done = puffer(
        "eval", "cartpole", "--load-model-path", str(run), "--no-render", cwd=tmp_path, how=how
    )
    _one_line_refusal(done, "'pufferhelper:factory'", "--trust-checkpoint", "--policy.encoder")
    assert not (tmp_path / "HELPER-RAN").exists()
    assert not (run / "eval.gif").exists()


def test_the_encoder_is_imported_only_when_the_user_names_it(
    tmp_path: Path, trained_cartpole: Path
) -> None:
    run = _planted(tmp_path, trained_cartpole, _set_encoder)
    for asked in (["--trust-checkpoint"], ["--policy.encoder", "pufferhelper:factory"]):
        (tmp_path / "HELPER-RAN").unlink(missing_ok=True)
        args = ["eval", "cartpole", "--load-model-path", str(run), "--no-render", *asked]
        puffer(*args, cwd=tmp_path, how="module")
        assert (tmp_path / "HELPER-RAN").read_text() == "called", asked


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (lambda s: s["config"].__setitem__("policy", ["not", "a", "dict"]), "'policy'"),
        (lambda s: s.__setitem__("model", [1, 2]), "model"),
        (lambda s: s["config"]["train"].__setitem__("gamma", "0.99; import os"), "gamma"),
        (lambda s: s["config"]["train"].__setitem__("no_such_key", 1), "no_such_key"),
    ],
)
def test_a_checkpoint_config_is_parsed_like_user_input(
    tmp_path: Path, trained_cartpole: Path, edit, needle: str, puffer_in_process
) -> None:
    run = _planted(tmp_path, trained_cartpole, edit)
    done = puffer_in_process(
        "eval", "cartpole", "--load-model-path", str(run), "--no-render", cwd=tmp_path
    )
    _one_line_refusal(done, needle, str(run / "checkpoint.pt"))
    resumed = puffer_in_process(
        "train", "cartpole", "--no-dashboard", *TINY, "--train.run-id", "r1",
        "--train.resume", "true", "--train.total-timesteps", "2048", cwd=tmp_path,
    )  # fmt: skip
    _one_line_refusal(resumed, needle)
    assert json.loads((run / "config.json").read_text())["train"]["run_id"] == "r1"


# H2 ------------------------------------------------------------------------------------------

# Env dir names that resolving would act on: os.abort() kills the process; the other imports
# pufferhelper.py from the current directory.
HOSTILE_ENVS = ("pettingzoo-os:abort", "gym-pufferhelper:X", "pettingzoo-pufferhelper:factory")


def _hostile_names(tmp_path: Path) -> Path:
    data = tmp_path / "experiments"
    for env in HOSTILE_ENVS:
        run = data / env / "r1"
        run.mkdir(parents=True)
        (run / "config.json").write_text(json.dumps({"train": {"gamma": 0.9}}))
        (run / "metrics.jsonl").write_text(json.dumps({"step": 256}) + "\n")
    (tmp_path / "pufferhelper.py").write_text(HELPER)
    return data


def _check_named_runs(data: dict) -> None:
    runs = {run["env"]: run for run in data["runs"]}
    assert set(runs) == set(HOSTILE_ENVS)
    for run in runs.values():
        assert run["error"] is None and run["step"] == [256.0]
        # Diffed against the typed defaults: the name was never resolved.
        assert run["diff"]["train.gamma"][0] == 0.9


@pytest.mark.parametrize("how", ["script", "module"])
def test_a_folder_name_runs_no_code_in_the_export(tmp_path: Path, how: str) -> None:
    data = _hostile_names(tmp_path)
    out = tmp_path / "site"
    done = puffer("dashboard", "--data-dir", str(data), "--export", str(out), cwd=tmp_path, how=how)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (tmp_path / "HELPER-RAN").exists()
    text = (out / "data.js").read_text()
    _check_named_runs(json.loads(text[len("pufferData(") : -3]))


def test_a_folder_name_runs_no_code_in_the_server(tmp_path: Path) -> None:
    import http.client
    import re

    data = _hostile_names(tmp_path)
    child = subprocess.Popen(
        [*PUFFERS["module"], "dashboard", "--data-dir", str(data), "--port", "0"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "COLUMNS": "300"},
    )  # fmt: skip
    try:
        line = child.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)(/[A-Za-z0-9_-]+/)", line)
        assert match, line
        for _ in range(2):
            conn = http.client.HTTPConnection("127.0.0.1", int(match.group(1)), timeout=60)
            conn.request("GET", match.group(2) + "data.js")
            answer = conn.getresponse()
            body = answer.read().decode()
            conn.close()
            assert answer.status == 200
            _check_named_runs(json.loads(body[len("pufferData(") : -3]))
        assert child.poll() is None  # still serving
        assert not (tmp_path / "HELPER-RAN").exists()
    finally:
        child.terminate()
        _, stderr = child.communicate(timeout=60)
    assert "Traceback" not in stderr, stderr


# H4, H5, H8: writes stay inside and never go through a planted symlink ---------------------


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "outside" / "victim.txt"
    victim.parent.mkdir()
    victim.write_text("precious")
    return victim


def test_eval_replaces_a_planted_video_symlink_and_leaves_its_target(
    tmp_path: Path, trained_cartpole: Path, puffer_in_process
) -> None:
    run = tmp_path / "experiments" / "cartpole" / "r1"
    shutil.copytree(trained_cartpole, run)
    victim = _victim(tmp_path)
    (run / "eval.gif").symlink_to(victim)
    out = tmp_path / "mine.gif"
    args = ["eval", "cartpole", "--load-model-path", str(run), "--max-steps", "20"]
    for extra in ([], ["--video", str(out)]):
        if (run / "eval.gif").exists() and not (run / "eval.gif").is_symlink():
            (run / "eval.gif").unlink()
            (run / "eval.gif").symlink_to(victim)
        done = puffer_in_process(*args, *extra, cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        assert victim.read_text() == "precious"
        gif = run / "eval.gif"
        assert not gif.is_symlink() and gif.read_bytes().startswith(b"GIF89a")
        assert not [p for p in run.iterdir() if p.name.endswith(".tmp")]
    assert out.read_bytes().startswith(b"GIF89a")


@pytest.mark.parametrize("name", ["../../escape", "a/b", "..", "x" * 300])
def test_a_sweep_name_is_checked_like_a_run_id(
    tmp_path: Path, name: str, puffer_in_process
) -> None:
    done = puffer_in_process("sweep", "cartpole", "--name", name, *TINY, cwd=tmp_path)
    _one_line_refusal(done, "--name")
    made = [p for p in tmp_path.rglob("*")]
    assert not [p for p in made if "escape" in p.name or p.name.startswith("sweep-")], made


def test_a_sweep_writes_through_no_symlink_and_stays_inside(
    tmp_path: Path, puffer_in_process
) -> None:
    victim = _victim(tmp_path)
    sweeps = tmp_path / "experiments" / "cartpole"
    # config.toml planted as a link, beside a store no sweep wrote (which stops the sweep).
    (sweeps / "sweep-s1").mkdir(parents=True)
    (sweeps / "sweep-s1" / "config.toml").symlink_to(victim)
    (sweeps / "sweep-s1" / "sweep.jsonl").write_bytes(b"\xff not a store\n")
    done = puffer_in_process("sweep", "cartpole", "--name", "s1", *TINY, cwd=tmp_path)
    _one_line_refusal(done, "line 1 is not UTF-8")
    assert victim.read_text() == "precious"
    assert not (sweeps / "sweep-s1" / "config.toml").is_symlink()
    # The store itself a link (dangling: the sweep would create its target).
    (sweeps / "sweep-s2").mkdir()
    (sweeps / "sweep-s2" / "sweep.jsonl").symlink_to(victim.with_name("store.jsonl"))
    done = puffer_in_process("sweep", "cartpole", "--name", "s2", *TINY, cwd=tmp_path)
    _one_line_refusal(done, "is a symlink")
    assert not victim.with_name("store.jsonl").exists()
    # The whole sweep dir a link out of the data dir.
    (sweeps / "sweep-s3").symlink_to(victim.parent, target_is_directory=True)
    done = puffer_in_process("sweep", "cartpole", "--name", "s3", *TINY, cwd=tmp_path)
    _one_line_refusal(done, "outside the data dir")
    assert sorted(p.name for p in victim.parent.iterdir()) == ["victim.txt"]


@pytest.mark.parametrize("dangling", [True, False])
def test_training_appends_through_no_metrics_symlink(
    tmp_path: Path, dangling: bool, puffer_in_process
) -> None:
    victim = _victim(tmp_path)
    target = victim.with_name("new.jsonl") if dangling else victim
    run = tmp_path / "experiments" / "cartpole" / "r2"
    run.mkdir(parents=True)
    (run / "metrics.jsonl").symlink_to(target)
    done = puffer_in_process(
        "train", "cartpole", "--no-dashboard", *TINY, "--train.run-id", "r2",
        "--train.total-timesteps", "1024", cwd=tmp_path,
    )  # fmt: skip
    _one_line_refusal(done, "metrics.jsonl is a symlink")
    assert victim.read_text() == "precious" and not victim.with_name("new.jsonl").exists()
    assert not (run / "config.json").exists() and not (run / "checkpoint.pt").exists()


# H6: one run per directory -------------------------------------------------------------------


def test_a_second_train_or_resume_of_a_busy_run_dir_is_refused_naming_the_pid(
    tmp_path: Path, puffer_in_process
) -> None:
    import signal
    import time

    run = tmp_path / "experiments" / "cartpole" / "r1"
    args = ["train", "cartpole", "--no-dashboard", *TINY, "--train.run-id", "r1"]
    first = subprocess.Popen(
        [*PUFFER, *args, "--train.total-timesteps", "100000000"], cwd=tmp_path,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not (run / "checkpoint.pt").is_file():
            assert first.poll() is None, first.stderr.read()
            assert time.monotonic() < deadline, "the first run wrote no checkpoint"
            time.sleep(0.2)
        rows = (run / "metrics.jsonl").read_bytes()
        for extra in ([], ["--train.resume", "true"]):
            # The second in this process: the first's holding the dir is what is refused.
            second = puffer_in_process(
                *args, *extra, "--train.total-timesteps", "2048", cwd=tmp_path
            )
            _one_line_refusal(second, f"pid {first.pid}", "is in use", "train.run_id")
        # The busy run's files are its own: nothing was appended by the refused ones.
        assert (run / "metrics.jsonl").read_bytes()[: len(rows)] == rows
        assert first.poll() is None
    finally:
        first.send_signal(signal.SIGKILL)
        first.communicate(timeout=60)


# H9: bad input is one line, exit 2, nothing created ------------------------------------------

DEEP_TOML = "a = " + "[" * 100_000 + "]" * 100_000 + "\n"


@pytest.mark.parametrize(
    ("args", "files", "needle"),
    [
        (["--config", "bad.toml"], {"bad.toml": b"[train]\ngamma = 0.9 # caf\xe9\n"}, "UTF-8"),
        (["--config", "deep.toml"], {"deep.toml": DEEP_TOML.encode()}, "nest too deep"),
        (["--train.run-id", "x" * 300], {}, "past the 200"),
        (["--env.num-envs", "1e9"], {}, "bound of 1,048,576"),
        (["--train.seed", str(2**70)], {}, "--train.seed"),
        (["--policy.hidden-size", "1e8"], {}, "bound of 65,536"),
        (["--train.total-timesteps", "1e30"], {}, "--train.total-timesteps"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_nothing_created(
    tmp_path: Path, args: list[str], files: dict[str, bytes], needle: str, puffer_in_process
) -> None:
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)
    # A size that got through would leave the run dir the last assertion looks for.
    done = puffer_in_process("train", "cartpole", "--no-dashboard", *TINY, *args, cwd=tmp_path)
    _one_line_refusal(done, needle)
    env_dir = tmp_path / "experiments" / "cartpole"
    assert not env_dir.exists() or not any(env_dir.iterdir())


def test_export_onto_a_file_is_one_line(tmp_path: Path, puffer_in_process) -> None:
    (tmp_path / "experiments").mkdir()
    (tmp_path / "taken").write_text("mine")
    done = puffer_in_process(
        "dashboard", "--data-dir", "experiments", "--export", "taken", cwd=tmp_path
    )
    _one_line_refusal(done, "--export taken")
    assert (tmp_path / "taken").read_text() == "mine"


def test_a_metrics_row_nested_too_deep_is_skipped_on_resume(
    tmp_path: Path, trained_cartpole: Path, puffer_in_process
) -> None:
    run = tmp_path / "experiments" / "cartpole" / "r1"
    shutil.copytree(trained_cartpole, run)
    with (run / "metrics.jsonl").open("ab") as file:
        file.write(b'{"step": ' + b"[" * 200_000 + b"]" * 200_000 + b"}\n")
    done = puffer_in_process(
        "train", "cartpole", "--no-dashboard", *TINY, "--train.run-id", "r1",
        "--train.resume", "true", "--train.total-timesteps", "1280", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "skipped 1 line" in done.stderr and "Traceback" not in done.stderr
