"""`puffer dashboard` in headless Chromium, over the runs of the acceptance flow: `puffer train
breakout`, `puffer eval` of it, and `puffer sweep cartpole --sweep.max-runs 8`, tiny budgets."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from puffer.cli.main import app
from puffer.sweep import SweepStore, pareto_front
from puffer.train.paths import RunPaths
from puffer.view.site import HOST, DashboardServer

runner = CliRunner()
TRAIN = ("--no-dashboard", "--train.total-timesteps", "8192", "--env.num-envs", "32")
SWEEP = ("--sweep.max-runs", "8", "--train.total-timesteps", "1024", "--name", "accept")
# Set to a path to keep the test's screenshot there (the root README's image comes from it).
SCREENSHOT_ENV = "PUFFER_DASHBOARD_SCREENSHOT"

# What the page drew, read from its DOM (SVG paths and points) and from the plot divs' data.
SUMMARY = """(() => {
  const curves = document.getElementById("curves");
  const sweeps = [...document.querySelectorAll(".plot.sweep")].map((div) => {
    const traces = div.querySelectorAll(".scatterlayer .trace");
    return {
      id: div.dataset.sweep, frontX: div.data[1].x, frontY: div.data[1].y,
      points: traces[0].querySelectorAll("path.point").length,
      frontPoints: traces[1].querySelectorAll("path.point").length,
    };
  });
  return {
    names: curves.data.map((t) => t.name),
    traces: [...curves.querySelectorAll(".scatterlayer .trace")].map((t) => ({
      line: t.querySelector("path.js-line")?.getAttribute("d") || "",
      points: t.querySelectorAll("path.point").length,
    })),
    rows: [...document.querySelectorAll("#runs tbody tr")].map((r) => r.innerText),
    params: document.querySelectorAll(".param .scatterlayer .trace").length,
    sweeps,
  };
})()"""


def _invoke(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def experiments(tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("dashboard") / "experiments"
    where = ("--train.data-dir", str(data))
    _invoke("train", "breakout", *TRAIN, *where)
    run = RunPaths.latest(data, "breakout")
    assert run is not None
    _invoke("eval", "breakout", "--video", str(run.video), "--max-steps", "30", *where)
    _invoke("sweep", "cartpole", *SWEEP, *where)
    return data


def _expected_runs(data: Path) -> set[str]:
    found = [*data.glob("breakout/*/metrics.jsonl"), *data.glob("cartpole/sweep-*/runs/*/*/m*")]
    return {path.parent.relative_to(data).as_posix() for path in found}


def _logged(run: Path, metric: str) -> int:
    """Epochs of a run that logged `metric` (an epoch in which no episode ended logs none)."""
    rows = [json.loads(line) for line in (run / RunPaths.METRICS).read_text().splitlines()]
    return sum(row.get(metric) is not None for row in rows)


def _store_front(data: Path) -> tuple[list[float], list[float]]:
    """The Pareto front of the sweep store, computed here from the store itself."""
    path = data / "cartpole" / "sweep-accept" / "sweep.jsonl"
    header = json.loads(path.read_text().splitlines()[0])
    records = [r for r in SweepStore(path).open(header["params"]) if not r.failed]
    assert len(records) == 8
    score = np.array([r.score for r in records])
    cost = np.array([r.cost for r in records])
    front = pareto_front(score, cost)
    return cost[front].tolist(), score[front].tolist()


def _load(browser, url: str) -> dict:
    browser.goto(url)
    browser.wait_for("document.body.dataset.loaded && document.querySelectorAll('.param').length")
    return browser.evaluate(SUMMARY)


def test_dashboard_shows_the_runs_and_the_sweep(experiments, browser, tmp_path) -> None:
    server = DashboardServer(experiments, port=0, refresh=60).start()
    try:
        assert server.httpd.server_address[0] == HOST == "127.0.0.1"
        served = _load(browser, server.url)
        # Curves: one drawn line per run, the trained breakout run and the 8 sweep runs.
        runs = _expected_runs(experiments)
        assert len(runs) == 9 and set(served["names"]) == runs
        # Every run's points are drawn; breakout's as a line through them: "M x,y L x,y ...".
        assert len(served["traces"]) == 9 and all(t["points"] for t in served["traces"])
        breakout = next(r for r in runs if r.startswith("breakout/"))
        logged = _logged(experiments / breakout, "environment/episode_return")
        drawn = served["traces"][served["names"].index(breakout)]
        assert logged >= 2 and drawn["points"] == logged
        assert drawn["line"].count("L") == logged - 1
        row = next(text for text in served["rows"] if breakout in text)
        assert "env.num_envs=32" in row and "train.total_timesteps=8,192" in row
        assert "eval.gif" in row
        # The sweep: all 8 points drawn, and the front's points are the store's.
        (sweep,) = served["sweeps"]
        front_cost, front_score = _store_front(experiments)
        assert sweep["points"] == 8 and sweep["frontPoints"] == len(front_cost)
        assert sweep["frontX"] == pytest.approx(front_cost)
        assert sweep["frontY"] == pytest.approx(front_score)
        assert served["params"] == 4  # one scatter per searched parameter
        # A front point links to its run: clicking it shows the params, the link selects the run.
        point = browser.evaluate(
            "(() => { const d = document.getElementById('sweep-0'); "
            "d.emit('plotly_click', {points: [{customdata: d.data[1].customdata[0]}]}); "
            "const a = document.querySelector('#sweep-point-0 a'); a.click(); "
            "return [document.getElementById('sweep-point-0').innerText, "
            "document.querySelector('#runs tr.selected').dataset.run]; })()"
        )
        assert "train.learning_rate=" in point[0] and point[1].startswith("cartpole/sweep-accept/")
        # The breakout run's eval video loads when its row is chosen.
        width = browser.evaluate(
            f"(() => {{ document.querySelector('tr[data-run=\"{breakout}\"]').click(); "
            "const img = document.getElementById('video'); "
            "return img.decode().then(() => img.naturalWidth); })()"
        )
        assert width == 576
        assert browser.console_errors == []
        png = browser.screenshot()
        assert png.startswith(b"\x89PNG")
        (tmp_path / "dashboard.png").write_bytes(png)
        if os.environ.get(SCREENSHOT_ENV):
            Path(os.environ[SCREENSHOT_ENV]).write_bytes(png)
    finally:
        server.close()
    # The static export opens from disk with the same content.
    out = tmp_path / "export"
    _invoke("dashboard", "--data-dir", str(experiments), "--export", str(out))
    exported = _load(browser, (out / "index.html").as_uri())
    assert exported == served
    assert (out / "files" / breakout / RunPaths.VIDEO).is_file()
    assert browser.console_errors == []


def test_dashboard_refreshes_while_a_run_goes_on(experiments, browser, tmp_path) -> None:
    data = tmp_path / "experiments"
    run = next(experiments.glob("breakout/*/metrics.jsonl")).parent
    shutil.copytree(run, data / "breakout" / run.name)
    server = DashboardServer(data, port=0, refresh=0.5).start()
    try:
        before = _curve_length(browser, server.url)
        metrics = data / "breakout" / run.name / RunPaths.METRICS
        last = json.loads(metrics.read_text().splitlines()[-1])
        with metrics.open("a") as file:  # what the trainer appends after its next epoch
            file.write(json.dumps({**last, "step": last["step"] + 2048}) + "\n")
        browser.wait_for(f"document.getElementById('curves').data[0].x.length === {before + 1}")
        assert browser.console_errors == []
    finally:
        server.close()


def _curve_length(browser, url: str) -> int:
    browser.goto(url)
    browser.wait_for("document.body.dataset.loaded")
    return browser.evaluate("document.getElementById('curves').data[0].x.length")


def test_dashboard_refuses_a_missing_data_dir(tmp_path) -> None:
    result = runner.invoke(app, ["dashboard", "--data-dir", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert "no such folder; train first" in result.output
