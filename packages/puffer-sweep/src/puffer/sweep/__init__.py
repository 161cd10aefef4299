"""puffer.sweep: Protein, cost-aware hyperparameter search with an ask/tell API.

Public names: search spaces (`Param`, `Scalar`, `Scale`, `Space`, `nest`), the `[sweep]` config
(`SweepConfig`, `parse_sweep_config`), methods behind one ask/tell interface (`Method`,
`Protein`, `Random`, `ParetoGenetic`), the resumable `SweepStore`, runners (`SerialRunner`,
`LocalRunner`, `RayRunner`) and the `run_sweep` driver.

`Protein` (and with it torch and gpytorch) is imported on first use, so runner worker processes
and Random or genetic sweeps start without paying for them.
"""

from __future__ import annotations

from puffer.sweep.config import METHODS, SweepConfig, parse_sweep_config
from puffer.sweep.driver import SweepEvent, SweepSummary, make_method, run_sweep
from puffer.sweep.errors import SweepConfigError, SweepError, SweepHalted, SweepStoreError
from puffer.sweep.methods import CurvePoint, Method, ParetoGenetic, Random, pareto_front
from puffer.sweep.runners import (
    LocalRunner,
    Objective,
    Outcome,
    RayRunner,
    Runner,
    RunResult,
    SerialRunner,
)
from puffer.sweep.space import Param, Params, Scalar, Scale, Space, nest
from puffer.sweep.store import RunRecord, SweepStore

__version__ = "0.1.0"

__all__ = [
    "METHODS",
    "CurvePoint",
    "LocalRunner",
    "Method",
    "Objective",
    "Outcome",
    "Param",
    "Params",
    "ParetoGenetic",
    "Protein",
    "Random",
    "RayRunner",
    "RunRecord",
    "RunResult",
    "Runner",
    "Scalar",
    "Scale",
    "SerialRunner",
    "Space",
    "SweepConfig",
    "SweepConfigError",
    "SweepError",
    "SweepHalted",
    "SweepEvent",
    "SweepStore",
    "SweepStoreError",
    "SweepSummary",
    "__version__",
    "make_method",
    "nest",
    "pareto_front",
    "parse_sweep_config",
    "run_sweep",
]


def __getattr__(name: str) -> object:
    if name == "Protein":
        from puffer.sweep.protein import Protein

        return Protein
    raise AttributeError(f"module 'puffer.sweep' has no attribute {name!r}")
