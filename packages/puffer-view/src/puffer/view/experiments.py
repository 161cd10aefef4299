"""What `puffer dashboard` shows, read from a data dir: every run and every sweep, as JSON data.

The layout is puffer-train's `RunPaths` (one place names those files):

    <data_dir>/<env>/<run_id>/metrics.jsonl, config.json, defaults.json, eval.gif   a run
    <data_dir>/<env>/sweep-<name>/sweep.jsonl, config.toml              a sweep's store
    <data_dir>/<env>/sweep-<name>/runs/<env>/<run_id>/                  the sweep's runs

A run's config diff is against its defaults.json (the env's shipped config, written by
puffer-train when it trained), so no name is resolved for it.

Everything here only reads: a run or a sweep still being written is read as far as it got (a
last line cut short mid-write is skipped, never truncated, unlike `SweepStore.open`).

The files may be anyone's, so every one is read through `puffer.view.inside` (inside the data
dir, no symlinks followed), and each run and each sweep is read in isolation: one that cannot be
read (a malformed config.json, bytes that are not UTF-8, a value JSON cannot carry) is listed
with its error while the others show, and metrics lines that are no rows are skipped and counted.
"""

from __future__ import annotations

import json
import math
import os
import tomllib
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from puffer.core import PufferError, env_creator, registered_envs
from puffer.sweep import RunRecord, pareto_front
from puffer.sweep.errors import SweepError
from puffer.sweep.store import COST_KINDS, CostKind
from puffer.train.config import Config, load_config
from puffer.train.paths import RunPaths
from puffer.train.score import SCORE
from puffer.view.inside import is_file_inside, read_inside, subdirs_inside
from puffer.view.tail import MetricsTail

__all__ = ["MAX_POINTS", "collect", "read_run", "read_sweep"]

# Points per curve sent to the page: a 20M-step run logs thousands of iterations; the browser
# needs a few hundred to draw the same line.
MAX_POINTS = 400
# Config keys that name where a run lives rather than how it trains.
_NOT_CONFIG = {"train.data_dir", "train.run_id", "train.resume"}
_SWEEP_PREFIX = "sweep-"
_STORE = "sweep.jsonl"
# Characters of the error shown for a run or a sweep that cannot be read.
_ERROR_CHARS = 300

Entry = dict[str, Any]


def collect(data_dir: str | Path, tail: MetricsTail | None = None) -> dict[str, Any]:
    """Every run and sweep under `data_dir`, as the page's data.

    Args:
        data_dir: The runs' root.
        tail: What earlier calls read of the metrics files (the server keeps one, so a reload
            reads only what was appended); None reads them afresh.

    Returns:
        `{"data_dir": str, "runs": [run, ...], "sweeps": [sweep, ...]}`, runs newest first;
        see `read_run` and `read_sweep` for their fields. A run or a sweep that cannot be read
        has the same fields, empty, and `error` saying why. A missing `data_dir` gives no runs.
    """
    root = Path(data_dir)
    tail = MetricsTail() if tail is None else tail
    runs: list[Entry] = []
    sweeps: list[Entry] = []

    def add_run(run: str, sweep: str | None = None) -> None:
        runs.append(
            _isolated(
                lambda: read_run(root / run, root, sweep, tail),
                lambda error: _broken_run(run, sweep, error),
            )
        )

    def add_sweep(where: str) -> Entry:
        sweeps.append(
            _isolated(
                lambda: read_sweep(root / where, root), lambda error: _broken_sweep(where, error)
            )
        )
        return sweeps[-1]

    for env in subdirs_inside(root, ""):
        for child in subdirs_inside(root, env):
            where = f"{env}/{child}"
            if child.startswith(_SWEEP_PREFIX) and is_file_inside(root, f"{where}/{_STORE}"):
                sweep = add_sweep(where)
                runs_dir = f"{where}/runs/{env}"
                for run in subdirs_inside(root, runs_dir):
                    if _is_run(root, f"{runs_dir}/{run}"):
                        add_run(f"{runs_dir}/{run}", sweep["id"])
            elif _is_run(root, where):
                add_run(where)
    runs.sort(key=lambda run: run["updated"], reverse=True)
    return {"data_dir": str(root.resolve()), "runs": runs, "sweeps": sweeps}


def _isolated(read: Callable[[], Entry], broken: Callable[[str], Entry]) -> Entry:
    """`read()`, checked to be valid JSON, or `broken(error)` if the files make it fail.

    Catching every exception is the point: the files are data from anywhere, and nothing in
    one run's files may keep the other runs from showing.
    """
    try:
        entry = read()
        json.dumps(entry, allow_nan=False)
    except Exception as error:
        text = " ".join(f"{type(error).__name__}: {error}".split())
        return broken(text[:_ERROR_CHARS])
    return entry


def read_run(
    run_dir: Path, root: Path, sweep: str | None = None, tail: MetricsTail | None = None
) -> Entry:
    """One run: its curves, config diff, score and speed.

    Args:
        run_dir: `<...>/<env>/<run_id>/`, inside `root`.
        root: The data dir; ids and file links are relative to it.
        sweep: The id of the sweep the run belongs to, if any.
        tail: Where its metrics file is read from (`collect`'s); None reads it afresh.

    Returns:
        A dict: `id` (the run dir relative to `root`), `env`, `sweep`, `metrics` (name ->
        list of float or None, one per logged iteration, at most MAX_POINTS), `step` and `wall`
        (agent steps; training seconds, summed from each iteration's steps / SPS), `diff`
        ({key: [value, default]} for each config key off its default), `score` (the run's
        score, `puffer.train.score`, as its last iteration logged it; None before an episode
        ends), `sps` (mean), `steps` (last), `video` (link to eval.gif or None), `updated`
        (mtime of the metrics), `skipped` (metrics lines that are no rows), `unread` (bytes
        at the start of a metrics file past `puffer.view.tail.METRICS_CAP` left out),
        `error` (None).

    Raises:
        Exception: whatever the files make parsing raise (`collect` catches it).
    """
    run = run_dir.relative_to(root).as_posix()
    env = run_dir.parent.name
    found = (MetricsTail() if tail is None else tail).read(root, f"{run}/{RunPaths.METRICS}")
    rows = found.rows
    steps = np.array([row["step"] for row in rows], dtype=np.float64)
    sps = np.array([_number(row.get("performance/sps")) for row in rows], dtype=np.float64)
    batch = np.diff(steps, prepend=0.0)
    # Each iteration's duration is its batch over its SPS: their sum is the training wall time.
    wall = np.cumsum(np.where(sps > 0, batch / np.where(sps > 0, sps, 1.0), 0.0))
    keys = sorted({key for row in rows for key in row if key != "step"})
    keep = _thin(len(rows))
    final = next((r[SCORE] for r in reversed(rows) if _finite(r.get(SCORE))), None)
    finite_sps = sps[np.isfinite(sps) & (sps > 0)]
    video = f"{run}/{RunPaths.VIDEO}"
    return {
        "id": run,
        "env": env,
        "sweep": sweep,
        "metrics": {k: [_json_number(rows[i].get(k)) for i in keep] for k in keys},
        "step": [float(steps[i]) for i in keep],
        "wall": [round(float(wall[i]), 3) for i in keep],
        "diff": _diff(
            env,
            read_inside(root, f"{run}/{RunPaths.CONFIG}"),
            read_inside(root, f"{run}/{RunPaths.DEFAULTS}"),
        ),
        "score": final,
        "sps": float(finite_sps.mean()) if finite_sps.size else None,
        "steps": float(steps[-1]) if steps.size else 0.0,
        "video": video if is_file_inside(root, video) else None,
        "updated": _mtime(root / run / RunPaths.METRICS),
        "skipped": found.skipped,
        "unread": found.unread,
        "error": None,
    }


def _broken_run(run: str, sweep: str | None, error: str) -> Entry:
    """A run that could not be read, listed with `error` and nothing to draw."""
    return {
        "id": run,
        "env": run.split("/")[-2],
        "sweep": sweep,
        "metrics": {},
        "step": [],
        "wall": [],
        "diff": {},
        "score": None,
        "sps": None,
        "steps": 0.0,
        "video": None,
        "updated": 0.0,
        "skipped": 0,
        "unread": 0,
        "error": error,
    }


def read_sweep(sweep_dir: Path, root: Path) -> Entry:
    """One sweep's store: its points, its score-vs-cost Pareto fronts and its parameters.

    Returns:
        A dict: `id` (the sweep dir relative to `root`), `env`, `name`, `metric`, `goal`,
        `cost` (the cost the sweep searched by, `[sweep] cost`: "wall", "cpu" or "steps"),
        `params` (searched names), `points` (one per finished run that did not fail:
        `run_id`, `score`, `costs` ({kind: value or None}: wall seconds, CPU seconds, agent
        steps; a store from before puffer-sweep recorded CPU time and steps has None there),
        `params`, `run` (the dashboard id of its run dir, or None)), `fronts` ({kind: indices
        into `points` on the Pareto front of score against that cost, by increasing cost}; with
        goal "minimize" the front is of the lowest scores), `failed` (count of failed runs),
        `error` (None).

    Raises:
        Exception: whatever the files make parsing raise (`collect` catches it).
    """
    sweep = sweep_dir.relative_to(root).as_posix()
    header, records = _read_store(read_inside(root, f"{sweep}/{_STORE}") or b"")
    options = _sweep_options(read_inside(root, f"{sweep}/config.toml"))
    goal = options.get("goal", "maximize")
    searched = options.get("cost", "wall")
    ok = [r for r in records if not r.failed and r.score is not None]
    score = np.array([r.score for r in ok], dtype=np.float64)
    return {
        "id": sweep,
        "env": sweep_dir.parent.name,
        "name": sweep_dir.name.removeprefix(_SWEEP_PREFIX),
        "metric": options.get("metric", "score"),
        "goal": goal,
        "cost": searched if searched in COST_KINDS else "wall",
        "params": list(header.get("params", [])),
        "points": [
            {
                "run_id": r.run_id,
                "score": r.score,
                "costs": {kind: _json_number(r.cost_as(kind)) for kind in COST_KINDS},
                "params": r.params,
                "run": _run_link(r, root),
            }
            for r in ok
        ],
        "fronts": {kind: _front(ok, score, goal, kind) for kind in COST_KINDS},
        "failed": len(records) - len(ok),
        "error": None,
    }


def _front(records: list[RunRecord], score: np.ndarray, goal: str, kind: CostKind) -> list[int]:
    """Indices of `records` (score (n,) float64) on the front of score against cost `kind`,
    over the records that carry that cost."""
    cost = np.array([_number(r.cost_as(kind)) for r in records], dtype=np.float64)
    have = np.flatnonzero(np.isfinite(cost))
    if not have.size:
        return []
    sign = 1.0 if goal == "maximize" else -1.0
    return [int(have[i]) for i in pareto_front(sign * score[have], cost[have])]


def _broken_sweep(sweep: str, error: str) -> Entry:
    """A sweep whose store could not be read, listed with `error`; its runs are still read."""
    return {
        "id": sweep,
        "env": sweep.split("/")[0],
        "name": sweep.split("/")[-1].removeprefix(_SWEEP_PREFIX),
        "metric": "score",
        "goal": "maximize",
        "cost": "wall",
        "params": [],
        "points": [],
        "fronts": {kind: [] for kind in COST_KINDS},
        "failed": 0,
        "error": error,
    }


@cache
def _env_defaults(env: str) -> dict[str, Any] | None:
    """The env's default run config (`puffer config ENV`), flat; the typed defaults alone when
    the name is not resolved; None when it cannot be loaded. Shipped configs do not change
    while a server runs.

    An env dir's name is data, not a request to run code: `gym-<module>:<id>` and
    `pettingzoo-<module>:<fn>` would import the module (a file in the current directory
    among them), and an env without a TOML would be made to derive its keys. So only a name
    registered through puffer's entry points whose registration ships a TOML is resolved
    (that reads the TOML and imports only installed puffer packages); any other name is
    diffed against the typed defaults.
    """
    if env not in registered_envs() or not getattr(env_creator(env), "config_sources", ()):
        return _flatten(Config().to_dict())
    try:
        return _flatten(load_config(env).to_dict())
    except (PufferError, SweepError):
        return None


def _diff(env: str, config_json: bytes | None, defaults_json: bytes | None) -> dict[str, list[Any]]:
    """`{key: [value, default]}` for each key of the run's config.json (its bytes) off the
    env's shipped config: the run's defaults.json (what `puffer config ENV` resolved with no
    flags when it trained, derived keys included), else `_env_defaults(env)` (a run from
    before puffer-train wrote it); every key when neither loads."""
    if config_json is None:
        return {}
    run = _flatten(json.loads(config_json.decode("utf-8")))
    if defaults_json is not None:
        base: dict[str, Any] | None = _flatten(json.loads(defaults_json.decode("utf-8")))
    else:
        base = _env_defaults(env)
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


def _read_store(data: bytes) -> tuple[dict[str, Any], list[RunRecord]]:
    """The header and records of a sweep store's bytes (a line cut short is skipped)."""
    parsed = []
    for line in data.decode("utf-8").splitlines():
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


def _sweep_options(config_toml: bytes | None) -> dict[str, Any]:
    if config_toml is None:
        return {}
    return tomllib.loads(config_toml.decode("utf-8")).get("sweep", {})


def _run_link(record: RunRecord, root: Path) -> str | None:
    run_dir = record.info.get("run_dir")
    if not isinstance(run_dir, str):
        return None
    try:
        return Path(run_dir).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None  # the sweep was moved: its runs are elsewhere


def _thin(count: int) -> list[int]:
    """At most MAX_POINTS row indices, evenly spread, always keeping the last."""
    if count <= MAX_POINTS:
        return list(range(count))
    return sorted(set(np.linspace(0, count - 1, MAX_POINTS).round().astype(int).tolist()))


def _is_run(root: Path, path: str) -> bool:
    return any(
        is_file_inside(root, f"{path}/{name}") for name in (RunPaths.METRICS, RunPaths.CONFIG)
    )


def _mtime(path: Path) -> float:
    try:
        return os.lstat(path).st_mtime
    except OSError:
        return 0.0


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def _number(value: object) -> float:
    return float(value) if _finite(value) else math.nan


def _json_number(value: object) -> float | None:
    return float(value) if _finite(value) else None
