"""The fold: defaults, the env's sources, --config file, overrides; typing, [env], messages."""

from __future__ import annotations

import dataclasses
import json
import pickle
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
    PolicyConfig,
    TrainConfig,
    VecConfig,
    env_config_class,
    env_defaults,
    load_config,
    parse_overrides,
)
from puffer.train.config.keys import coerce
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


def test_both_spellings_every_value_type_and_layers_in_order(tmp_path) -> None:
    user = tmp_path / "user.toml"
    user.write_text("[train]\nlearning-rate = 0.5\ngamma = 0.9\n[env]\nmax_steps = 7\n")
    overrides = ["--train.total_timesteps=1e5", "--train.anneal-lr", "false", "--train.resume"]
    overrides += ["--train.run-id", "run-1", "--policy.encoder", "mlp", "--train.gamma", "0.8"]
    config = load_config(ENV, user, overrides)
    train = config.train
    assert isinstance(train, TrainConfig) and isinstance(config.policy, PolicyConfig)
    assert train.total_timesteps == 100_000 and isinstance(train.total_timesteps, int)
    assert train.anneal_lr is False and train.resume is True and train.run_id == "run-1"
    assert train.learning_rate == 0.5 and config.env.max_steps == 7  # the file beats the TOMLs
    assert train.gamma == 0.8  # the command line beats the file
    assert load_config(ENV, overrides=["--env.max-steps", "20"]).env.max_steps == 20


@pytest.mark.parametrize(
    ("text", "overrides", "expected"),
    [
        (None, ["--train.learnin-rate", "1"], r"--train\.learnin-rate.*did you mean --train\.learning-rate"),
        (None, ["--trian.gamma", "1"], r"did you mean --train\.gamma.*sections are env, vec, policy, train, sweep"),
        (None, ["stray"], "config overrides look like"),
        (None, ["--train.learning-rate", "fast"], r"expects a float, got 'fast' \(e\.g\. --train\.learning-rate 0\.05\)"),
        (None, ["--train.total-timesteps", "1.5"], "expects an int"),
        (None, ["--train.anneal-lr", "maybe"], "expects a bool"),
        (None, ["--train.horizon"], "needs a value of type int"),
        (None, ["--sweep.train"], r"--sweep\.train is a table, not a value"),
        (None, ["--sweep.metric", "x"], r"--sweep\.metric: a sweep ranks its runs by their score"),
        (None, ["--train.total-timesteps", "-5"], r"--train\.total-timesteps is -5; set it to an int >= 1"),
        (None, ["--train.gamma", "nan"], r"--train\.gamma is nan; set it to a finite float in \[0, 1\]"),
        (None, ["--train.learning-rate", "inf"], r"--train\.learning-rate is inf; .*finite float > 0"),
        (None, ["--train.device", "gpu"], r"--train\.device is 'gpu'; .*torch device"),
        (None, ["--train.optimizer", "sgd"], r"--train\.optimizer is 'sgd'; .*among 'muon', 'adam'"),
        (None, ["--train.run-id", "a/b"], r"--train\.run-id is 'a/b'; .*one directory"),
        (None, ["--policy.hidden-size", "0"], r"--policy\.hidden-size is 0; set it to an int >= 1"),
        (None, ["--vec.num-instances", "4"], r"vec\.num_instances is 4 with vec\.backend 'native'"),
        (None, ["--train.resume"], r"train\.resume is set but train\.run_id is empty"),
        (None, ["--sweep.max-runs", "0"], r"max_runs: expected >= 1"),
        (None, ["--env.nope", "1"], r"unknown config key --env\.nope"),
        ("[train]\ngama = 0.9\n", [], r"unknown key --train\.gama \(in .*user\.toml\).*--train\.gamma"),
        ("[trainer]\ngamma = 0.9\n", [], r"unknown section \[trainer\].*did you mean train"),
        ("train = 3\n", [], r"\[train\] in .*user\.toml must be a table, got 3"),
        ("[train]\ngamma = 'high'\n", [], r"--train\.gamma \(in .*\) expects a float, got 'high'$"),
        ("[train]\ngamma = nan\n", [], r"--train\.gamma \(in .*user\.toml\) is nan"),
        ("[sweep]\nmax_cost = 'big'\n", [], r"--sweep\.max-cost \(in .*\) expects a float or none"),
        ("[sweep]\nmetric = 'x'\n", [], r"--sweep\.metric: a sweep ranks"),
        ("[sweep.train.gamma2]\ndistribution = 'linear'\nmin = 0\nmax = 1\n", [], r"unknown key --sweep\.train\.gamma2 .*did you mean --sweep\.train\.gamma"),
        ("[sweep.train]\ngamma = 3\n", [], r"\.gamma is 3; a searched parameter is a table like \[sweep\.train\.gamma\]"),
        ("[env]\nnope = 1\n", [], r"unknown key --env\.nope \(in .*user\.toml\)"),  # a typed [env]
        ("[train\n", [], r"user\.toml is not valid TOML: .*; fix the file"),
    ],
)  # fmt: skip
def test_every_refusal_names_the_key_and_where(tmp_path, text, overrides, expected) -> None:
    user = tmp_path / "user.toml"
    if text is not None:
        user.write_text(text)
    with pytest.raises(Exception, match=expected) as raised:
        load_config(ENV, user if text is not None else None, overrides)
    assert type(raised.value).__name__ in ("ConfigError", "SweepConfigError")


def test_missing_files_and_envs_are_named(tmp_path) -> None:
    with pytest.raises(ConfigError, match=r"cannot read config .*none\.toml: .*; check the path"):
        load_config(ENV, tmp_path / "none.toml")
    with pytest.raises(EnvNotFoundError, match="no-such-env"):
        load_config("no-such-env")


def test_coerce_reads_every_form() -> None:
    assert coerce("[64, 32]", list[int], "--x") == coerce("64,32", list[int], "--x") == [64, 32]
    assert coerce("1", float, "--x") == 1.0 and isinstance(coerce(3, float, "--x"), float)
    assert coerce("none", float | None, "--x") is None and coerce("1_000", int, "--x") == 1000
    for value, hint, expected in [
        ("[1, 2.5]", list[int], r"--x\[1\] expects an int"),
        (5, list[int], r"expects a list, got 5 \(int\)"),
        (True, int, r"expects an int, got True \(bool\)"),
        ("none", float, "expects a float, got 'none'"),
        (3, str, r"expects a str, got 3 \(int\)"),
    ]:
        with pytest.raises(ConfigError, match=expected):
            coerce(value, hint, "--x")
    parsed = parse_overrides(["--train.seed", "-3", "--train.resume", "--vec.num-instances=2"])
    assert [(o.path, o.value) for o in parsed] == [
        (("train", "seed"), "-3"),
        (("train", "resume"), None),
        (("vec", "num_instances"), "2"),
    ]


def test_sweep_parameters_and_options(tmp_path) -> None:
    config = load_config(ENV, overrides=["--sweep.train.learning-rate.max", "0.05"])
    lr = next(p for p in config.sweep.space if p.name == "train.learning_rate")
    assert lr.max == 0.05
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


def test_with_params_applies_a_suggestion_and_quotes_the_base_value() -> None:
    config = load_config(ENV)
    tuned = config.with_params({"train.learning_rate": 0.01, "train.horizon": 32.0})
    assert tuned.train.learning_rate == 0.01 and tuned.train.horizon == 32
    assert config.with_params({"env.max_steps": 9}).env.max_steps == 9
    # A log scale's point for an int key (total_timesteps searched on a log scale) is rounded.
    budget = config.with_params({"train.total_timesteps": 285872.07}).train.total_timesteps
    assert budget == 285872 and isinstance(budget, int)
    with pytest.raises(ConfigError, match="not a config key"):
        config.with_params({"train.nope": 1})
    with pytest.raises(ConfigError, match=r"--train.gamma is 5.0; .*; default 0.99$"):
        load_config("cartpole").with_params({"train.gamma": 5.0})


def test_range_errors_quote_the_envs_shipped_value(tmp_path) -> None:
    # cartpole.toml ships 99,840 steps and gamma 0.99; the code defaults are 10M and 0.995.
    shipped = load_config("cartpole").train
    assert (shipped.total_timesteps, shipped.gamma) == (99_840, 0.99)
    with pytest.raises(ConfigError, match=r"is -5; set it to an int >= 1 .*; default 99840$"):
        load_config("cartpole", overrides=["--train.total-timesteps", "-5"])
    user = tmp_path / "user.toml"
    user.write_text("[train]\ngamma = 2.0\n")
    with pytest.raises(ConfigError, match=r"gamma \(in .*user.toml\) is 2.0; .*; default 0.99$"):
        load_config("cartpole", user)


@pytest.mark.parametrize("name", [ENV, "gym-CartPole-v1"])
def test_a_printed_config_reads_back_to_itself(tmp_path: Path, name: str) -> None:
    # A file restating the derived and family values leaves their reasons standing.
    config = load_config(name, overrides=["--train.gamma", "0.97"])
    printed = config.to_toml()
    (tmp_path / "c.toml").write_text(printed)
    again = load_config(name, tmp_path / "c.toml")
    assert again.to_toml() == printed and again.sweep_params == config.sweep_params
    assert tomllib.loads(printed)["train"]["gamma"] == 0.97
    assert name == ENV or ("# derived: " in printed and "# family config " in printed)


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_config_resolves_and_builds_its_env(name: str) -> None:
    config = load_config(name)
    assert isinstance(config.sweep, SweepConfig) and len(config.sweep.space) >= 1
    env = env_creator(name)(**config.env_kwargs())
    try:
        assert env.num_agents >= 1
    finally:
        env.close()


@pytest.mark.parametrize("name", ["default", *SHIPPED])
def test_no_shipped_toml_repeats_a_default(name: str) -> None:
    """Defaults live in the dataclasses only; a shipped TOML states what differs from them
    ([env] aside: its defaults are the env's own)."""
    if name == "default":
        path = files("puffer.train.config") / "default.toml"
    else:
        path = config_sources(name, env_creator(name))[-1]
    defaults = {
        "train": TrainConfig(),
        "policy": PolicyConfig(),
        "vec": VecConfig(),
        "sweep": SweepConfig(space=load_config(ENV).sweep.space),
    }
    for section, values in tomllib.loads(path.read_text()).items():
        repeated = [
            k
            for k, v in values.items()
            if section != "env" and not isinstance(v, dict) and getattr(defaults[section], k) == v
        ]
        assert not repeated, f"{path} [{section}] repeats the defaults of {repeated}"


def test_building_the_config_creates_nothing_and_lists_every_key(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = load_config(ENV, overrides=["--train.data-dir", "runs/deep/er"])
    config.train.check_host()
    assert list(tmp_path.iterdir()) == []
    rows = {path: (value, kind, meaning) for path, value, kind, meaning in config.keys()}
    assert rows[("train", "gamma")][:2] == (0.95, "float")
    assert rows[("sweep", "steps_key")][:2] == (None, "str or none")
    assert rows[("env", "max_steps")][:2] == (33, "int")
    assert rows[("env", "num_envs")][2] == "env constructor keyword"


def test_env_keys_are_typed_by_the_envs_own_config(tmp_path: Path) -> None:
    # An Ocean env: its creator's keywords, then its C header's fields with their ranges.
    breakout = load_config("breakout", overrides=["--env.frameskip", "2"])
    header = env_creator("breakout").config_class
    assert dataclasses.is_dataclass(breakout.env) and breakout.env.frameskip == 2
    names = [f.name for f in dataclasses.fields(breakout.env)]
    assert names[-len(dataclasses.fields(header)) :] == [f.name for f in dataclasses.fields(header)]
    assert list(env_defaults(env_creator("breakout"))) == names
    assert "buf" not in names and "render_mode" not in names  # the CLI's to choose
    with pytest.raises(ConfigError, match=r"--env\.frameskip is 0; set it to an int in \[1, "):
        load_config("breakout", overrides=["--env.frameskip", "0"])
    # One class per env, so configs compare equal; it reads as the creator's keywords and
    # pickles (a sweep's process runners receive the config).
    assert load_config("breakout").env == pickle.loads(pickle.dumps(load_config("breakout").env))
    assert dict(**breakout.env) == breakout.env_kwargs() and breakout.env["frameskip"] == 2
    meanings = {path: meaning for path, _, _, meaning in breakout.keys()}
    assert (
        meanings[("env", "frameskip")] == header.__dataclass_fields__["frameskip"].metadata["doc"]
    )
    # A creator that takes any keyword keeps a dict: a file may add one, typed from then on.
    assert env_config_class(env_creator("gym-CartPole-v1")) is None
    assert load_config("gym-CartPole-v1").env == {}
    (tmp_path / "table.toml").write_text("[env.x]\ny = 1\n")
    with pytest.raises(ConfigError, match=r"--env\.x \(in .*\) is a table; env keyword"):
        load_config("gym-Pendulum-v1", tmp_path / "table.toml")
    (tmp_path / "g.toml").write_text("[env]\ng = 9.0\n")
    added = load_config("gym-Pendulum-v1", tmp_path / "g.toml", ["--env.g", "3"])
    assert added.env == {"g": 3.0} and added.env_kwargs() == {"g": 3.0}


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
