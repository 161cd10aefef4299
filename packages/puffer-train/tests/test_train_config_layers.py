"""The config layers: defaults, env TOML, --config file, overrides; typing and suggestions."""

from __future__ import annotations

import json
import tomllib
from importlib.resources import files
from pathlib import Path

import pytest

from puffer.core import APIUsageError, EnvNotFoundError, env_creator, registered_envs
from puffer.core.registry import env_package
from puffer.sweep import SweepConfig
from puffer.train import train
from puffer.train.config import (
    ConfigError,
    Kind,
    PolicyConfig,
    TrainConfig,
    VecConfig,
    env_defaults,
    load_config,
    parse_overrides,
)
from puffer.train.config.fields import coerce
from puffer.train.config.sources import config_sources

ENV = "squared"
# The Ocean envs that ship a TOML, and the PettingZoo ids that do (puffer-envs tests its own).
SHIPPED = sorted(
    [
        name
        for name in registered_envs()
        if env_package(name) == "puffer-ocean" and getattr(env_creator(name), "config_sources", ())
    ]
    + ["pettingzoo-classic.connect_four_v3", "pettingzoo-classic.tictactoe_v3"]
)


def test_both_spellings_of_a_key_and_every_value_type() -> None:
    config = load_config(
        ENV,
        overrides=[
            "--train.learning-rate",
            "3e-4",
            "--train.total_timesteps=1e5",
            "--train.anneal-lr",
            "false",
            "--policy.encoder",
            "mlp",
            "--train.resume",
            "--train.run-id",
            "run-1",
            "--env.max-steps",
            "20",
        ],
    )
    train = config.train
    assert isinstance(train, TrainConfig) and isinstance(config.policy, PolicyConfig)
    assert train.learning_rate == 3e-4
    assert train.total_timesteps == 100_000 and isinstance(train.total_timesteps, int)
    assert train.anneal_lr is False and train.resume is True
    assert config.env["max_steps"] == 20


def test_layers_apply_in_order(tmp_path) -> None:
    user = tmp_path / "user.toml"
    user.write_text("[train]\nlearning-rate = 0.5\ngamma = 0.9\n[env]\nmax_steps = 7\n")
    config = load_config(ENV, user, ["--train.gamma", "0.8"])
    assert config.train.learning_rate == 0.5  # the file beats the shipped TOMLs
    assert config.train.gamma == 0.8  # the command line beats the file
    assert config.env["max_steps"] == 7


def test_unknown_key_suggests_the_closest_one() -> None:
    with pytest.raises(
        ConfigError, match=r"--train\.learnin-rate.*did you mean --train\.learning-rate"
    ):
        load_config(ENV, overrides=["--train.learnin-rate", "1"])
    with pytest.raises(ConfigError, match=r"did you mean --train\.gamma"):
        load_config(ENV, overrides=["--trian.gamma", "1"])
    with pytest.raises(ConfigError, match="sections are env, vec, policy, train, sweep"):
        load_config(ENV, overrides=["--nothing.here", "1"])
    with pytest.raises(ConfigError, match="config overrides look like"):
        load_config(ENV, overrides=["stray"])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[train]\ngama = 0.9\n", r"--train\.gama \(in .*user\.toml\).*--train\.gamma"),
        ("[trainer]\ngamma = 0.9\n", r"unknown section \[trainer\].*did you mean train"),
        ("[train]\ngamma = 'high'\n", r"--train\.gamma \(in .*\) expects a float"),
        ("[train]\ngamma = nan\n", r"--train\.gamma \(in .*user\.toml\) is nan"),
        ("[sweep]\nmax_cost = 'big'\n", r"--sweep\.max-cost \(in .*\) expects a float or none"),
    ],
)
def test_bad_files_name_the_key_and_the_file(tmp_path, text: str, expected: str) -> None:
    user = tmp_path / "user.toml"
    user.write_text(text)
    with pytest.raises(ConfigError, match=expected):
        load_config(ENV, user)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--train.learning-rate", "fast"], "expects a float"),
        (["--train.total-timesteps", "1.5"], "expects an int"),
        (["--train.anneal-lr", "maybe"], "expects a bool"),
        (["--train.horizon"], "needs a value of type int"),
        (["--sweep.train"], "is a table"),
    ],
)
def test_wrong_types_name_the_expected_type(args: list[str], expected: str) -> None:
    with pytest.raises(ConfigError, match=expected):
        load_config(ENV, overrides=args)


def test_coerce_lists_and_numbers() -> None:
    ints = Kind.of([128])
    assert coerce("[64, 32]", ints, "--x") == [64, 32]
    assert coerce("64,32", ints, "--x") == [64, 32]
    real = Kind("float")
    assert coerce("1", real, "--x") == 1.0 and isinstance(coerce("1", real, "--x"), float)
    assert coerce(3, real, "--x") == 3.0
    with pytest.raises(ConfigError, match=r"--x\[1\] expects an int"):
        coerce("[1, 2.5]", ints, "--x")
    with pytest.raises(ConfigError, match=r"expects an int, got True \(bool\)"):
        coerce(True, Kind("int"), "--x")
    assert coerce("none", Kind("float", optional=True), "--x") is None
    with pytest.raises(ConfigError, match="expects a float, got 'none'"):
        coerce("none", real, "--x")


def test_negative_values_and_bare_flags_parse() -> None:
    parsed = parse_overrides(["--train.seed", "-3", "--train.resume", "--vec.num-instances=2"])
    assert [(o.path, o.value) for o in parsed] == [
        (("train", "seed"), "-3"),
        (("train", "resume"), None),
        (("vec", "num_instances"), "2"),
    ]


def test_sweep_parameters_are_overridable_and_parse() -> None:
    config = load_config(ENV, overrides=["--sweep.train.learning-rate.max", "0.05"])
    sweep = config.sweep
    assert "train.learning_rate" in sweep.space.names
    assert sweep.max_cost is None and sweep.steps_key is None
    lr = next(p for p in sweep.space if p.name == "train.learning_rate")
    assert lr.max == 0.05


def test_sweep_parameter_must_name_a_config_key(tmp_path) -> None:
    user = tmp_path / "user.toml"
    user.write_text("[sweep.train.gamma2]\ndistribution = 'linear'\nmin = 0\nmax = 1\n")
    with pytest.raises(ConfigError, match=r"--sweep\.train\.gamma2"):
        load_config(ENV, user)


def test_with_params_applies_a_suggestion() -> None:
    config = load_config(ENV)
    tuned = config.with_params({"train.learning_rate": 0.01, "train.horizon": 32.0})
    assert tuned.train.learning_rate == 0.01 and tuned.train.horizon == 32
    with pytest.raises(ConfigError, match="not a config key"):
        config.with_params({"train.nope": 1})


def test_resolved_config_round_trips_through_toml(tmp_path) -> None:
    config = load_config(ENV, overrides=["--train.gamma", "0.97"])
    path = tmp_path / "resolved.toml"
    path.write_text(config.to_toml())
    again = load_config(ENV, path)
    assert again.to_dict() == config.to_dict() and again.sweep_params == config.sweep_params
    assert again.to_toml() == config.to_toml()
    assert tomllib.loads(config.to_toml())["train"]["gamma"] == 0.97


def test_unknown_env_is_reported_by_the_registry() -> None:
    with pytest.raises(EnvNotFoundError, match="no-such-env"):
        load_config("no-such-env")


def test_env_defaults_read_the_creator() -> None:
    defaults = env_defaults(env_creator(ENV))
    assert "buf" not in defaults and "render_mode" not in defaults
    assert isinstance(defaults["max_steps"], int)


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_config_resolves_and_builds_its_env(name: str) -> None:
    config = load_config(name)
    assert isinstance(config.sweep, SweepConfig) and len(config.sweep.space) >= 1
    env = env_creator(name)(**config.env)
    try:
        assert env.num_agents >= 1
    finally:
        env.close()


@pytest.mark.parametrize("name", ["default", *SHIPPED])
def test_no_shipped_toml_repeats_a_default(name: str) -> None:
    """Defaults live in the dataclasses only; a shipped TOML states what differs from them.

    ([env] is left out: its defaults are the env's, declared by the env's own package.)
    """
    if name == "default":
        path = files("puffer.train.config") / "default.toml"
    else:
        path = config_sources(name, env_creator(name))[-1]
    data = tomllib.loads(path.read_text())
    defaults = {
        "train": TrainConfig(),
        "policy": PolicyConfig(),
        "vec": VecConfig(),
        "sweep": SweepConfig(space=load_config(ENV).sweep.space),
    }
    for section, values in data.items():
        if section == "env":
            continue
        repeated = [
            k
            for k, v in values.items()
            if not isinstance(v, dict) and getattr(defaults[section], k) == v
        ]
        assert not repeated, f"{path} [{section}] repeats the defaults of {repeated}"


def test_sweep_options_are_typed_with_real_none(tmp_path) -> None:
    config = load_config(ENV)
    assert config.sweep.max_cost is None and config.sweep.steps_key is None
    text = config.to_toml()
    assert "# max_cost: unset (None)" in text and "max_cost =" not in text
    capped = load_config(
        ENV, overrides=["--sweep.max-cost", "3600", "--sweep.steps-key", "train.gamma"]
    )
    assert capped.sweep.max_cost == 3600.0 and capped.sweep.space.steps_key == "train.gamma"
    path = tmp_path / "capped.toml"
    path.write_text(capped.to_toml())
    assert load_config(ENV, path).sweep.max_cost == 3600.0
    # A lower layer's value can be unset again from the command line.
    assert load_config(ENV, path, ["--sweep.max-cost", "none"]).sweep.max_cost is None


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["--train.total-timesteps", "-5"],
            r"--train\.total-timesteps is -5; set it to an int >= 1",
        ),
        (["--train.gamma", "nan"], r"--train\.gamma is nan; set it to a finite float in \[0, 1\]"),
        (["--train.learning-rate", "inf"], r"--train\.learning-rate is inf; .*finite float > 0"),
        (["--train.device", "gpu"], r"--train\.device is 'gpu'; .*torch device"),
        (["--train.optimizer", "sgd"], r"--train\.optimizer is 'sgd'; .*among 'muon', 'adam'"),
        (["--train.run-id", "a/b"], r"--train\.run-id is 'a/b'; .*one directory"),
        (["--policy.hidden-size", "0"], r"--policy\.hidden-size is 0; set it to an int >= 1"),
        (["--vec.num-instances", "4"], r"vec\.num_instances is 4 with vec\.backend 'native'"),
        (["--train.resume"], r"train\.resume is set but train\.run_id is empty"),
        (["--sweep.max-runs", "0"], r"max_runs: expected >= 1"),
    ],
)
def test_out_of_range_values_name_the_key_and_the_form(args: list[str], expected: str) -> None:
    with pytest.raises(Exception, match=expected) as raised:
        load_config(ENV, overrides=args)
    assert type(raised.value).__name__ in ("ConfigError", "SweepConfigError")


def test_range_errors_quote_the_envs_shipped_value(tmp_path) -> None:
    # cartpole.toml ships 99,840 steps and gamma 0.99; the code defaults are 10M and 0.995.
    shipped = load_config("cartpole").train
    assert (shipped.total_timesteps, shipped.gamma) == (99_840, 0.99)
    assert TrainConfig().total_timesteps != shipped.total_timesteps
    with pytest.raises(ConfigError, match=r"is -5; set it to an int >= 1 .*; default 99840$"):
        load_config("cartpole", overrides=["--train.total-timesteps", "-5"])
    user = tmp_path / "user.toml"
    user.write_text("[train]\ngamma = 2.0\n")
    with pytest.raises(ConfigError, match=r"gamma \(in .*user.toml\) is 2.0; .*; default 0.99$"):
        load_config("cartpole", user)
    # A sweep's suggestion quotes the value of the config the sweep started from.
    with pytest.raises(ConfigError, match=r"--train.gamma is 5.0; .*; default 0.99$"):
        load_config("cartpole").with_params({"train.gamma": 5.0})


def test_building_the_config_creates_nothing(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = load_config(ENV, overrides=["--train.data-dir", "runs/deep/er"])
    config.train.check_host()
    assert list(tmp_path.iterdir()) == []


def test_keys_cover_every_section() -> None:
    rows = {path: (value, kind) for path, value, kind, _ in load_config(ENV).keys()}
    assert rows[("train", "gamma")] == (0.95, Kind("float"))
    assert rows[("sweep", "steps_key")] == (None, Kind("str", optional=True))
    assert rows[("env", "max_steps")][0] == 33


def test_train_from_python_resolves_what_the_cli_resolves(tmp_path) -> None:
    overrides = [
        "--train.total-timesteps", "256",
        "--train.device", "cpu",
        "--train.data-dir", str(tmp_path),
        "--vec.backend", "serial",
    ]  # fmt: skip
    result = train("gym-CartPole-v1", overrides=overrides)
    stored = json.loads((result.run_dir / "config.json").read_text())
    expected = load_config("gym-CartPole-v1", overrides=overrides).to_dict()
    expected["train"]["run_id"] = result.run_dir.name  # the fresh id the run was given
    assert stored == expected
    with pytest.raises(APIUsageError, match="got a config and config_file/overrides"):
        train("gym-CartPole-v1", load_config(ENV), overrides=overrides)


def test_an_ocean_envs_keys_are_checked_against_its_c_header() -> None:
    # breakout's config class comes from its header: frameskip is an int in [1, 1e9].
    with pytest.raises(ConfigError, match=r"--env\.frameskip is 0; set it to an int in \[1, "):
        load_config("breakout", overrides=["--env.frameskip", "0"])
    assert load_config("breakout", overrides=["--env.frameskip", "2"]).env["frameskip"] == 2


def test_a_printed_config_read_back_keeps_its_notes(tmp_path: Path) -> None:
    # A file restating the derived and family values leaves their reasons standing, so the
    # printed config of an env without a TOML of its own reads back to itself.
    printed = load_config("gym-CartPole-v1").to_toml()
    (tmp_path / "c.toml").write_text(printed)
    assert "# derived: " in printed and "# family config " in printed
    assert load_config("gym-CartPole-v1", tmp_path / "c.toml").to_toml() == printed
