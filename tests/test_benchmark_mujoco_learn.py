"""benchmarks/mujoco_learn.py: RL Zoo's ppo.yml read as data into SB3's keywords (its -v4 entry,
else its -v2 one), anything but literals and named activations refused without running it, and
the table built from stored results."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
import torch.nn as nn
import yaml

# Entries of rl_zoo3 2.9.2's hyperparams/ppo.yml as the file writes them (the anchor and merge
# key, a policy_kwargs string, a -v2-only env).
ZOO_YML = """
Ant-v4: &mujoco-defaults
  normalize: true
  n_timesteps: !!float 1e6
  policy: 'MlpPolicy'

Swimmer-v4:
  <<: *mujoco-defaults
  gamma: 0.9999
  n_envs: 4
  n_steps: 1024
  batch_size: 256
  learning_rate: !!float 6e-4
  gae_lambda: 0.98

HalfCheetah-v4:
  normalize: true
  n_envs: 1
  policy: 'MlpPolicy'
  n_timesteps: !!float 1e6
  batch_size: 64
  n_steps: 512
  learning_rate: 2.0633e-05
  policy_kwargs: "dict(
                    log_std_init=-2,
                    ortho_init=False,
                    activation_fn=nn.ReLU,
                    net_arch=dict(pi=[256, 256], vf=[256, 256])
                  )"

Reacher-v2:
  normalize: "dict(norm_obs=True, norm_reward=False)"
  n_envs: 1
  policy: 'MlpPolicy'
  n_timesteps: !!float 1e6
  learning_rate: lin_1e-3
  gamma: 0.9
"""


@pytest.fixture()
def script(benchmark_script):
    return benchmark_script("mujoco_learn")


def test_the_zoo_entry_becomes_ppo_keywords(script) -> None:
    zoo = yaml.safe_load(ZOO_YML)
    zoo_id, cheetah = script.zoo_hyperparams(zoo, "HalfCheetah")
    assert zoo_id == "HalfCheetah-v4" and cheetah["n_envs"] == 1 and cheetah["normalize"] == {}
    assert cheetah["ppo"]["policy_kwargs"] == {
        "log_std_init": -2,
        "ortho_init": False,
        "activation_fn": nn.ReLU,
        "net_arch": {"pi": [256, 256], "vf": [256, 256]},
    }
    # The budget, policy class and wrappers are not PPO's keywords; every row runs --steps.
    assert not {"n_timesteps", "policy", "n_envs", "normalize"} & set(cheetah["ppo"])
    # Swimmer takes the defaults' normalization through the merge key, its own n_envs, and (as
    # the zoo does) VecNormalize's return scaling at its own discount.
    _, swimmer = script.zoo_hyperparams(zoo, "Swimmer")
    assert swimmer["n_envs"] == 4 and swimmer["normalize"] == {"gamma": 0.9999}
    assert swimmer["ppo"] == {"gamma": 0.9999, "n_steps": 1024, "batch_size": 256,
                              "learning_rate": 6e-4, "gae_lambda": 0.98}  # fmt: skip


def test_a_v2_entry_serves_where_the_zoo_has_no_v4_one(script) -> None:
    zoo = yaml.safe_load(ZOO_YML)
    zoo_id, reacher = script.zoo_hyperparams(zoo, "Reacher")
    assert zoo_id == "Reacher-v2"
    assert reacher["normalize"] == {"norm_obs": True, "norm_reward": False, "gamma": 0.9}
    # lin_X is SB3's linear schedule: X at the start (1 remaining), 0 at the end.
    schedule = reacher["ppo"]["learning_rate"]
    assert schedule(1.0) == pytest.approx(1e-3) and schedule(0.25) == pytest.approx(2.5e-4)
    assert script.zoo_hyperparams(zoo, "Pusher") is None


@pytest.mark.parametrize(
    ("key", "text", "named"),
    [
        ("policy_kwargs", "dict(activation_fn=__import__('os').system('touch {marker}'))",
         "__import__"),
        ("policy_kwargs", "dict(activation_fn=nn.Module)", "nn.Module"),
        ("policy_kwargs", "dict(**{{'a': open('{marker}', 'w')}})", "keywords only"),
        ("normalize", "__import__('os').system('touch {marker}')", "__import__"),
    ],
)  # fmt: skip
def test_a_zoo_string_that_is_not_data_is_refused_unrun(
    key: str, text: str, named: str, tmp_path: Path, script
) -> None:
    marker = tmp_path / "ran"
    zoo = {"Hopper-v4": {"n_envs": 1, key: text.format(marker=marker)}}
    with pytest.raises(ValueError, match=f"Hopper-v4's {key}") as error:
        script.zoo_hyperparams(zoo, "Hopper")
    assert named in str(error.value)
    assert not marker.exists()


def _store(out: Path, env: str, row: str, seed: int, score: float, **extra: object) -> None:
    path = out / env / row / f"seed{seed}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    fields = {"machine": "2-core test CPU", "date": "2026-12-02", "env": env, "row": row,
              "seed": seed, "score": score, "wall": 600.0 + seed * 60, **extra}  # fmt: skip
    path.write_text(json.dumps(fields))


def test_the_table_gives_each_row_over_its_seeds_and_labels_a_tuned_config(
    tmp_path: Path, script
) -> None:
    for seed, (ours, sb3, zoo) in enumerate([(300.0, 50.0, 340.0), (320.0, 60.0, 360.0),
                                             (340.0, 70.0, 380.0)], start=3):  # fmt: skip
        _store(tmp_path, "Swimmer", "puffer", seed, ours, load=[2.0, 2.1])
        _store(tmp_path, "Swimmer", "sb3", seed, sb3, load=[1.9, 2.2])
        _store(tmp_path, "Swimmer", "zoo", seed, zoo, zoo_id="Swimmer-v4")
    _store(tmp_path, "Hopper", "puffer", 3, 2000.0)
    args = argparse.Namespace(envs=["Hopper", "Swimmer", "Ant"], seeds=[3, 4, 5], out=str(tmp_path))
    header, _, hopper, swimmer = script.report(args)  # Ant has no results: no line
    assert header.startswith("| env | ours | SB3 PPO defaults | RL Zoo's tuned PPO |")
    cells = [c.strip() for c in swimmer.split("|")[1:-1]]
    # Swimmer's shipped config includes its own TOML, so ours is labelled tuned.
    assert cells[:4] == ["Swimmer", "ours (tuned): 320.0 ± 20.0 (300.0, 320.0, 340.0)",
                         "60.0 ± 10.0 (50.0, 60.0, 70.0)",
                         "360.0 ± 20.0 (340.0, 360.0, 380.0) (Swimmer-v4)"]  # fmt: skip
    # 320 ± 20 against 60 ± 10 is outside seed noise; against 360 ± 20 it is not.
    assert cells[4].endswith("leads)") and cells[5].startswith("-40 (Welch t -2.4, matches")
    assert cells[6] == "14.0 / 14.0 / 14.0"  # median minutes a run
    assert cells[7] == "3, 4, 5; 2-core test CPU, 2026-12-02, loaded (1-min load 1.9-2.2)"
    # Hopper's config is the family's: no label; rows without results say so.
    assert hopper.split("|")[2:5] == [" 2000.0 (1 seed) ", " not run ", " not run "]
    assert "one row has no score there" in hopper
