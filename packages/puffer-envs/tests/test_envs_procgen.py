"""Procgen through its own interpreter: ids, options, step-for-step parity, the CLI, faults.

These tests build Procgen's venv (procgen2 0.10.7, numpy < 2, gym < 1) in the user cache on
their first run on a machine (PyPI needed once; about 30 s), and reuse it after.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

import puffer.vector
from puffer.core import APIUsageError, env_creator, make
from puffer.envs.procgen import GAMES, INTERPRETER, ProcgenEnv
from puffer.train.config import load_config
from puffer.train.policies import IMPALA, make_policy

PUFFER = [sys.executable, "-m", "puffer.cli"]
# The raw game in Procgen's venv, no puffer: the observations, rewards and episode starts
# that the same seed and actions give there.
RAW = """
import contextlib, io, sys
import numpy as np
with contextlib.redirect_stderr(io.StringIO()):
    from procgen import ProcgenGym3Env
actions = np.load(sys.argv[1])
env = ProcgenGym3Env(num=actions.shape[1], env_name="bigfish", rand_seed=7,
                     distribution_mode="easy", num_levels=0, start_level=0, num_threads=0)
_, ob, _ = env.observe()
obs, rewards, firsts = [ob["rgb"]], [], []
for a in actions:
    env.act(a)
    r, ob, f = env.observe()
    obs.append(ob["rgb"]); rewards.append(r); firsts.append(f)
np.savez(sys.argv[2], obs=np.array(obs), rewards=np.array(rewards), firsts=np.array(firsts))
"""
STEPS, GAMES_PER_ENV = 150, 3


@pytest.fixture(scope="session")
def interpreter() -> Path:
    """Procgen's venv, built on the first use on this machine (the build's time printed)."""
    start = time.monotonic()
    with contextlib.redirect_stderr(io.StringIO()):
        python = INTERPRETER.ensure()
    print(f"procgen venv ready in {time.monotonic() - start:.1f} s")
    return python


@pytest.fixture(scope="session")
def raw(interpreter: Path, tmp_path_factory) -> dict[str, np.ndarray]:
    folder = tmp_path_factory.mktemp("raw")
    actions = np.random.default_rng(0).integers(0, 15, (STEPS, GAMES_PER_ENV)).astype(np.int32)
    np.save(folder / "actions.npy", actions)
    script = folder / "raw.py"
    script.write_text(RAW)
    command = [str(interpreter), "-I", str(script), str(folder / "actions.npy")]
    subprocess.run([*command, str(folder / "raw.npz")], check=True)
    return {"actions": actions, **np.load(folder / "raw.npz")}


def test_every_game_is_an_id_with_the_procgen_config() -> None:
    for game in GAMES:
        creator = env_creator(f"procgen-{game}")
        assert creator.func is ProcgenEnv and creator.keywords == {"game": game}
        assert [source.name for source in creator.config_sources] == ["procgen.toml"]
    assert len(GAMES) == 16


def test_the_config_is_the_papers_with_the_impala_cnn() -> None:
    config = load_config("procgen-coinrun", overrides=["--env.num-envs", "2"])
    assert config.env["distribution_mode"] == "easy" and config.env["game"] == "coinrun"
    assert (config.train.gamma, config.train.update_epochs, config.train.learning_rate) == (
        0.999,
        3,
        5e-4,
    )
    env = make("procgen-coinrun", num_envs=2)  # nothing starts until reset
    policy = make_policy(config.policy, env)
    encoder = policy.encoder
    assert isinstance(encoder, IMPALA)
    convs = [m for m in encoder.modules() if isinstance(m, torch.nn.Conv2d)]
    # 3 stages: an entry conv, then 2 residual blocks of 2 convs each.
    assert [c.out_channels for c in convs] == [16] * 5 + [32] * 5 + [32] * 5
    assert len([m for m in encoder.modules() if isinstance(m, torch.nn.MaxPool2d)]) == 3
    assert encoder.project.out_features == 256
    obs = torch.zeros((4, 64, 64, 3), dtype=torch.uint8)
    assert encoder(obs).shape == (4, 256)
    env.close()


def test_procgen_options_are_env_keys_of_the_config() -> None:
    overrides = ["--env.distribution-mode", "hard", "--env.num-levels", "200"]
    config = load_config("procgen-bigfish", overrides=[*overrides, "--env.start-level", "5"])
    assert (config.env["distribution_mode"], config.env["num_levels"]) == ("hard", 200)
    assert config.env["start_level"] == 5
    env = make("procgen-bigfish", **config.env)
    assert dict(env.isolated.kwargs)["distribution_mode"] == "hard"  # what the worker gets
    env.close()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"game": "pong"}, r"procgen-pong: no Procgen game 'pong'; games: bigfish, "),
        ({"distribution_mode": "medium"}, r"distribution_mode='medium'; use one of easy, "),
        ({"num_envs": 0}, r"num_envs=0; expected an int >= 1"),
        ({"num_levels": -1}, r"num_levels=-1; expected an int >= 0"),
    ],
)
def test_bad_options_are_refused_by_name(kwargs: dict, message: str) -> None:
    with pytest.raises(APIUsageError, match=message):
        ProcgenEnv(**kwargs)


def _run(env, actions: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray], list]:
    obs, _ = env.reset(seed=7)
    observations, rewards, terminals, infos = [obs.copy()], [], [], []
    for a in actions:
        obs, reward, terminal, _, step_infos = env.step(a)
        observations.append(obs.copy())
        rewards.append(reward.copy())
        terminals.append(terminal.copy())
        infos += step_infos
    return observations, rewards, terminals, infos


@pytest.mark.parametrize("how", ["native", "multiprocessing"])
def test_steps_match_the_raw_game_in_its_venv(raw: dict, how: str) -> None:
    if how == "native":
        env = make("procgen-bigfish", num_envs=GAMES_PER_ENV)
    else:  # one instance in a worker of Procgen's interpreter, no copy on the way
        env = puffer.vector.make(
            "procgen-bigfish", 1, "multiprocessing", env_kwargs={"num_envs": GAMES_PER_ENV}
        )
    try:
        observations, rewards, terminals, infos = _run(env, raw["actions"])
    finally:
        env.close()
    np.testing.assert_array_equal(np.array(observations), raw["obs"])
    np.testing.assert_array_equal(np.array(rewards), raw["rewards"])
    np.testing.assert_array_equal(np.array(terminals), raw["firsts"])
    ends = int(raw["firsts"].sum())
    assert ends > 0 and len(infos) == ends
    # The first episode to end (step-major, as infos come), its stats from the raw rewards.
    step, game = np.argwhere(raw["firsts"])[0]
    assert infos[0]["episode_length"] == step + 1
    assert infos[0]["episode_return"] == pytest.approx(raw["rewards"][: step + 1, game].sum())


def test_render_is_the_agents_view_enlarged(interpreter: Path) -> None:
    env = make("procgen-coinrun", num_envs=1, render_mode="rgb_array")
    obs, _ = env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (256, 256, 3) and frame.dtype == np.uint8
    np.testing.assert_array_equal(frame[::4, ::4], obs[0])
    env.close()


def test_puffer_train_procgen_coinrun_trains(tmp_path: Path, interpreter: Path) -> None:
    small = [
        "--env.num-envs", "8", "--train.horizon", "16", "--train.minibatch-size", "64",
        "--train.total-timesteps", "256", "--train.torch-threads", "1",
    ]  # fmt: skip
    done = subprocess.run(
        [*PUFFER, "train", "procgen-coinrun", "--no-dashboard", *small],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert list(tmp_path.glob("experiments/procgen-coinrun/*/metrics.jsonl"))


def _isolated_children(pid: int, python: Path) -> list[int]:
    """The children of `pid` started as `python` (Procgen's venv; its binary is the trainer's,
    so the command line tells them apart from the resource tracker)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            continue
        if parent == pid and command[0] == bytes(python):
            found.append(int(entry.name))
    return found


def test_a_killed_procgen_worker_stops_the_run_with_one_line(tmp_path, interpreter) -> None:
    child = subprocess.Popen(
        [*PUFFER, "train", "procgen-coinrun", "--no-dashboard", "--env.num-envs", "4",
         "--train.torch-threads", "1"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 240
    while not (workers := _isolated_children(child.pid, interpreter)):
        if child.poll() is not None or time.monotonic() > deadline:
            child.kill()
            raise AssertionError(f"no Procgen worker started: {child.communicate()}")
        time.sleep(0.05)
    os.kill(workers[0], signal.SIGKILL)
    out, err = child.communicate(timeout=120)
    assert child.returncode == 2, (child.returncode, out, err)
    assert re.fullmatch(
        rf"error: worker 0 \(pid {workers[0]}, in procgen's own interpreter \S+\) of "
        r"Multiprocessing\(env='procgen-coinrun'.* killed by SIGKILL.*\n",
        err,
    ), err
    leftovers = [p for p in Path("/dev/shm").glob(f"puffer-vec-{child.pid}-*")]
    assert not leftovers, leftovers
