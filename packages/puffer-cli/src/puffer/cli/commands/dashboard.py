"""`puffer dashboard`: the runs and sweeps of a data dir in the browser (127.0.0.1 only)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from puffer.cli.commands._common import console, reported_errors
from puffer.core import APIUsageError
from puffer.train.config import TrainConfig
from puffer.view import DashboardServer, export

__all__ = ["dashboard", "register"]

DEFAULT_DATA_DIR = Path(TrainConfig().data_dir)


def dashboard(
    data_dir: Annotated[
        Path,
        typer.Option(
            "--data-dir",
            help="Root of the runs (train.data_dir): <data-dir>/<env>/<run>/ and sweep-<name>/.",
        ),
    ] = DEFAULT_DATA_DIR,
    port: int = typer.Option(
        8765, "--port", min=0, max=65535, help="Port on 127.0.0.1; 0 picks a free one."
    ),
    refresh: float = typer.Option(
        5.0, "--refresh", min=0.5, help="Seconds between the page's re-reads of the runs."
    ),
    export_dir: Annotated[
        Path | None,
        typer.Option(
            "--export",
            help="Write a static copy into this folder (open its index.html from disk) and exit.",
        ),
    ] = None,
) -> None:
    """Learning curves, run table, sweep Pareto fronts and eval videos of DATA-DIR in a local
    web page, re-read while runs go on. Ctrl-C stops the server."""
    with reported_errors():
        if not data_dir.is_dir():
            raise APIUsageError(
                f"--data-dir {data_dir}: no such folder; train first (`puffer train ENV`) or "
                "pass the train.data_dir your runs were written to"
            )
        if export_dir is not None:
            if export_dir.exists() and not export_dir.is_dir():
                raise APIUsageError(
                    f"--export {export_dir}: a file is there, not a folder; pass a folder (it "
                    "is created if missing)"
                )
            index = export(data_dir, export_dir)
            console.print(f"dashboard of {data_dir} written; open {index}")
            return
        server = DashboardServer(data_dir, port=port, refresh=refresh)
    console.print(f"dashboard of {data_dir}: {server.url}  (Ctrl-C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        console.print("stopped")
    finally:
        server.close()


def register(app: typer.Typer) -> None:
    """Add `dashboard` to `app`."""
    app.command("dashboard")(dashboard)
