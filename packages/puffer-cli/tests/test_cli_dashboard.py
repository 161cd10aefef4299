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
from puffer.sweep.store import CostKind
from puffer.train.paths import RunPaths
from puffer.view.site import HOST, DashboardServer

runner = CliRunner()
TRAIN = ("--no-dashboard", "--train.total-timesteps", "8192", "--env.num-envs", "32")
SWEEP = ("--sweep.max-runs", "8", "--train.total-timesteps", "1024", "--name", "accept")
# Set to a path to keep the test's screenshot there (the root README's image comes from it).
SCREENSHOT_ENV = "PUFFER_DASHBOARD_SCREENSHOT"

# What the page drew, read from its DOM (SVG paths and points) and from the plot divs' data.
SUMMARY = """(() => {
  const sweeps = [...document.querySelectorAll(".plot.sweep")].map((div) => {
    const traces = div.querySelectorAll(".scatterlayer .trace");
    return {
      id: div.dataset.sweep, cost: div.dataset.cost, frontX: div.data[1].x, frontY: div.data[1].y,
      points: traces[0].querySelectorAll("path.point").length,
      frontPoints: traces[1].querySelectorAll("path.point").length,
      xTitle: div._fullLayout.xaxis.title.text,
    };
  });
  const charts = [...document.querySelectorAll("#curves .plot.curves")].map((div) => ({
    env: div.dataset.env,
    names: div.data.map((t) => t.name),
    lastX: Math.max(...div.data.flatMap((t) => t.x)),
    xRange: div._fullLayout.xaxis.range,
    traces: [...div.querySelectorAll(".scatterlayer .trace")].map((t) => ({
      line: t.querySelector("path.js-line")?.getAttribute("d") || "",
      points: t.querySelectorAll("path.point").length,
    })),
  }));
  return {
    charts,
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
    """Iterations of a run that logged `metric` (one in which no episode ended logs none)."""
    rows = [json.loads(line) for line in (run / RunPaths.METRICS).read_text().splitlines()]
    return sum(row.get(metric) is not None for row in rows)


def _store_front(data: Path, kind: CostKind = "wall") -> tuple[list[float], list[float]]:
    """The Pareto front of the sweep store against cost `kind`, computed here from the store."""
    path = data / "cartpole" / "sweep-accept" / "sweep.jsonl"
    header = json.loads(path.read_text().splitlines()[0])
    records = [r for r in SweepStore(path).open(header["params"]) if not r.failed]
    assert len(records) == 8
    score = np.array([r.score for r in records])
    cost = np.array([r.cost_as(kind) for r in records], dtype=np.float64)
    front = pareto_front(score, cost)
    return cost[front].tolist(), score[front].tolist()


def _charts(summary: dict, runs: set[str]) -> dict[str, dict]:
    """The page's curve charts by env, each checked: its own runs' lines, every run's points
    drawn, and an x axis that ends near the env's own last step (plotly pads a few percent)."""
    charts = {chart["env"]: chart for chart in summary["charts"]}
    for env, chart in charts.items():
        assert set(chart["names"]) == {r for r in runs if r.startswith(env + "/")}
        assert all(t["points"] for t in chart["traces"])
        assert chart["lastX"] <= chart["xRange"][1] < 1.2 * chart["lastX"], env
    return charts


def _choose(browser, select: str, value: str) -> dict:
    """Pick `value` in the page's `select` (as a person would) and read the page again."""
    browser.evaluate(
        f"(() => {{ const s = document.getElementById({select!r}); s.value = {value!r}; "
        "s.dispatchEvent(new Event('change')); })()"
    )
    return browser.evaluate(SUMMARY)


def _load(browser, url: str) -> dict:
    browser.goto(url)
    browser.wait_for("document.body.dataset.loaded && document.querySelectorAll('.param').length")
    return browser.evaluate(SUMMARY)


def test_dashboard_shows_the_runs_and_the_sweep(experiments, browser, tmp_path) -> None:
    server = DashboardServer(experiments, port=0, refresh=60).start()
    try:
        assert server.httpd.server_address[0] == HOST == "127.0.0.1"
        served = _load(browser, server.url)
        # Curves: one chart per env, each on its own x axis: the 8192-step breakout run does
        # not squash the 1024-step cartpole runs. One drawn line per run.
        runs = _expected_runs(experiments)
        assert len(runs) == 9
        charts = _charts(served, runs)
        assert sorted(charts) == ["breakout", "cartpole"]
        assert len(charts["cartpole"]["names"]) == 8
        assert charts["breakout"]["lastX"] > 4 * charts["cartpole"]["lastX"]
        breakout = next(r for r in runs if r.startswith("breakout/"))
        logged = _logged(experiments / breakout, "environment/episode_return")
        (drawn,) = charts["breakout"]["traces"]
        assert logged >= 2 and drawn["points"] == logged
        assert drawn["line"].count("L") == logged - 1
        row = next(text for text in served["rows"] if breakout in text)
        assert "env.num_envs=32" in row and "train.total_timesteps=8,192" in row
        assert "eval.gif" in row
        # The env filter: one chart, and only that env's rows.
        filtered = _choose(browser, "env", "cartpole")
        assert [c["env"] for c in filtered["charts"]] == ["cartpole"]
        assert len(filtered["rows"]) == 8 and all("cartpole" in r for r in filtered["rows"])
        assert _charts(_choose(browser, "env", ""), runs).keys() == charts.keys()
        # The sweep: all 8 points drawn against the cost it searched by (wall time), and the
        # front's points are the store's.
        (sweep,) = served["sweeps"]
        front_cost, front_score = _store_front(experiments)
        assert sweep["cost"] == "wall" and sweep["xTitle"] == "wall time (s)"
        assert sweep["points"] == 8 and sweep["frontPoints"] == len(front_cost)
        assert sweep["frontX"] == pytest.approx(front_cost)
        assert sweep["frontY"] == pytest.approx(front_score)
        assert served["params"] == 4  # one scatter per searched parameter
        # The same runs against CPU time and agent steps: each front is the store's.
        for kind, title in (("cpu", "CPU time (s)"), ("steps", "agent steps")):
            (redrawn,) = _choose(browser, "cost", kind)["sweeps"]
            front_cost, front_score = _store_front(experiments, kind)
            assert redrawn["cost"] == kind and redrawn["xTitle"] == title
            assert redrawn["points"] == 8 and redrawn["frontPoints"] == len(front_cost)
            assert redrawn["frontX"] == pytest.approx(front_cost)
            assert redrawn["frontY"] == pytest.approx(front_score)
        assert _choose(browser, "cost", "")["sweeps"] == served["sweeps"]
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
        with metrics.open("a") as file:  # what the trainer appends after its next iteration
            file.write(json.dumps({**last, "step": last["step"] + 2048}) + "\n")
        browser.wait_for(f"{CURVE}.data[0].x.length === {before + 1}")
        assert browser.console_errors == []
    finally:
        server.close()


CURVE = "document.querySelector('.plot.curves[data-env=\"breakout\"]')"


def _curve_length(browser, url: str) -> int:
    browser.goto(url)
    browser.wait_for("document.body.dataset.loaded")
    return browser.evaluate(f"{CURVE}.data[0].x.length")


def test_dashboard_refuses_a_missing_data_dir(tmp_path) -> None:
    result = runner.invoke(app, ["dashboard", "--data-dir", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert "no such folder; train first" in result.output
