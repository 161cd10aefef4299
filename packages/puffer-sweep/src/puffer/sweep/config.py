"""The `[sweep]` section: sweep options plus one spec per searched parameter.

A section mixes options (``method = "protein"``, ``max_runs = 50``) with parameter specs, which
are the tables holding a ``distribution`` key. Specs may be written with dotted keys or nested::

    [sweep]
    method = "protein"
    metric = "episode_return"
    goal = "maximize"
    max_runs = 50
    [sweep."train.learning_rate"]
    distribution = "log"
    min = 1e-4
    max = 1e-1
    mean = 3e-3
    [sweep.train.gamma]              # same as "train.gamma"
    distribution = "logit"
    min = 0.9
    max = 0.999
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from puffer.sweep.errors import SweepConfigError
from puffer.sweep.space import Param, Space, _closest
from puffer.sweep.store import COST_KINDS, CostKind

__all__ = ["METHODS", "SweepConfig", "parse_sweep_config"]

METHODS = ("protein", "random", "genetic")
"""Names accepted by `SweepConfig.method`."""


@dataclass
class SweepConfig:
    """Options of one sweep and its search space.

    Attributes:
        space: The searched parameters.
        method: Search method: "protein", "random" or "genetic".
        metric: Name of the metric the objective reports as its score (for logs and the CLI).
        goal: "maximize" or "minimize" the score.
        max_runs: Number of runs in the sweep, failures included.
        max_cost: Cap on the cost of one run (in the unit of `cost`: seconds or agent steps);
            Protein does not suggest runs predicted to cost more. None: no cap.
        cost: What the method counts as a run's cost (Protein's cost model and Pareto front,
            the genetic method's front): "wall" (wall-clock seconds, or the objective's own
            cost), "cpu" (CPU seconds: not swayed by other load on the machine) or "steps"
            (agent steps trained).
        steps_key: Parameter counting training steps; learning-curve points substitute it.
        seed: Seed of the method's random draws.
    """

    space: Space
    method: str = "protein"
    metric: str = "score"
    goal: Literal["maximize", "minimize"] = "maximize"
    max_runs: int = 100
    max_cost: float | None = None
    cost: CostKind = "wall"
    steps_key: str | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise SweepConfigError(
                f"SweepConfig.method: expected one of {list(METHODS)}, got {self.method!r}"
                f"{_closest(self.method, METHODS)}"
            )
        if self.goal not in ("maximize", "minimize"):
            raise SweepConfigError(
                f"SweepConfig.goal: expected 'maximize' or 'minimize', got {self.goal!r}"
            )
        if self.max_runs < 1:
            raise SweepConfigError(
                f"SweepConfig.max_runs: expected >= 1, got {self.max_runs}; raise max_runs"
            )
        if self.cost not in COST_KINDS:
            raise SweepConfigError(
                f"SweepConfig.cost: expected one of {list(COST_KINDS)}, got {self.cost!r}"
                f"{_closest(self.cost, COST_KINDS)}"
            )
        if self.max_cost is not None and not self.max_cost > 0:
            raise SweepConfigError(
                f"SweepConfig.max_cost: expected > 0 or None, got {self.max_cost}"
            )
        if self.steps_key != self.space.steps_key:
            self.space = Space(self.space.params, steps_key=self.steps_key)


_OPTIONS = {f.name: f for f in dataclasses.fields(SweepConfig) if f.name != "space"}


def _collect(
    section: Mapping[str, object], prefix: str, specs: dict[str, Mapping[str, object]]
) -> None:
    for key, value in section.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and "distribution" in value:
            specs[name] = value
        elif isinstance(value, Mapping):
            _collect(value, f"{name}.", specs)
        else:
            raise SweepConfigError(
                f"[sweep] key {name!r}: expected a parameter table with a 'distribution' key, "
                f"got {value!r}; options belong at the top of [sweep]"
                f"{_closest(key, list(_OPTIONS))}"
            )


def parse_sweep_config(section: Mapping[str, object], **overrides: object) -> SweepConfig:
    """Parses a `[sweep]` section (as loaded from TOML) into a `SweepConfig`.

    Args:
        section: Options at the top level; parameter specs as tables holding ``distribution``,
            under dotted or nested keys.
        **overrides: Options that replace those of the section (e.g. ``max_runs=8`` from the CLI).

    Returns:
        The config; parameters appear in the space in the order of the section.

    Raises:
        SweepConfigError: On an unknown option (with the closest name), an option of the wrong
            type, or a bad parameter spec.

    Example:
        >>> cfg = parse_sweep_config({
        ...     "method": "random", "max_runs": 4,
        ...     "train.learning_rate": {"distribution": "log", "min": 1e-4, "max": 1e-1},
        ...     "train": {"batch_size": {"distribution": "pow2", "min": 64, "max": 1024}},
        ... })
        >>> cfg.method, cfg.space.names
        ('random', ['train.learning_rate', 'train.batch_size'])
    """
    options: dict[str, object] = {}
    specs: dict[str, Mapping[str, object]] = {}
    for key, value in {**section, **overrides}.items():
        if key in _OPTIONS:
            options[key] = _typed(key, value)
        elif isinstance(value, Mapping):
            _collect({key: value}, "", specs)
        else:
            raise SweepConfigError(
                f"[sweep] option {key!r}: unknown, expected one of {sorted(_OPTIONS)} or a "
                f"parameter table{_closest(key, list(_OPTIONS))}"
            )
    if not specs:
        raise SweepConfigError(
            "[sweep]: no parameters to search; add tables like "
            '"train.learning_rate" = {distribution = "log", min = 1e-4, max = 1e-1}'
        )
    steps_key = options.get("steps_key")
    space = Space(
        [Param.from_spec(n, s) for n, s in specs.items()],
        steps_key=steps_key if isinstance(steps_key, str) else None,
    )
    return SweepConfig(space=space, **options)  # type: ignore[arg-type]


def _typed(key: str, value: object) -> object:
    """Checks an option's type against its declared one; ints are accepted for floats."""
    expected = {
        "method": (str,),
        "metric": (str,),
        "goal": (str,),
        "max_runs": (int,),
        "max_cost": (int, float, type(None)),
        "cost": (str,),
        "steps_key": (str, type(None)),
        "seed": (int,),
    }[key]
    if isinstance(value, bool) or not isinstance(value, expected):
        names = [t.__name__ for t in expected]
        raise SweepConfigError(
            f"[sweep] option {key!r}: expected {' or '.join(names)}, got "
            f"{type(value).__name__} {value!r}"
        )
    return float(value) if key == "max_cost" and value is not None else value
