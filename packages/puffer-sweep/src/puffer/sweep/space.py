"""Search spaces: hyperparameters on linear, integer, log, power-of-two and logit scales.

Every method searches the unit cube [-1, 1]^d. A `Param` maps its value onto [-1, 1] through its
scale (a log scale makes 1e-4..1e-1 evenly spaced per decade); `Space` does this for a whole
ordered set of parameters. Key order is the order of declaration and is the column order of every
normalized array.
"""

from __future__ import annotations

import difflib
import enum
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from puffer.sweep.errors import SweepConfigError

__all__ = ["Param", "Params", "Scale", "Space", "nest"]

Params = dict[str, float | int]
"""One suggestion: parameter name (dotted, e.g. ``"train.learning_rate"``) to its value."""


class Scale(enum.Enum):
    """How a parameter's value maps onto [-1, 1]."""

    LINEAR = "linear"
    INT = "int"
    LOG = "log"
    POW2 = "pow2"
    LOGIT = "logit"


# Accepted spellings of `distribution`, including the names PufferLib configs use.
_SCALE_NAMES: dict[str, Scale] = {
    "linear": Scale.LINEAR,
    "uniform": Scale.LINEAR,
    "int": Scale.INT,
    "integer": Scale.INT,
    "int_uniform": Scale.INT,
    "log": Scale.LOG,
    "log_normal": Scale.LOG,
    "pow2": Scale.POW2,
    "power_of_two": Scale.POW2,
    "uniform_pow2": Scale.POW2,
    "logit": Scale.LOGIT,
    "logit_normal": Scale.LOGIT,
}
_SPEC_KEYS = ("distribution", "min", "max", "mean")


def _closest(word: str, choices: list[str] | tuple[str, ...]) -> str:
    match = difflib.get_close_matches(word, list(choices), n=1)
    return f"; did you mean {match[0]!r}?" if match else ""


@dataclass(frozen=True)
class Param:
    """One hyperparameter: its name, scale and bounds.

    Args:
        name: Dotted name, e.g. ``"train.learning_rate"``.
        scale: How the value maps onto [-1, 1].
        min: Smallest value (inclusive). Positive for LOG and POW2; in (0, 1) for LOGIT.
        max: Largest value (inclusive), greater than ``min``.
        mean: The default value, suggested first by Protein; None means the centre of the scale.

    Example:
        >>> p = Param("lr", Scale.LOG, 1e-4, 1e-2)
        >>> round(p.denormalize(0.0), 6)
        0.001
        >>> p.normalize(1e-2)
        1.0
    """

    name: str
    scale: Scale
    min: float
    max: float
    mean: float | None = None

    def __post_init__(self) -> None:
        if not self.min < self.max:
            raise SweepConfigError(
                f"sweep parameter {self.name!r}: expected min < max, got min={self.min}, "
                f"max={self.max}; swap or widen the bounds"
            )
        if self.scale in (Scale.LOG, Scale.POW2) and self.min <= 0:
            raise SweepConfigError(
                f"sweep parameter {self.name!r}: a {self.scale.value} scale needs min > 0, got "
                f"min={self.min}; use distribution 'linear' or a positive min"
            )
        if self.scale is Scale.LOGIT and not 0 < self.min < self.max < 1:
            raise SweepConfigError(
                f"sweep parameter {self.name!r}: a logit scale needs 0 < min < max < 1, got "
                f"min={self.min}, max={self.max}; use distribution 'linear' for other ranges"
            )
        if self.mean is not None and not self.min <= self.mean <= self.max:
            raise SweepConfigError(
                f"sweep parameter {self.name!r}: expected min <= mean <= max, got "
                f"mean={self.mean} outside [{self.min}, {self.max}]; move mean inside the bounds"
            )

    def _forward(self, value: np.ndarray) -> np.ndarray:
        if self.scale is Scale.LOG:
            return np.log(value)
        if self.scale is Scale.POW2:
            return np.log2(value)
        if self.scale is Scale.LOGIT:
            return np.log(value / (1.0 - value))
        return value

    def _inverse(self, t: np.ndarray) -> np.ndarray:
        if self.scale is Scale.LOG:
            return np.exp(t)
        if self.scale is Scale.POW2:
            return np.exp2(t)
        if self.scale is Scale.LOGIT:
            return 1.0 / (1.0 + np.exp(-t))
        return t

    def normalize(self, value: float | np.ndarray) -> float | np.ndarray:
        """Maps value(s) in [min, max] onto [-1, 1] (values outside are clipped)."""
        v = np.clip(np.asarray(value, dtype=np.float64), self.min, self.max)
        lo, hi = self._forward(np.float64(self.min)), self._forward(np.float64(self.max))
        x = 2.0 * (self._forward(v) - lo) / (hi - lo) - 1.0
        return float(x) if x.ndim == 0 else x

    def denormalize(self, x: float) -> float | int:
        """Maps a point of [-1, 1] back to a value; INT and POW2 scales round to their grid."""
        lo, hi = self._forward(np.float64(self.min)), self._forward(np.float64(self.max))
        t = lo + (float(np.clip(x, -1.0, 1.0)) + 1.0) * 0.5 * (hi - lo)
        if self.scale is Scale.INT:
            return int(np.clip(round(float(t)), math.ceil(self.min), math.floor(self.max)))
        if self.scale is Scale.POW2:
            exponent = np.clip(round(float(t)), math.ceil(lo - 1e-9), math.floor(hi + 1e-9))
            return int(2**exponent) if exponent >= 0 else float(2.0**exponent)
        return float(np.clip(self._inverse(np.float64(t)), self.min, self.max))

    def snap(self, x: np.ndarray) -> np.ndarray:
        """Moves points of [-1, 1] (any shape, float64) to where `denormalize` rounds them, so
        a model scores a candidate where it will really run. Identity on continuous scales."""
        if self.scale not in (Scale.INT, Scale.POW2):
            return x
        lo, hi = self._forward(np.float64(self.min)), self._forward(np.float64(self.max))
        t = lo + (np.clip(x, -1.0, 1.0) + 1.0) * 0.5 * (hi - lo)
        t = np.clip(np.round(t), math.ceil(lo - 1e-9), math.floor(hi + 1e-9))
        return 2.0 * (t - lo) / (hi - lo) - 1.0

    @property
    def default(self) -> float | int:
        """The value suggested first: ``mean``, or the centre of the scale."""
        return self.denormalize(0.0 if self.mean is None else self.normalize(self.mean))

    @classmethod
    def from_spec(cls, name: str, spec: Mapping[str, object]) -> Param:
        """Builds a parameter from a TOML-style spec.

        Args:
            name: Dotted parameter name.
            spec: ``{"distribution": "log", "min": 1e-4, "max": 1e-1, "mean": 3e-3}``;
                ``mean`` is optional. Distributions: linear (uniform), int (int_uniform),
                log (log_normal), pow2 (uniform_pow2), logit (logit_normal).

        Raises:
            SweepConfigError: On an unknown key or distribution, or bad bounds.
        """
        for key in spec:
            if key not in _SPEC_KEYS:
                raise SweepConfigError(
                    f"sweep parameter {name!r}: unknown key {key!r}, expected one of "
                    f"{list(_SPEC_KEYS)}{_closest(str(key), _SPEC_KEYS)}"
                )
        missing = [k for k in ("distribution", "min", "max") if k not in spec]
        if missing:
            raise SweepConfigError(
                f"sweep parameter {name!r}: missing {missing}; add them, e.g. "
                "{distribution = 'log', min = 1e-4, max = 1e-1}"
            )
        dist = str(spec["distribution"])
        if dist not in _SCALE_NAMES:
            raise SweepConfigError(
                f"sweep parameter {name!r}: unknown distribution {dist!r}, expected one of "
                f"{sorted(_SCALE_NAMES)}{_closest(dist, tuple(_SCALE_NAMES))}"
            )
        mean = spec.get("mean")
        return cls(
            name=name,
            scale=_SCALE_NAMES[dist],
            min=float(spec["min"]),  # type: ignore[arg-type]
            max=float(spec["max"]),  # type: ignore[arg-type]
            mean=None if mean is None else float(mean),  # type: ignore[arg-type]
        )


class Space:
    """An ordered set of parameters; converts suggestions to and from points of [-1, 1]^d.

    Args:
        params: The parameters, in column order.
        steps_key: Name of the parameter that counts training steps (e.g.
            ``"train.total_timesteps"``); learning-curve points substitute the steps reached so
            far for it. None when runs report no curve.

    Example:
        >>> space = Space([Param("lr", Scale.LOG, 1e-4, 1e-2), Param("bs", Scale.POW2, 16, 256)])
        >>> params = space.denormalize(np.array([0.0, 1.0]))
        >>> list(params), round(params["lr"], 6), params["bs"]
        (['lr', 'bs'], 0.001, 256)
        >>> space.normalize({"lr": 1e-4, "bs": 64}).round(3).tolist()
        [-1.0, 0.0]
    """

    def __init__(self, params: list[Param], steps_key: str | None = None) -> None:
        names = [p.name for p in params]
        if not params or len(set(names)) != len(names):
            raise SweepConfigError(
                f"sweep space: expected at least one parameter with unique names, got {names}; "
                "declare each parameter once under [sweep]"
            )
        if steps_key is not None and steps_key not in names:
            raise SweepConfigError(
                f"sweep space: steps_key {steps_key!r} is not a parameter; expected one of "
                f"{names}{_closest(steps_key, names)}"
            )
        self.params = list(params)
        self.names = names
        self.steps_key = steps_key

    def __len__(self) -> int:
        return len(self.params)

    def __iter__(self) -> Iterator[Param]:
        return iter(self.params)

    def __repr__(self) -> str:
        return f"Space({self.names}, steps_key={self.steps_key!r})"

    def normalize(self, params: Mapping[str, float | int]) -> np.ndarray:
        """Maps a suggestion to a point of [-1, 1]^d, float64 of shape (d,).

        Raises:
            SweepConfigError: If a parameter of the space is missing from ``params``.
        """
        missing = [n for n in self.names if n not in params]
        if missing:
            raise SweepConfigError(
                f"sweep space: params {dict(params)} lack {missing}; pass a dict with every "
                f"parameter of {self.names}"
            )
        return np.array([p.normalize(params[p.name]) for p in self.params], dtype=np.float64)

    def denormalize(self, x: np.ndarray) -> Params:
        """Maps a point of [-1, 1]^d (shape (d,)) to a suggestion dict, in declaration order."""
        return {p.name: p.denormalize(float(v)) for p, v in zip(self.params, x, strict=True)}

    def snap(self, x: np.ndarray) -> np.ndarray:
        """Snaps points of shape (m, d) to the integer and power-of-two grids (see `Param.snap`)."""
        return np.stack([p.snap(x[:, i]) for i, p in enumerate(self.params)], axis=1)

    def default(self) -> Params:
        """Every parameter at its ``mean`` (or the centre of its scale)."""
        return {p.name: p.default for p in self.params}

    @classmethod
    def from_specs(
        cls, specs: Mapping[str, Mapping[str, object]], steps_key: str | None = None
    ) -> Space:
        """Builds a space from ``{name: spec}`` (see `Param.from_spec`)."""
        return cls([Param.from_spec(n, s) for n, s in specs.items()], steps_key=steps_key)


def nest(params: Mapping[str, object]) -> dict[str, object]:
    """Turns dotted keys into nested dicts: ``{"train.lr": 1}`` -> ``{"train": {"lr": 1}}``.

    Example:
        >>> nest({"train.lr": 0.1, "train.bs": 8, "seed": 1})
        {'train': {'lr': 0.1, 'bs': 8}, 'seed': 1}
    """
    out: dict[str, object] = {}
    for key, value in params.items():
        *parents, leaf = key.split(".")
        node = out
        for part in parents:
            node = node.setdefault(part, {})  # type: ignore[assignment]
        node[leaf] = value
    return out
