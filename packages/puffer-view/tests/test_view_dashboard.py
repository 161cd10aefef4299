"""The dashboard's data and files without a browser: a run read from its files, a broken run
listed with its error, a symlink never followed, and an export that holds the page, the data
and the videos. The served page in Chromium and the hostile requests are puffer-cli's tests of
`puffer dashboard`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from puffer.sweep import RunRecord, SweepStore
from puffer.train.paths import RunPaths
from puffer.view import DashboardServer, collect, export
from puffer.view.experiments import MAX_POINTS
from puffer.view.site import data_script, page_files


def _run(root: Path, name: str, epochs: int) -> Path:
    run = root / "squared" / name
    run.mkdir(parents=True)
    rows = [
        {"step": 1000 * (i + 1), "performance/sps": 500.0, "environment/episode_return": i}
        for i in range(epochs)
    ]
    (run / RunPaths.METRICS).write_text("".join(json.dumps(row) + "\n" for row in rows))
    return run


def test_runs_are_read_thinned_and_isolated(tmp_path: Path) -> None:
    good = _run(tmp_path, "good", epochs=MAX_POINTS * 3)
    (good / RunPaths.VIDEO).write_bytes(b"GIF89a")
    broken = _run(tmp_path, "broken", epochs=2)
    (broken / RunPaths.CONFIG).write_text("{not json")
    linked = _run(tmp_path, "linked", epochs=1)
    os.symlink(good / RunPaths.VIDEO, linked / RunPaths.VIDEO)

    runs = {run["id"]: run for run in collect(tmp_path)["runs"]}
    assert set(runs) == {"squared/good", "squared/broken", "squared/linked"}
    read = runs["squared/good"]
    assert read["error"] is None and read["steps"] == 3000.0 * MAX_POINTS
    # Thinned to MAX_POINTS, the last epoch kept; wall time is steps over SPS, summed.
    assert len(read["step"]) == MAX_POINTS and read["step"][-1] == read["steps"]
    assert read["wall"][-1] == pytest.approx(read["steps"] / 500.0)
    assert read["video"] == "squared/good/eval.gif"
    assert runs["squared/broken"]["error"].startswith("JSONDecodeError")
    assert runs["squared/linked"]["video"] is None  # a symlink is never followed


def test_export_holds_the_page_the_data_and_the_videos(tmp_path: Path) -> None:
    data = tmp_path / "experiments"
    (_run(data, "good", epochs=3) / RunPaths.VIDEO).write_bytes(b"GIF89a")
    index = export(data, tmp_path / "site")
    site = index.parent
    for name, content in page_files().items():
        assert (site / name).read_bytes() == content
    assert (site / "files" / "squared" / "good" / RunPaths.VIDEO).read_bytes() == b"GIF89a"
    script = (site / "data.js").read_text()
    assert script.startswith("pufferData(") and '"refresh": 0' in script
    server = DashboardServer(data, port=0)
    try:
        assert server.content("/index.html") == page_files()["index.html"]
        assert server.content("/files/squared/good/eval.gif") == b"GIF89a"
        assert server.content("/files/squared/../squared/good/eval.gif") is None
        payload = server.content("/data.js")
        assert payload is not None and payload.startswith(b"pufferData(")
    finally:
        server.close()
    assert data_script({"runs": []}, 5.0).endswith(b");\n")


def test_config_diff_of_a_derived_env_is_against_its_shipped_config(tmp_path: Path) -> None:
    """A gym id has no TOML: its [vec], [policy] and [train] keys are derived when it trains.
    The diff names only what the run set off `puffer config gym-CartPole-v1`, not those."""
    from puffer.train import train
    from puffer.train.config import load_config

    env = "gym-CartPole-v1"
    # A whole batch (2 envs x 16 steps x 2 epochs) in one process: a second's training.
    chosen = {
        "train.learning_rate": 0.001,
        "train.horizon": 16,
        "train.minibatch_size": 32,
        "train.total_timesteps": 64,
        "vec.backend": "serial",
        "vec.num_instances": 2,
        "vec.num_workers": 1,
    }
    where = ["--train.data-dir", str(tmp_path), "--train.run-id", "r1"]
    flags = [*where, *(a for k, v in chosen.items() for a in (f"--{k}", str(v)))]
    shipped = load_config(env)
    train(env, load_config(env, overrides=flags))
    (run,) = collect(tmp_path)["runs"]
    default = {k: getattr(getattr(shipped, k.split(".")[0]), k.split(".")[1]) for k in chosen}
    # Only the keys set here; none of the 50-odd keys derived from the env's spaces.
    assert run["diff"] == {k: [v, default[k]] for k, v in chosen.items() if v != default[k]}
    assert len(run["diff"]) >= 5


def test_sweep_fronts_for_each_cost_and_an_older_store(tmp_path: Path) -> None:
    """Each cost kind has its own Pareto front; a run of an older store (no CPU time, no
    steps) is on the wall front only."""
    sweep = tmp_path / "cartpole" / "sweep-s"
    sweep.mkdir(parents=True)
    (sweep / "config.toml").write_text('[sweep]\ncost = "steps"\n')
    store = SweepStore(sweep / "sweep.jsonl")
    store.open(["x"])
    # score, wall, cpu, steps: run 0 is cheapest in wall time, run 1 in CPU time and steps.
    for run_id, (score, wall, cpu, steps) in enumerate(
        ((1.0, 1.0, 9.0, 900), (2.0, 5.0, 2.0, 100))
    ):
        store.append(RunRecord(run_id, {"x": 1.0}, score, wall, cpu_seconds=cpu, agent_steps=steps))
    with (sweep / "sweep.jsonl").open("a") as file:  # a line of a store from before
        file.write(json.dumps({"run_id": 2, "params": {"x": 2}, "score": 3.0, "cost": 0.5}) + "\n")
    (read,) = collect(tmp_path)["sweeps"]
    assert read["error"] is None and read["cost"] == "steps"
    assert [p["costs"] for p in read["points"]] == [
        {"wall": 1.0, "cpu": 9.0, "steps": 900},
        {"wall": 5.0, "cpu": 2.0, "steps": 100},
        {"wall": 0.5, "cpu": None, "steps": None},
    ]
    assert read["fronts"] == {"wall": [2], "cpu": [1], "steps": [1]}
