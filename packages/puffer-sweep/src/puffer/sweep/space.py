"""Search spaces: hyperparameters on linear, integer, log, power-of-two, logit and categorical scales.

Every method searches the unit cube [-1, 1]^d. A `Param` maps its value onto [-1, 1] through its
scale (a log scale makes 1e-4..1e-1 evenly spaced per decade); `Space` does this for a whole
ordered set of parameters. Key order is the order of declaration and is the column order of every
normalized array.

Discrete scales (int, pow2, categorical) cover [-1, 1] too: a point of the cube is rounded to a
grid value when it is turned into a suggestion (`denormalize`), and `snap` moves it to where it
was rounded. A categorical parameter with k values splits [-1, 1] into k equal bins, one per
value, in the order the values are listed; that order means nothing to a model, so `features`
one-hot encodes the column for the GPs.
"""

from __future__ import annotations

import difflib
import enum
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from puffer.sweep.errors import SweepConfigError

__all__ = ["Param", "Params", "Scalar", "Scale", "Space", "nest"]

Scalar = float | int | str | bool
"""One parameter value: a number, or any TOML scalar for a categorical parameter."""

Params = dict[str, Scalar]
"""One suggestion: parameter name (dotted, e.g. ``"train.learning_rate"``) to its value."""


class Scale(enum.Enum):
    """How a parameter's value maps onto [-1, 1]."""

    LINEAR = "linear"
    INT = "int"
    LOG = "log"
    POW2 = "pow2"
    LOGIT = "logit"
    CATEGORICAL = "categorical"


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
    "categorical": Scale.CATEGORICAL,
    "choice": Scale.CATEGORICAL,
}
_SPEC_KEYS = ("distribution", "min", "max", "mean", "values")
_GRID_SCALES = (Scale.INT, Scale.POW2)


def _closest(word: str, choices: list[str] | tuple[str, ...]) -> str:
    match = difflib.get_close_matches(word, list(choices), n=1)
    return f"; did you mean {match[0]!r}?" if match else ""


@dataclass(frozen=True)
class Param:
    """One hyperparameter: its name, scale and bounds (or, when categorical, its values).

    Args:
        name: Dotted name, e.g. ``"train.learning_rate"``.
        scale: How the value maps onto [-1, 1].
        min: Smallest value (inclusive). Positive for LOG and POW2; in (0, 1) for LOGIT. None
            (and so is ``max``) for CATEGORICAL.
        max: Largest value (inclusive), greater than ``min``.
        mean: The default value, suggested first by Protein; None means the centre of the
            scale, or the first value of a categorical parameter.
        values: CATEGORICAL only: the choices, at least two distinct TOML scalars (str, int,
            float, bool), e.g. ``("relu", "tanh", "gelu")``.

    Example:
        >>> p = Param("lr", Scale.LOG, 1e-4, 1e-2)
        >>> round(p.denormalize(0.0), 6)
        0.001
        >>> p.normalize(1e-2)
        1.0
        >>> act = Param("act", Scale.CATEGORICAL, values=("relu", "tanh", "gelu"))
        >>> act.denormalize(0.0), act.normalize("gelu"), act.default
        ('tanh', 0.6666666666666667, 'relu')
    """

    name: str
    scale: Scale
    min: float | None = None
    max: float | None = None
    mean: Scalar | None = None
    values: tuple[Scalar, ...] | None = None

    def __post_init__(self) -> None:
        if self.scale is Scale.CATEGORICAL:
            self._check_categorical()
            return
        if self.values is not None:
            raise SweepConfigError(
                f"sweep parameter {self.name!r}: values are for a categorical parameter, got "
                f"values with scale {self.scale.value!r}; use distribution 'categorical' or drop "
                "values"
            )
        if self.min is None or self.max is None:
            raise SweepConfigError(
                f"sweep parameter {self.name!r}: a {self.scale.value} scale needs min and max, "
                f"got min={self.min}, max={self.max}; add both bounds"
            )
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
        if self.mean is not None and not (
            isinstance(self.mean, int | float) and self.min <= self.mean <= self.max
        ):
            raise SweepConfigError(
                f"sweep parameter {self.name!r}: expected min <= mean <= max, got "
                f"mean={self.mean!r} outside [{self.min}, {self.max}]; move mean inside the bounds"
            )

    def _check_categorical(self) -> None:
        values = self.values
        if self.min is not None or self.max is not None:
            raise SweepConfigError(
                f"sweep parameter {self.name!r}: a categorical parameter takes values, not "
                f"min/max (got min={self.min}, max={self.max}); list the choices in values"
            )
        if isinstance(values, str | bytes) or not isinstance(values, tuple | list):
            raise SweepConfigError(
                f"sweep parameter {self.name!r}: a categorical parameter needs values, a list of "
                f"choices, got {values!r}; e.g. values = ['relu', 'tanh']"
            )
        bad = [
            v
            for v in values
            if not isinstance(v, str | int | float | bool)
            or (isinstance(v, float) and not math.isfinite(v))
        ]
        if bad:
            raise SweepConfigError(
                f"sweep parameter {self.name!r}: categorical values must be strings, ints, finite "
                f"floats or bools, got {bad!r}; list scalar choices"
            )
        keys = [(type(v) is bool, v) for v in values]  # keeps True apart from 1
        if len(values) < 2 or len(set(keys)) != len(keys):
            raise SweepConfigError(
                f"sweep parameter {self.name!r}: expected at least two distinct categorical "
                f"values, got {list(values)!r}; list each choice once"
            )
        object.__setattr__(self, "values", tuple(values))
        if self.mean is not None:
            self._index(self.mean)

    def _index(self, value: object) -> int:
        """Position of a categorical value in ``values``."""
        assert self.values is not None
        for i, v in enumerate(self.values):
            if v == value and (type(v) is bool) == (type(value) is bool):
                return i
        raise SweepConfigError(
            f"sweep parameter {self.name!r}: {value!r} is not one of its values "
            f"{list(self.values)!r}; pass one of them"
        )

    @property
    def is_discrete(self) -> bool:
        """True for scales whose suggestions are rounded to a grid (int, pow2, categorical)."""
        return self.scale in _GRID_SCALES or self.scale is Scale.CATEGORICAL

    def _bounds(self) -> tuple[np.float64, np.float64]:
        """The scale's transform of min and max (grid units for INT and POW2)."""
        return self._forward(np.float64(self.min)), self._forward(np.float64(self.max))

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

    def _bin(self, x: np.ndarray) -> np.ndarray:
        """CATEGORICAL: index (int64) of the bin of [-1, 1] each point falls in."""
        k = len(self.values)  # type: ignore[arg-type]
        return np.minimum(np.floor((np.clip(x, -1.0, 1.0) + 1.0) * 0.5 * k), k - 1).astype(np.int64)

    def _centre(self, index: np.ndarray) -> np.ndarray:
        """CATEGORICAL: the point of [-1, 1] at the centre of each index's bin."""
        return -1.0 + (2.0 * index + 1.0) / len(self.values)  # type: ignore[arg-type]

    def normalize(self, value: Scalar | np.ndarray) -> float | np.ndarray:
        """Maps value(s) in [min, max] onto [-1, 1] (values outside are clipped); a
        categorical value (one scalar) maps to the centre of its bin.

        Raises:
            SweepConfigError: If a categorical value is not one of ``values``.
        """
        if self.scale is Scale.CATEGORICAL:
            return float(self._centre(np.float64(self._index(value))))
        v = np.clip(np.asarray(value, dtype=np.float64), self.min, self.max)
        lo, hi = self._bounds()
        x = 2.0 * (self._forward(v) - lo) / (hi - lo) - 1.0
        return float(x) if x.ndim == 0 else x

    def denormalize(self, x: float) -> Scalar:
        """Maps a point of [-1, 1] back to a value; INT and POW2 scales round to their grid,
        a categorical scale returns the value whose bin holds the point."""
        if self.scale is Scale.CATEGORICAL:
            return self.values[int(self._bin(np.float64(x)))]  # type: ignore[index]
        lo, hi = self._bounds()
        t = lo + (float(np.clip(x, -1.0, 1.0)) + 1.0) * 0.5 * (hi - lo)
        if self.scale is Scale.INT:
            return int(np.clip(round(float(t)), math.ceil(self.min), math.floor(self.max)))  # type: ignore[arg-type]
        if self.scale is Scale.POW2:
            exponent = np.clip(round(float(t)), math.ceil(lo - 1e-9), math.floor(hi + 1e-9))
            return int(2**exponent) if exponent >= 0 else float(2.0**exponent)
        return float(np.clip(self._inverse(np.float64(t)), self.min, self.max))

    def _grid(self) -> tuple[np.ndarray, float, float]:
        """INT and POW2: (lo, hi) in grid units and the first and last grid point."""
        lo, hi = self._bounds()
        return np.array([lo, hi]), math.ceil(lo - 1e-9), math.floor(hi + 1e-9)

    def snap(self, x: np.ndarray) -> np.ndarray:
        """Moves points of [-1, 1] (any shape, float64) to where `denormalize` rounds them, so
        a model scores a candidate where it will really run. Identity on continuous scales."""
        if self.scale is Scale.CATEGORICAL:
            return self._centre(self._bin(x))
        if self.scale not in _GRID_SCALES:
            return x
        (lo, hi), first, last = self._grid()
        t = lo + (np.clip(x, -1.0, 1.0) + 1.0) * 0.5 * (hi - lo)
        t = np.clip(np.round(t), first, last)
        return 2.0 * (t - lo) / (hi - lo) - 1.0

    def neighbours(self, x: np.ndarray) -> list[np.ndarray]:
        """The grid values next to each point of x (shape (m,), float64), other than the one
        `snap` picks: for INT and POW2 the grid point on the other side of x (floor or ceiling),
        for a categorical scale every other value. Each array is (m,) in [-1, 1]; none for a
        continuous scale.

        A model-based method scores these too, so a discrete parameter can move one grid step
        (or change category) whenever the model prefers it, rather than only when a continuous
        step happens to cross a rounding boundary.

        Example:
            >>> p = Param("n", Scale.INT, 0, 4)
            >>> p.snap(np.array([0.1])), p.neighbours(np.array([0.1]))
            (array([0.]), [array([0.5])])
        """
        if self.scale is Scale.CATEGORICAL:
            k = len(self.values)  # type: ignore[arg-type]
            index = self._bin(x)
            return [self._centre((index + offset) % k) for offset in range(1, k)]
        if self.scale not in _GRID_SCALES:
            return []
        (lo, hi), first, last = self._grid()
        t = lo + (np.clip(x, -1.0, 1.0) + 1.0) * 0.5 * (hi - lo)
        nearest = np.round(t)
        other = np.clip(np.where(t >= nearest, nearest + 1.0, nearest - 1.0), first, last)
        return [2.0 * (other - lo) / (hi - lo) - 1.0]

    @property
    def num_features(self) -> int:
        """Columns this parameter takes in `Space.features`: k for a categorical, else 1."""
        return len(self.values) if self.scale is Scale.CATEGORICAL else 1  # type: ignore[arg-type]

    def features(self, x: np.ndarray) -> np.ndarray:
        """The model's view of points x (shape (m,)): (m, 1) as is, or for a categorical
        scale (m, k) one-hot float64, so every pair of distinct values is equally far apart."""
        if self.scale is not Scale.CATEGORICAL:
            return x[:, None]
        return np.eye(self.num_features)[self._bin(x)]

    @property
    def default(self) -> Scalar:
        """The value suggested first: ``mean``, or the centre of the scale (the first value of
        a categorical parameter)."""
        if self.scale is Scale.CATEGORICAL:
            return self.values[0] if self.mean is None else self.mean  # type: ignore[index]
        return self.denormalize(0.0 if self.mean is None else self.normalize(self.mean))

    @classmethod
    def from_spec(cls, name: str, spec: Mapping[str, object]) -> Param:
        """Builds a parameter from a TOML-style spec.

        Args:
            name: Dotted parameter name.
            spec: ``{"distribution": "log", "min": 1e-4, "max": 1e-1, "mean": 3e-3}``;
                ``mean`` is optional. Distributions: linear (uniform), int (int_uniform),
                log (log_normal), pow2 (uniform_pow2), logit (logit_normal), and categorical
                (choice), which takes ``values`` instead of min and max:
                ``{"distribution": "categorical", "values": ["relu", "tanh"]}``.

        Raises:
            SweepConfigError: On an unknown key or distribution, or bad bounds or values.
        """
        for key in spec:
            if key not in _SPEC_KEYS:
                raise SweepConfigError(
                    f"sweep parameter {name!r}: unknown key {key!r}, expected one of "
                    f"{list(_SPEC_KEYS)}{_closest(str(key), _SPEC_KEYS)}"
                )
        if "distribution" not in spec:
            raise SweepConfigError(
                f"sweep parameter {name!r}: missing ['distribution']; add one of "
                f"{sorted(_SCALE_NAMES)}, e.g. {{distribution = 'log', min = 1e-4, max = 1e-1}}"
            )
        dist = str(spec["distribution"])
        if dist not in _SCALE_NAMES:
            raise SweepConfigError(
                f"sweep parameter {name!r}: unknown distribution {dist!r}, expected one of "
                f"{sorted(_SCALE_NAMES)}{_closest(dist, tuple(_SCALE_NAMES))}"
            )
        scale = _SCALE_NAMES[dist]
        if scale is Scale.CATEGORICAL:
            if "values" not in spec:
                raise SweepConfigError(
                    f"sweep parameter {name!r}: missing ['values']; add the choices, e.g. "
                    "{distribution = 'categorical', values = ['relu', 'tanh']}"
                )
            values = spec["values"]
            return cls(
                name=name,
                scale=scale,
                min=spec.get("min"),  # type: ignore[arg-type]
                max=spec.get("max"),  # type: ignore[arg-type]
                mean=spec.get("mean"),  # type: ignore[arg-type]
                values=tuple(values) if isinstance(values, list) else values,  # type: ignore[arg-type]
            )
        missing = [k for k in ("min", "max") if k not in spec]
        if missing:
            raise SweepConfigError(
                f"sweep parameter {name!r}: missing {missing}; add them, e.g. "
                "{distribution = 'log', min = 1e-4, max = 1e-1}"
            )
        mean = spec.get("mean")
        return cls(
            name=name,
            scale=scale,
            min=_number(name, "min", spec["min"]),
            max=_number(name, "max", spec["max"]),
            mean=None if mean is None else _number(name, "mean", mean),
            values=spec.get("values"),  # type: ignore[arg-type]
        )


def _number(name: str, key: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SweepConfigError(
            f"sweep parameter {name!r}: {key} must be a number, got {value!r}; write it "
            "without quotes"
        )
    return float(value)


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
        if steps_key is not None and params[names.index(steps_key)].scale is Scale.CATEGORICAL:
            raise SweepConfigError(
                f"sweep space: steps_key {steps_key!r} is categorical; learning-curve steps "
                "need a numeric scale (e.g. distribution 'log')"
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
        """Snaps points of shape (m, d) to the int, pow2 and categorical grids (see `Param.snap`)."""
        return np.stack([p.snap(x[:, i]) for i, p in enumerate(self.params)], axis=1)

    def neighbours(self, x: np.ndarray) -> np.ndarray:
        """Points x (m, d) snapped, followed by copies that move one discrete parameter at a
        time to a neighbouring grid value (see `Param.neighbours`).

        Returns:
            float64 array (m * (1 + n), d), n the number of neighbours per point (0 on a
            continuous space); rows [0, m) are ``snap(x)``.

        Example:
            >>> space = Space([Param("a", Scale.LINEAR, 0, 1), Param("n", Scale.INT, 0, 4)])
            >>> space.neighbours(np.array([[0.3, 0.1]])).tolist()
            [[0.3, 0.0], [0.3, 0.5]]
        """
        snapped = self.snap(x)
        out = [snapped]
        for i, p in enumerate(self.params):
            for column in p.neighbours(x[:, i]):
                moved = snapped.copy()
                moved[:, i] = column
                out.append(moved)
        return np.concatenate(out)

    @property
    def num_features(self) -> int:
        """Columns of `features`: one per parameter, k per categorical parameter."""
        return sum(p.num_features for p in self.params)

    def features(self, x: np.ndarray) -> np.ndarray:
        """What a model sees of points x (m, d): (m, num_features) float64, categorical
        columns one-hot encoded, the others as they are."""
        return np.concatenate([p.features(x[:, i]) for i, p in enumerate(self.params)], axis=1)

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
