"""The typed config checks every value when it is built, from Python as from the CLI."""

from __future__ import annotations

import dataclasses
import doctest
import importlib
import math
import os
from pathlib import Path

import numpy as np
import pytest
import torch

from puffer.train import Config, PolicyConfig, TrainConfig, VecConfig, train
from puffer.train.config import ConfigError, check


@pytest.mark.parametrize(
    ("section", "kwargs", "expected"),
    [
        (TrainConfig, {"learning_rate": "fast"}, r"TrainConfig\.learning_rate is 'fast'; set it to a finite float > 0"),
        (TrainConfig, {"total_timesteps": -5}, r"TrainConfig\.total_timesteps is -5; set it to an int >= 1"),
        (TrainConfig, {"gamma": math.nan}, r"TrainConfig\.gamma is nan; set it to a finite float in \[0, 1\] \(discount factor\); default 0\.995"),
        (TrainConfig, {"max_grad_norm": math.inf}, r"max_grad_norm is inf; .*finite float > 0"),
        (TrainConfig, {"horizon": 8.0}, r"TrainConfig\.horizon is 8\.0; set it to an int >= 1"),
        (TrainConfig, {"anneal_lr": 1}, r"anneal_lr is 1; set it to true or false"),
        (TrainConfig, {"seed": True}, r"TrainConfig\.seed is True; set it to an int >= 0"),
        (TrainConfig, {"device": "gpu"}, r"device is 'gpu'; set it to a string naming a torch device"),
        (TrainConfig, {"run_id": "../x"}, r"run_id is '\.\./x'; .*naming one directory"),
        (TrainConfig, {"resume": True}, r"train\.resume is set but train\.run_id is empty"),
        (TrainConfig, {"replay_ratio": 2.0, "update_epochs": 3}, r"both set the minibatches per iteration"),
        (PolicyConfig, {"recurrent": "gru"}, r"recurrent is 'gru'; .*among 'none', 'lstm', 'mingru'"),
        (VecConfig, {"backend": "threads"}, r"backend is 'threads'; .*among 'native', 'serial'"),
        (VecConfig, {"num_instances": 4}, r"vec\.num_instances is 4 with vec\.backend 'native'"),
        (Config, {"train": {"gamma": 0.9}}, r"Config\.train is \{'gamma': 0\.9\}; pass a TrainConfig"),
        (Config, {"env": [("num_envs", 2)]}, r"Config\.env is \[\('num_envs', 2\)\]; pass a dict"),
        (Config.from_dict, {"data": {"train": {"gama": 0.9}}}, r"\[train\] has unknown keys \['gama'\]"),
        (Config.from_dict, {"data": {"train": {"gamma": -1}}}, r"TrainConfig\.gamma is -1"),
    ],
)  # fmt: skip
def test_bad_values_raise_when_built(section: type, kwargs: dict, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected):
        section(**kwargs)


def test_values_are_stored_as_their_field_type_and_defaults_pass() -> None:
    config = TrainConfig(learning_rate=1, horizon=np.int64(8), gamma=np.float32(0.5))
    assert type(config.learning_rate) is float and config.learning_rate == 1.0
    assert type(config.horizon) is int and type(config.gamma) is float
    assert check(TrainConfig, "gamma", 1, where="--train.gamma") == 1.0
    with pytest.raises(ConfigError, match=r"^--train\.gamma is 2"):
        check(TrainConfig, "gamma", 2, where="--train.gamma")
    for section in (TrainConfig, PolicyConfig, VecConfig):
        for spec in dataclasses.fields(section):
            assert check(section, spec.name, spec.default) == spec.default
            assert spec.metadata["help"], f"{section.__name__}.{spec.name} has no meaning"
    config = Config(train=TrainConfig(gamma=0.9), env={"num_envs": 2})
    assert Config.from_dict(config.to_dict()) == config


_NO_SUCH_DEVICE = "cuda:99" if torch.cuda.is_available() else "cuda"


def test_check_host_refuses_a_missing_device_or_data_dir_and_creates_nothing(tmp_path) -> None:
    with pytest.raises(ConfigError, match=rf"train\.device is '{_NO_SUCH_DEVICE}' but this"):
        TrainConfig(device=_NO_SUCH_DEVICE).check_host()
    TrainConfig(device="cpu", data_dir=str(tmp_path / "not" / "yet")).check_host()
    assert list(tmp_path.iterdir()) == []
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(ConfigError, match=r"a-file is not a directory; point it at a writable"):
        TrainConfig(data_dir=str(blocker / "runs")).check_host()
    # procfs refuses new entries whatever the permission bits say, even to root.
    with pytest.raises(ConfigError, match=r"/proc is not writable"):
        TrainConfig(data_dir="/proc/puffer-runs").check_host()
    if os.geteuid() == 0:
        return  # root writes anywhere; the permission case needs an ordinary user
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(ConfigError, match=r"locked is not writable"):
        TrainConfig(data_dir=str(locked / "runs")).check_host()


def test_train_fails_before_building_anything(tmp_path: Path) -> None:
    config = Config(
        train=TrainConfig(device=_NO_SUCH_DEVICE, data_dir=str(tmp_path / "runs")),
        vec=VecConfig(backend="serial", num_instances=2),
    )
    with pytest.raises(ConfigError, match="CUDA device"):
        train("gym-CartPole-v1", config)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("module", ["keys", "fold", "whole"])
def test_docstring_examples_run(module: str) -> None:
    loaded = importlib.import_module(f"puffer.train.config.{module}")
    result = doctest.testmod(loaded, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
