"""Search spaces and the [sweep] section: scales, round trips, parsing and its errors."""

from __future__ import annotations

import numpy as np
import pytest

from puffer.sweep import (
    Param,
    Scale,
    Space,
    SweepConfigError,
    nest,
    parse_sweep_config,
)

SCALES = [
    Param("linear", Scale.LINEAR, -2.0, 3.0),
    Param("int", Scale.INT, 1, 9),
    Param("log", Scale.LOG, 1e-5, 1e-1),
    Param("pow2", Scale.POW2, 16, 4096),
    Param("logit", Scale.LOGIT, 0.8, 0.9999),
]


@pytest.mark.parametrize("param", SCALES, ids=lambda p: p.name)
def test_sweep_bounds_map_to_unit_interval_ends(param: Param) -> None:
    assert param.normalize(param.min) == pytest.approx(-1.0)
    assert param.normalize(param.max) == pytest.approx(1.0)
    assert param.denormalize(-1.0) == pytest.approx(param.min)
    assert param.denormalize(1.0) == pytest.approx(param.max)


@pytest.mark.parametrize("param", SCALES, ids=lambda p: p.name)
def test_sweep_round_trip_is_identity_on_the_grid(param: Param) -> None:
    for x in np.linspace(-1.0, 1.0, 17):
        value = param.denormalize(x)
        assert param.min <= value <= param.max
        assert param.denormalize(param.normalize(value)) == pytest.approx(value)


def test_sweep_integer_scales_round_to_their_grid() -> None:
    ints = {SCALES[1].denormalize(x) for x in np.linspace(-1, 1, 101)}
    assert ints == set(range(1, 10))
    assert all(isinstance(v, int) for v in ints)
    pows = {SCALES[3].denormalize(x) for x in np.linspace(-1, 1, 101)}
    assert pows == {2**k for k in range(4, 13)}


def test_sweep_log_scale_spaces_decades_evenly() -> None:
    log = SCALES[2]
    assert [round(log.normalize(v), 6) for v in (1e-5, 1e-4, 1e-3, 1e-2, 1e-1)] == [
        -1.0,
        -0.5,
        0.0,
        0.5,
        1.0,
    ]
    logit = SCALES[4]
    assert logit.denormalize(0.0) == pytest.approx(1 / (1 + np.sqrt(0.2 / 0.8 * 0.0001 / 0.9999)))


def test_sweep_default_uses_mean_or_centre() -> None:
    space = Space([Param("a", Scale.LOG, 1e-4, 1e-2, mean=3e-3), Param("b", Scale.INT, 0, 10)])
    default = space.default()
    assert default["a"] == pytest.approx(3e-3)
    assert default["b"] == 5
    assert list(space.normalize(default).shape) == [2]


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ({"distribution": "log", "min": 0.0, "max": 1.0}, "needs min > 0"),
        ({"distribution": "logit", "min": 0.5, "max": 1.0}, "0 < min < max < 1"),
        ({"distribution": "linear", "min": 2.0, "max": 1.0}, "expected min < max"),
        ({"distribution": "linear", "min": 0.0, "max": 1.0, "mean": 3.0}, "min <= mean <= max"),
        ({"distribution": "lognormal", "min": 1.0, "max": 2.0}, "did you mean 'log_normal'"),
        ({"distribution": "log", "min": 1.0, "max": 2.0, "maen": 1.5}, "did you mean 'mean'"),
        ({"distribution": "log", "min": 1.0}, r"missing \['max'\]"),
    ],
)
def test_sweep_bad_param_specs_are_refused(spec: dict, match: str) -> None:
    with pytest.raises(SweepConfigError, match=match):
        Param.from_spec("train.x", spec)


def test_sweep_parse_dotted_and_nested_keys_keep_order() -> None:
    config = parse_sweep_config(
        {
            "method": "genetic",
            "goal": "minimize",
            "max_runs": 12,
            "max_cost": 60,
            "steps_key": "train.total_timesteps",
            "train.learning_rate": {"distribution": "log", "min": 1e-4, "max": 1e-1},
            "train": {
                "gamma": {"distribution": "logit_normal", "min": 0.9, "max": 0.999},
                "total_timesteps": {"distribution": "uniform_pow2", "min": 1024, "max": 65536},
            },
            "policy": {"hidden": {"distribution": "int_uniform", "min": 8, "max": 64}},
        },
        max_runs=3,
    )
    assert config.space.names == [
        "train.learning_rate",
        "train.gamma",
        "train.total_timesteps",
        "policy.hidden",
    ]
    assert (config.method, config.goal, config.max_runs, config.max_cost) == (
        "genetic",
        "minimize",
        3,
        60.0,
    )
    assert config.space.steps_key == "train.total_timesteps"
    assert nest(config.space.default())["train"].keys() == {  # type: ignore[union-attr]
        "learning_rate",
        "gamma",
        "total_timesteps",
    }


@pytest.mark.parametrize(
    ("section", "match"),
    [
        ({"max_run": 3}, "did you mean 'max_runs'"),
        ({"max_runs": "3"}, "expected int, got str"),
        ({"method": "protien"}, "did you mean 'protein'"),
        ({"goal": "max"}, "expected 'maximize' or 'minimize'"),
        ({"steps_key": "steps"}, "steps_key 'steps' is not a parameter"),
        ({"train": {"lr": 3}}, "expected a parameter table"),
    ],
)
def test_sweep_bad_sections_are_refused(section: dict, match: str) -> None:
    base = {"x": {"distribution": "linear", "min": 0, "max": 1}}
    with pytest.raises(SweepConfigError, match=match):
        parse_sweep_config({**base, **section})


def test_sweep_section_without_params_is_refused() -> None:
    with pytest.raises(SweepConfigError, match="no parameters to search"):
        parse_sweep_config({"method": "random"})


def test_sweep_snap_matches_denormalize_rounding() -> None:
    space = Space(SCALES)
    x = np.random.default_rng(0).uniform(-1, 1, size=(200, len(SCALES)))
    snapped = space.snap(x)
    for row, snapped_row in zip(x, snapped, strict=True):
        assert space.denormalize(snapped_row) == pytest.approx(space.denormalize(row))
        assert np.allclose(space.normalize(space.denormalize(row)), snapped_row)


ACT = Param("act", Scale.CATEGORICAL, values=("relu", "tanh", "gelu", "elu"))


def test_sweep_categorical_values_get_equal_bins_and_round_trip() -> None:
    xs = np.linspace(-1.0, 1.0, 4001)
    picked = [ACT.denormalize(x) for x in xs]
    counts = [picked.count(v) for v in ACT.values]  # type: ignore[union-attr]
    assert max(counts) - min(counts) <= 1  # uniform draws pick each value equally often
    for value in ACT.values:  # type: ignore[union-attr]
        assert ACT.denormalize(ACT.normalize(value)) == value
    assert ACT.default == "relu"
    assert Param("a", Scale.CATEGORICAL, mean="gelu", values=("relu", "gelu")).default == "gelu"


def test_sweep_categorical_keeps_bools_apart_from_ints() -> None:
    mixed = Param("flag", Scale.CATEGORICAL, values=(1, True, "1"))
    assert [mixed.denormalize(mixed.normalize(v)) for v in (1, True, "1")] == [1, True, "1"]
    assert type(mixed.denormalize(mixed.normalize(True))) is bool


def test_sweep_neighbours_offer_the_other_grid_side_and_every_other_category() -> None:
    space = Space([Param("x", Scale.LINEAR, 0, 1), Param("n", Scale.INT, 1, 8), ACT])
    x = np.array([[0.1, -0.2, -0.9], [0.5, 0.95, 0.3]])
    rows = space.neighbours(x)
    assert rows.shape == (2 * (1 + 1 + 3), 3)
    assert np.array_equal(rows[:2], space.snap(x))
    values = [space.denormalize(r) for r in rows]
    # n: latent 3.8 rounds to 4 and has 3 beside it; latent 7.8 rounds to 8, beside it 7.
    assert [v["n"] for v in values[:4]] == [4, 8, 3, 7]
    assert [v["act"] for v in values[0::2]] == ["relu", "relu", "tanh", "gelu", "elu"]
    assert all(v["x"] in (0.55, 0.75) for v in values)  # continuous columns untouched


def test_sweep_features_one_hot_encode_categoricals() -> None:
    space = Space([Param("x", Scale.LINEAR, 0, 1), ACT])
    x = space.snap(np.array([[0.2, -0.9], [0.2, 0.9]]))
    assert space.num_features == 5
    assert space.features(x).tolist() == [[0.2, 1, 0, 0, 0], [0.2, 0, 0, 0, 1]]


def test_sweep_parse_categorical_spec() -> None:
    config = parse_sweep_config(
        {"policy.act": {"distribution": "choice", "values": ["relu", "tanh"], "mean": "tanh"}}
    )
    (param,) = config.space.params
    assert (param.scale, param.values, param.default) == (
        Scale.CATEGORICAL,
        ("relu", "tanh"),
        "tanh",
    )


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ({"distribution": "categorical"}, r"missing \['values'\]"),
        ({"distribution": "categorical", "values": "relu"}, "needs values, a list"),
        ({"distribution": "categorical", "values": ["relu"]}, "at least two distinct"),
        ({"distribution": "categorical", "values": ["a", "a"]}, "at least two distinct"),
        ({"distribution": "categorical", "values": [[1], 2]}, r"got \[\[1\]\]"),
        ({"distribution": "categorical", "values": [1.0, float("nan")]}, "finite floats"),
        ({"distribution": "categorical", "values": ["a", "b"], "min": 0}, "not min/max"),
        ({"distribution": "categorical", "values": ["a", "b"], "mean": "c"}, "'c' is not one"),
        ({"distribution": "linear", "min": 0, "max": 1, "values": [1, 2]}, "use distribution"),
        ({"distribution": "linear", "min": "0", "max": 1}, "min must be a number"),
        ({"min": 0, "max": 1}, r"missing \['distribution'\]"),
    ],
)
def test_sweep_bad_categorical_specs_are_refused(spec: dict, match: str) -> None:
    with pytest.raises(SweepConfigError, match=match):
        Param.from_spec("policy.act", spec)


def test_sweep_unknown_categorical_value_and_categorical_steps_key_are_refused() -> None:
    space = Space([ACT])
    with pytest.raises(SweepConfigError, match=r"'selu' is not one of its values \['relu'"):
        space.normalize({"act": "selu"})
    with pytest.raises(SweepConfigError, match="steps_key 'act' is categorical"):
        Space([ACT], steps_key="act")
