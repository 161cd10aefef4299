"""What `puffer dashboard` shows, read from a data dir: every run and every sweep, as JSON data.

The layout is puffer-train's `RunPaths` (one place names those files):

    <data_dir>/<env>/<run_id>/metrics.jsonl, config.json, eval.gif      a run
    <data_dir>/<env>/sweep-<name>/sweep.jsonl, config.toml              a sweep's store
    <data_dir>/<env>/sweep-<name>/runs/<env>/<run_id>/                  the sweep's runs

Everything here only reads: a run or a sweep still being written is read as far as it got (a
last line cut short mid-write is skipped, never truncated, unlike `SweepStore.open`).
"""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path
from typing import Any

import numpy as np

from puffer.core import PufferError
from puffer.sweep import RunRecord, pareto_front
from puffer.sweep.errors import SweepError
from puffer.train.config import load_config
from puffer.train.paths import RunPaths

__all__ = ["MAX_POINTS", "SCORE_KEYS", "collect", "read_run", "read_sweep"]

# Points per curve sent to the page: a 20M-step run logs thousands of epochs; the browser
# needs a few hundred to draw the same line.
MAX_POINTS = 400
# The metric called a run's score, in order of preference.
SCORE_KEYS = ("environment/score", "environment/episode_return")
# Config keys that name where a run lives rather than how it trains.
_NOT_CONFIG = {"train.data_dir", "train.run_id", "train.resume"}
_SWEEP_PREFIX = "sweep-"
_STORE = "sweep.jsonl"


def collect(data_dir: str | Path) -> dict[str, Any]:
    """Every run and sweep under `data_dir`, as the page's data.

    Returns:
        `{"data_dir": str, "runs": [run, ...], "sweeps": [sweep, ...]}`, runs newest first;
        see `read_run` and `read_sweep` for their fields. A missing `data_dir` gives no runs.
    """
    root = Path(data_dir)
    runs: list[dict[str, Any]] = []
    sweeps: list[dict[str, Any]] = []
    defaults = _Defaults()
    for env_dir in _subdirs(root):
        for child in _subdirs(env_dir):
            if child.name.startswith(_SWEEP_PREFIX) and (child / _STORE).is_file():
                sweep = read_sweep(child, root)
                sweeps.append(sweep)
                metric = f"environment/{sweep['metric']}"
                for run_dir in _subdirs(child / "runs" / env_dir.name):
                    if _is_run(run_dir):
                        runs.append(
                            read_run(run_dir, root, defaults, sweep=sweep["id"], score=metric)
                        )
            elif _is_run(child):
                runs.append(read_run(child, root, defaults))
    runs.sort(key=lambda run: run["updated"], reverse=True)
    return {"data_dir": str(root.resolve()), "runs": runs, "sweeps": sweeps}


def read_run(
    run_dir: Path,
    root: Path,
    defaults: _Defaults | None = None,
    sweep: str | None = None,
    score: str | None = None,
) -> dict[str, Any]:
    """One run: its curves, config diff, final score and speed.

    Args:
        run_dir: `<...>/<env>/<run_id>/`.
        root: The data dir; ids and file links are relative to it.
        defaults: Cache of each env's default config.
        sweep: The id of the sweep the run belongs to, if any.
        score: The metric that is the run's score (a sweep's); default: SCORE_KEYS.

    Returns:
        A dict: `id` (the run dir relative to `root`), `env`, `sweep`, `metrics` (name ->
        list of float or None, one per logged epoch, at most MAX_POINTS), `step` and `wall`
        (agent steps; training seconds, summed from each epoch's steps / SPS), `diff`
        ({key: [value, default]} for each config key off its default), `score` (last value of
        `score`, else of the first of SCORE_KEYS logged; None if none), `score_key`, `sps` (mean), `steps`
        (last), `video` (link to eval.gif or None), `updated` (mtime of the metrics).
    """
    env = run_dir.parent.name
    paths = RunPaths(run_dir.parent.parent, env, run_dir.name)
    rows = _read_rows(paths.metrics)
    steps = np.array([row.get("step", 0) for row in rows], dtype=np.float64)
    sps = np.array([_number(row.get("performance/sps")) for row in rows], dtype=np.float64)
    batch = np.diff(steps, prepend=0.0)
    # Each epoch's duration is its batch over its SPS: their sum is the training wall time.
    wall = np.cumsum(np.where(sps > 0, batch / np.where(sps > 0, sps, 1.0), 0.0))
    keys = sorted({key for row in rows for key in row if key != "step"})
    keep = _thin(len(rows))
    candidates = (score,) if score else SCORE_KEYS
    score_key = next((k for k in candidates if any(_finite(r.get(k)) for r in rows)), None)
    final = None
    if score_key is not None:
        final = next(r[score_key] for r in reversed(rows) if _finite(r.get(score_key)))
    finite_sps = sps[np.isfinite(sps) & (sps > 0)]
    return {
        "id": run_dir.relative_to(root).as_posix(),
        "env": env,
        "sweep": sweep,
        "metrics": {k: [_json_number(rows[i].get(k)) for i in keep] for k in keys},
        "step": [float(steps[i]) for i in keep],
        "wall": [round(float(wall[i]), 3) for i in keep],
        "diff": (defaults or _Defaults()).diff(env, paths.config),
        "score": final,
        "score_key": score_key,
        "sps": float(finite_sps.mean()) if finite_sps.size else None,
        "steps": float(steps[-1]) if steps.size else 0.0,
        "video": paths.video.relative_to(root).as_posix() if paths.video.is_file() else None,
        "updated": paths.metrics.stat().st_mtime if paths.metrics.is_file() else 0.0,
    }


def read_sweep(sweep_dir: Path, root: Path) -> dict[str, Any]:
    """One sweep's store: its points, its score-vs-cost Pareto front and its parameters.

    Returns:
        A dict: `id` (the sweep dir relative to `root`), `env`, `name`, `metric`, `goal`,
        `params` (searched names), `points` (one per finished run that did not fail:
        `run_id`, `score`, `cost`, `params`, `run` (the dashboard id of its run dir, or None)),
        `front` (indices into `points` on the Pareto front, by increasing cost; with goal
        "minimize" the front is of the lowest scores), `failed` (count of failed runs).
    """
    header, records = _read_store(sweep_dir / _STORE)
    options = _sweep_options(sweep_dir / "config.toml")
    goal = options.get("goal", "maximize")
    ok = [r for r in records if not r.failed and r.score is not None]
    score = np.array([r.score for r in ok], dtype=np.float64)
    cost = np.array([r.cost for r in ok], dtype=np.float64)
    front = pareto_front(score if goal == "maximize" else -score, cost) if ok else []
    return {
        "id": sweep_dir.relative_to(root).as_posix(),
        "env": sweep_dir.parent.name,
        "name": sweep_dir.name.removeprefix(_SWEEP_PREFIX),
        "metric": options.get("metric", "score"),
        "goal": goal,
        "params": list(header.get("params", [])),
        "points": [
            {
                "run_id": r.run_id,
                "score": r.score,
                "cost": r.cost,
                "params": r.params,
                "run": _run_link(r, root),
            }
            for r in ok
        ],
        "front": [int(i) for i in front],
        "failed": len(records) - len(ok),
    }


class _Defaults:
    """Each env's default run config (`puffer config ENV`), loaded once per env."""

    def __init__(self) -> None:
        self._flat: dict[str, dict[str, Any] | None] = {}

    def diff(self, env: str, config_json: Path) -> dict[str, list[Any]]:
        """`{key: [value, default]}` for each key of the run's config.json off the default;
        every key when the env's defaults cannot be loaded (an env dir name that is no env)."""
        if not config_json.is_file():
            return {}
        run = _flatten(json.loads(config_json.read_text(encoding="utf-8")))
        if env not in self._flat:
            try:
                self._flat[env] = _flatten(load_config(env).to_dict())
            except (PufferError, SweepError):
                self._flat[env] = None
        base = self._flat[env]
        return {
            key: [value, None if base is None else base.get(key)]
            for key, value in run.items()
            if key not in _NOT_CONFIG and (base is None or base.get(key) != value)
        }


def _flatten(config: dict[str, Any]) -> dict[str, Any]:
    return {
        f"{section}.{key}": value
        for section, table in config.items()
        if isinstance(table, dict)
        for key, value in table.items()
    }


def _read_store(path: Path) -> tuple[dict[str, Any], list[RunRecord]]:
    """The header and records of a sweep store, read only (a line cut short is skipped)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    parsed = []
    for line in lines:
        try:
            parsed.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # the line a running sweep is writing, or one a kill cut short
    if not parsed or "format" not in parsed[0]:
        return {}, []
    records = []
    for data in parsed[1:]:
        data["curve"] = [tuple(p) for p in data.get("curve", [])]
        records.append(RunRecord(**data))
    return parsed[0], records


def _sweep_options(config_toml: Path) -> dict[str, Any]:
    if not config_toml.is_file():
        return {}
    return tomllib.loads(config_toml.read_text(encoding="utf-8")).get("sweep", {})


def _run_link(record: RunRecord, root: Path) -> str | None:
    run_dir = record.info.get("run_dir")
    if not isinstance(run_dir, str):
        return None
    try:
        return Path(run_dir).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None  # the sweep was moved: its runs are elsewhere


def _read_rows(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # the epoch the trainer is appending right now
    return rows


def _thin(count: int) -> list[int]:
    """At most MAX_POINTS row indices, evenly spread, always keeping the last."""
    if count <= MAX_POINTS:
        return list(range(count))
    return sorted(set(np.linspace(0, count - 1, MAX_POINTS).round().astype(int).tolist()))


def _subdirs(path: Path) -> list[Path]:
    return sorted(p for p in path.iterdir() if p.is_dir()) if path.is_dir() else []


def _is_run(path: Path) -> bool:
    return (path / RunPaths.METRICS).is_file() or (path / RunPaths.CONFIG).is_file()


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def _number(value: object) -> float:
    return float(value) if _finite(value) else math.nan


def _json_number(value: object) -> float | None:
    return float(value) if _finite(value) else None
