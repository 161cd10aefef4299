"""The config layers: defaults, env TOML, --config file, overrides; typing and suggestions."""

from __future__ import annotations

import tomllib

import pytest

from puffer.cli.config import ConfigError, config_names, env_defaults, load_config
from puffer.cli.overrides import coerce, parse_overrides
from puffer.core import EnvNotFoundError, env_creator
from puffer.sweep import parse_sweep_config
from puffer.train.config import PolicyConfig, TrainConfig

ENV = "squared"


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
            "--env.max-steps",
            "20",
        ],
    )
    train = config.run.train
    assert isinstance(train, TrainConfig) and isinstance(config.run.policy, PolicyConfig)
    assert train.learning_rate == 3e-4
    assert train.total_timesteps == 100_000 and isinstance(train.total_timesteps, int)
    assert train.anneal_lr is False and train.resume is True
    assert config.run.env["max_steps"] == 20


def test_layers_apply_in_order(tmp_path) -> None:
    user = tmp_path / "user.toml"
    user.write_text("[train]\nlearning-rate = 0.5\ngamma = 0.9\n[env]\nmax_steps = 7\n")
    config = load_config(ENV, user, ["--train.gamma", "0.8"])
    assert config.run.train.learning_rate == 0.5  # the file beats the shipped TOMLs
    assert config.run.train.gamma == 0.8  # the command line beats the file
    assert config.run.env["max_steps"] == 7


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


def test_unknown_keys_in_files_are_refused(tmp_path) -> None:
    user = tmp_path / "user.toml"
    user.write_text("[train]\ngama = 0.9\n")
    with pytest.raises(ConfigError, match=r"--train\.gama \(in .*user\.toml\).*--train\.gamma"):
        load_config(ENV, user)
    user.write_text("[trainer]\ngamma = 0.9\n")
    with pytest.raises(ConfigError, match=r"unknown section \[trainer\].*did you mean train"):
        load_config(ENV, user)
    user.write_text("[train]\ngamma = 'high'\n")
    with pytest.raises(ConfigError, match=r"--train\.gamma \(in .*\) expects a float"):
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
    assert coerce("[64, 32]", [128], "--x") == [64, 32]
    assert coerce("64,32", [128], "--x") == [64, 32]
    assert coerce("1", 0.5, "--x") == 1.0 and isinstance(coerce("1", 0.5, "--x"), float)
    assert coerce(3, 0.5, "--x") == 3.0
    with pytest.raises(ConfigError, match=r"--x\[1\] expects an int"):
        coerce("[1, 2.5]", [1], "--x")
    with pytest.raises(ConfigError, match=r"expects an int .* got True \(bool\)"):
        coerce(True, 1, "--x")


def test_negative_values_and_bare_flags_parse() -> None:
    parsed = parse_overrides(["--train.seed", "-3", "--train.resume", "--vec.num-envs=2"])
    assert [(o.path, o.value) for o in parsed] == [
        (("train", "seed"), "-3"),
        (("train", "resume"), None),
        (("vec", "num_envs"), "2"),
    ]


def test_sweep_parameters_are_overridable_and_parse() -> None:
    config = load_config(ENV, overrides=["--sweep.train.learning-rate.max", "0.05"])
    sweep = parse_sweep_config(config.sweep_section())
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
    assert tuned.run.train.learning_rate == 0.01 and tuned.run.train.horizon == 32
    with pytest.raises(ConfigError, match="not a config key"):
        config.with_params({"train.nope": 1})


def test_resolved_config_round_trips_through_toml(tmp_path) -> None:
    config = load_config(ENV, overrides=["--train.gamma", "0.97"])
    path = tmp_path / "resolved.toml"
    path.write_text(config.to_toml())
    again = load_config(ENV, path)
    assert again.data == config.data
    assert tomllib.loads(config.to_toml())["train"]["gamma"] == 0.97


def test_unknown_env_is_reported_by_the_registry() -> None:
    with pytest.raises(EnvNotFoundError, match="no-such-env"):
        load_config("no-such-env")


def test_env_defaults_read_the_creator() -> None:
    defaults = env_defaults(env_creator(ENV))
    assert "buf" not in defaults and "render_mode" not in defaults
    assert isinstance(defaults["max_steps"], int)


@pytest.mark.parametrize("name", config_names())
def test_every_shipped_config_resolves_and_builds_its_env(name: str) -> None:
    config = load_config(name)
    parse_sweep_config(config.sweep_section())
    env = env_creator(name)(**config.run.env)
    try:
        assert env.num_agents >= 1
    finally:
        env.close()
