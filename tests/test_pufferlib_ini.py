"""A PufferLib user's habits (issue 61 item 2): `puffer_<env>` names and PufferLib's own `.ini`
configs. The fixtures in tests/data/pufferlib/ are PufferLib's files as shipped (README there)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from puffer.cli.main import app
from puffer.core import env_creator
from puffer.train.config import ConfigError, load_config
from puffer.train.pufferlib_ini import PUFFERLIB_CONSTANTS, PufferLibKeysNotRead

ROOT = Path(__file__).resolve().parents[1]
PL3_BREAKOUT = ROOT / "tests/data/pufferlib/3.0.0/breakout.ini"
PL4_BREAKOUT = ROOT / "tests/data/pufferlib/4.0/breakout.ini"

# The keys PufferLib 3.0's breakout.ini sets, in ours (its [vec] num_envs x [env] num_envs is
# env.num_envs; bptt_horizon is horizon; adam_beta1 is muon_momentum under the 'average'
# rule; rnn_name Recurrent is the LSTM; 3.0 counts minibatches by update_epochs).
PL3_KEYS = {
    "env": ["num_envs", "frameskip"],
    "policy": ["network", "recurrent", "hidden_size"],
    "train": (
        "total_timesteps horizon minibatch_size update_epochs replay_ratio learning_rate gamma "
        "gae_lambda clip_coef vf_coef vf_clip_coef max_grad_norm ent_coef muon_momentum "
        "muon_momentum_rule prio_alpha prio_beta0 vtrace_rho_clip vtrace_c_clip"
    ).split(),
}


def _quiet_load(env: str, config_file: Path | str | None = None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PufferLibKeysNotRead)
        return load_config(env, config_file)


def _value(config, section: str, key: str):
    return config.env_kwargs()[key] if section == "env" else getattr(getattr(config, section), key)


def test_pufferlib3_breakout_ini_resolves_to_our_pufferlib3_config() -> None:
    ini = _quiet_load("breakout", PL3_BREAKOUT)
    toml = _quiet_load("breakout", ROOT / "benchmarks/configs/pufferlib3_breakout.toml")
    for section, keys in PL3_KEYS.items():
        for key in keys:
            theirs, ours = _value(ini, section, key), _value(toml, section, key)
            # The TOML rounds 3.0's swept values to four figures; the .ini keeps all of them.
            expected = pytest.approx(ours, rel=1e-3) if isinstance(ours, float) else ours
            assert theirs == expected, (section, key, theirs, ours)
    assert ini.train.learning_rate == 0.044482546441415506  # the file's own digits
    # 3.0's rollout starts each epoch's LSTM state from zeros (its evaluate() zeroes lstm_h
    # and lstm_c); the TOML keeps 'carry', our breakout's setting before 2026-12-01.
    assert ini.train.recurrent_state == "zero"


def test_pufferlib4_breakout_ini_resolves_to_our_breakout_toml() -> None:
    """Our breakout.toml is PufferLib 4.0's breakout.ini: every trained key agrees."""
    ini, shipped = _quiet_load("breakout", PL4_BREAKOUT), _quiet_load("breakout")
    assert (ini.env, ini.policy, ini.train) == (shipped.env, shipped.policy, shipped.train)
    assert ini.sweep_params["env.frameskip"] == {
        "distribution": "int_uniform",
        "min": 1,
        "max": 8,
        "mean": 4,
    }


def test_pufferlib3_adam_keys_follow_its_optimizer(tmp_path: Path) -> None:
    path = tmp_path / "adam.ini"
    path.write_text("[train]\noptimizer = adam\nadam_beta1 = 0.8\nadam_eps = 1e-5\n")
    train = _quiet_load("breakout", path).train
    assert (train.optimizer, train.adam_beta1, train.adam_eps) == ("adam", 0.8, 1e-5)
    path.write_text("[train]\nadam_beta1 = 0.8\n")  # 3.0's default optimizer is Muon
    train = _quiet_load("breakout", path).train
    assert (train.muon_momentum, train.muon_momentum_rule) == (0.8, "average")


def test_keys_that_change_nothing_trained_are_named_with_why() -> None:
    with pytest.warns(PufferLibKeysNotRead) as caught:
        load_config("breakout", PL4_BREAKOUT)
    (message,) = [str(w.message) for w in caught]
    for key in ("[vec] num_buffers", "[train] beta2", "[train] eps", "frameskip] scale"):
        assert key in message, message
    assert "[train] beta1" not in message  # mapped: muon_momentum


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        ("[base]\nenv_name = puffer_breakout\n[env]\nwidth = 600\n", "[env] width = 600"),
        ("[env]\nbounce = 2\n", "[env] bounce = 2"),
        ("[base]\nenv_name = puffer_pong\n", "configures puffer_pong, not breakout"),
        ("[base]\npolicy_name = MyPolicy\n", "[base] policy_name = 'MyPolicy'"),
        ("[train]\nprecision = float16\n", "--train.precision (in"),
        ("[train]\nmin_lr_ratio = 0.1\n", "[train] min_lr_ratio = 0.1"),
        ("[train]\nadam_beta1 = 0.9\nbeta1 = 0.9\n", "mixes PufferLib 3.0 keys"),
        ("[train]\nwarmup = 3\n", "[train] warmup = 3"),
        ("[sweep]\nearly_stop_quantile = 0.3\n", "[sweep] early_stop_quantile = 0.3"),
        ("[sweep.vec.num_envs]\nmin = 1\n", "[sweep.vec.num_envs]"),
        ("not an ini\n", "is no PufferLib .ini"),
    ],
)
def test_what_has_no_counterpart_is_refused_by_name(
    tmp_path: Path, text: str, refused: str
) -> None:
    path = tmp_path / "bad.ini"
    path.write_text(text)
    with pytest.raises(ConfigError) as error:
        load_config("breakout", path)
    assert refused in str(error.value), str(error.value)


def test_breakouts_pufferlib_constants_are_its_header_constants() -> None:
    header = (ROOT / "packages/puffer-ocean/csrc/breakout/breakout.h").read_text()
    defined = {k: float(v) for k, v in re.findall(r"#define BREAKOUT_(\w+) ([\d.]+)f", header)}
    defined |= {k: float(v) for k, v in re.findall(r"BREAKOUT_(COLS|ROWS) = (\d+)", header)}
    fixed = PUFFERLIB_CONSTANTS["breakout"]
    pairs = {
        "width": "WIDTH", "height": "HEIGHT", "paddle_width": "PADDLE_WIDTH",
        "initial_paddle_width": "PADDLE_WIDTH", "paddle_height": "PADDLE_HEIGHT",
        "ball_width": "BALL", "ball_height": "BALL", "brick_width": "BRICK_WIDTH",
        "brick_height": "BRICK_HEIGHT", "brick_rows": "ROWS", "brick_cols": "COLS",
        "initial_ball_speed": "SERVE_SPEED", "max_ball_speed": "MAX_SPEED",
        "paddle_speed": "PADDLE_SPEED",
    }  # fmt: skip
    for key, name in pairs.items():
        assert fixed[key] == defined[name], key


def test_a_pufferlib_name_resolves_to_ours_with_a_note() -> None:
    assert env_creator("puffer_breakout") is env_creator("breakout")
    with pytest.raises(Exception, match="no env named 'puffer_nosuchenv'"):
        env_creator("puffer_nosuchenv")
    runner = CliRunner()
    theirs = runner.invoke(app, ["config", "puffer_breakout"])
    ours = runner.invoke(app, ["config", "breakout"])
    assert theirs.exit_code == 0, theirs.output
    note = "note: puffer_breakout is PufferLib's name for breakout; using breakout"
    assert note in theirs.stderr and theirs.stdout == ours.stdout  # the TOML stays clean


def test_puffer_train_puffer_breakout_trains_ours(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "train", "puffer_breakout", "--no-dashboard", "--progress", "0",
            "--env.num-envs", "8", "--train.minibatch-size", "512",
            "--train.total-timesteps", "512", "--train.data-dir", str(tmp_path),
            "--train.device", "cpu", "--train.torch-threads", "1",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "note: puffer_breakout is PufferLib's name for breakout" in result.output
    assert "training breakout on cpu" in result.output
    assert [p.name for p in tmp_path.iterdir()] == ["breakout"]


def test_pufferlib3_bfloat16_precision_is_ours(tmp_path: Path) -> None:
    """3.0's `precision = bfloat16` autocasts its policy's passes on float32 weights, as
    `train.precision` 'bfloat16' does."""
    path = tmp_path / "bf16.ini"
    path.write_text("[train]\nbptt_horizon = 64\nprecision = bfloat16\n")
    assert load_config("breakout", path).train.precision == "bfloat16"
