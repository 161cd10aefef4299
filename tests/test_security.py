"""Nothing runs that the user did not ask for (issue 62): checkpoints, folder names and
files in a run directory as an attacker would plant them, against the real `puffer` command in
subprocesses. The dashboard's web-facing cases are in puffer-cli's test_cli_security.py."""

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


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`experiments/cartpole/r1/` of a finished 1,024-step run (copy it before changing it)."""
    where = tmp_path_factory.mktemp("trained")
    done = puffer(
        "train", "cartpole", "--no-dashboard", *TINY, "--train.run-id", "r1",
        "--train.total-timesteps", "1024", cwd=where,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return where / "experiments" / "cartpole" / "r1"


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
def test_a_checkpoint_cannot_name_code_to_import(tmp_path: Path, trained: Path, how: str) -> None:
    run = _planted(tmp_path, trained, _set_encoder)
    done = puffer(
        "eval", "cartpole", "--load-model-path", str(run), "--no-render", cwd=tmp_path, how=how
    )
    _one_line_refusal(done, "'pufferhelper:factory'", "--trust-checkpoint", "--policy.encoder")
    assert not (tmp_path / "HELPER-RAN").exists()
    assert not (run / "eval.gif").exists()


def test_the_encoder_is_imported_only_when_the_user_names_it(tmp_path: Path, trained: Path) -> None:
    run = _planted(tmp_path, trained, _set_encoder)
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
    tmp_path: Path, trained: Path, edit, needle: str
) -> None:
    run = _planted(tmp_path, trained, edit)
    done = puffer("eval", "cartpole", "--load-model-path", str(run), "--no-render", cwd=tmp_path)
    _one_line_refusal(done, needle, str(run / "checkpoint.pt"))
    resumed = puffer(
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
