"""Renamed keys (`RENAMED_KEYS`): every way a key enters refuses the old name, naming the new."""

from __future__ import annotations

import pytest

from puffer.train import Config, VecConfig, load_config, train
from puffer.train.config import RENAMED_KEYS, ConfigError

ENV = "squared"
OLD_NEW = [("num_envs", "num_instances"), ("batch_size", "instances_per_recv")]


def _renamed(old: str, new: str) -> str:
    return rf"vec\.{old} was renamed vec\.{new}, apart from .*; set vec\.{new} \("


@pytest.mark.parametrize(("old", "new"), OLD_NEW)
def test_every_way_in_refuses_an_old_key(tmp_path, old: str, new: str) -> None:
    assert RENAMED_KEYS["vec", old] == new and len(RENAMED_KEYS) == len(OLD_NEW)
    path = tmp_path / "mine.toml"
    path.write_text(f'[vec]\nbackend = "serial"\n{old} = 2\n')
    spelled = old.replace("_", "-")
    with pytest.raises(
        ConfigError, match=rf"--vec\.{spelled} \(in .*mine\.toml\): " + _renamed(old, new)
    ):
        load_config(ENV, path)
    for flag in (f"--vec.{spelled}", f"--vec.{old}"):
        with pytest.raises(ConfigError, match=rf"^{flag}: " + _renamed(old, new)):
            load_config(ENV, overrides=[flag, "2"])
    with pytest.raises(ConfigError, match=r"^config section \[vec\]: " + _renamed(old, new)):
        Config.from_dict({"vec": {"backend": "serial", old: 2}})
    with pytest.raises(ConfigError, match=_renamed(old, new)):
        VecConfig(backend="serial", **{old: 2})
    with pytest.raises(ConfigError, match=_renamed(old, new)):
        Config().with_params({f"vec.{old}": 2})
    path.write_text(f'[sweep.vec.{old}]\ndistribution = "int_uniform"\nmin = 1\nmax = 8\n')
    with pytest.raises(ConfigError, match=_renamed(old, new)):
        load_config(ENV, path)
    with pytest.raises(ConfigError, match=_renamed(old, new)):
        load_config(ENV, overrides=[f"--sweep.vec.{spelled}.max", "4"])


def test_train_refuses_an_old_key_before_any_run_dir(tmp_path) -> None:
    with pytest.raises(ConfigError, match=_renamed("num_envs", "num_instances")):
        train(ENV, overrides=["--vec.num-envs", "2", "--train.data-dir", str(tmp_path)])
    assert not any(tmp_path.iterdir())


def test_the_new_keys_work() -> None:
    config = load_config(
        ENV,
        overrides=[
            "--vec.backend", "serial", "--vec.num-instances", "4", "--vec.instances-per-recv", "2",
        ],
    )  # fmt: skip
    assert (config.vec.num_instances, config.vec.instances_per_recv) == (4, 2)
    assert Config.from_dict(config.to_dict()).vec == config.vec
