"""Renamed keys (`RENAMED_KEYS`): every way a key enters refuses the old name, naming the new."""

from __future__ import annotations

import pytest

from puffer.train import Config, VecConfig, load_config, train
from puffer.train.config import RENAMED_KEYS, ConfigError

ENV = "squared"
OLD_NEW = [("num_envs", "num_instances"), ("batch_size", "instances_per_recv")]


def _renamed(old: str, new: str) -> str:
    return rf"vec\.{old} was renamed vec\.{new}, apart from .*; set vec\.{new} \("


def test_the_renames() -> None:
    assert {("vec", old): new for old, new in OLD_NEW} == RENAMED_KEYS


@pytest.mark.parametrize(("old", "new"), OLD_NEW)
def test_a_toml_file_refuses_an_old_key(tmp_path, old: str, new: str) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(f'[vec]\nbackend = "serial"\n{old} = 2\n')
    with pytest.raises(ConfigError, match=rf"--vec\.{old.replace('_', '-')} \(in .*mine\.toml\): "):
        load_config(ENV, path)
    with pytest.raises(ConfigError, match=_renamed(old, new)):
        load_config(ENV, path)


@pytest.mark.parametrize(("old", "new"), OLD_NEW)
@pytest.mark.parametrize("spelling", ["-", "_"])
def test_an_override_refuses_an_old_key(old: str, new: str, spelling: str) -> None:
    flag = f"--vec.{old.replace('_', spelling)}"
    with pytest.raises(ConfigError, match=rf"^{flag}: " + _renamed(old, new)):
        load_config(ENV, overrides=[flag, "2"])


def test_train_refuses_an_old_key_in_its_overrides(tmp_path) -> None:
    with pytest.raises(ConfigError, match=_renamed("num_envs", "num_instances")):
        train(ENV, overrides=["--vec.num-envs", "2", "--train.data-dir", str(tmp_path)])
    assert not any(tmp_path.iterdir())  # refused before any run directory exists


@pytest.mark.parametrize(("old", "new"), OLD_NEW)
def test_python_refuses_an_old_key(old: str, new: str) -> None:
    with pytest.raises(ConfigError, match=r"^config section \[vec\]: " + _renamed(old, new)):
        Config.from_dict({"vec": {"backend": "serial", old: 2}})
    with pytest.raises(ConfigError, match=_renamed(old, new)):
        VecConfig(backend="serial", **{old: 2})
    with pytest.raises(ConfigError, match=_renamed(old, new)):
        Config().with_params({f"vec.{old}": 2})


def test_a_searched_parameter_refuses_an_old_key(tmp_path) -> None:
    path = tmp_path / "sweep.toml"
    path.write_text('[sweep.vec.num_envs]\ndistribution = "int_uniform"\nmin = 1\nmax = 8\n')
    with pytest.raises(ConfigError, match=_renamed("num_envs", "num_instances")):
        load_config(ENV, path)
    with pytest.raises(ConfigError, match=_renamed("batch_size", "instances_per_recv")):
        load_config(ENV, overrides=["--sweep.vec.batch-size.max", "4"])


def test_the_new_keys_work() -> None:
    config = load_config(
        ENV,
        overrides=[
            "--vec.backend", "serial", "--vec.num-instances", "4", "--vec.instances-per-recv", "2",
        ],
    )  # fmt: skip
    assert (config.vec.num_instances, config.vec.instances_per_recv) == (4, 2)
    assert Config.from_dict(config.to_dict()).vec == config.vec
