"""Defaults derived from an env's spaces: each encoder and head choice on a real Gymnasium env,
built, acted and updated once; the family TOMLs the `gym-<id>` creators name; `puffer config`
says why each key is set."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
import torch
from gymnasium import spaces, wrappers

from puffer.core import GymnasiumPufferEnv, env_creator
from puffer.train import Config, PolicyConfig, PuffeRL, TrainConfig, make_policy
from puffer.train.config import load_config
from puffer.train.config.derive import derive_defaults
from puffer.train.config.sources import config_sources
from puffer.train.policies import (
    CategoricalHead,
    GaussianHead,
    MLPEncoder,
    MultiInputEncoder,
    NatureCNN,
)
from puffer.vector import make as make_vec

_FRAME = spaces.Box(0, 255, (80, 120, 3), np.uint8)


def _rendered(render_only: bool) -> gymnasium.Env:
    return wrappers.AddRenderObservation(
        gymnasium.make("CartPole-v1", render_mode="rgb_array"), render_only=render_only
    )


def _pixels() -> gymnasium.Env:
    """CartPole seen through its rendered frame (every 5th pixel: 80 x 120 x 3 uint8)."""
    return wrappers.TransformObservation(_rendered(True), lambda obs: obs[::5, ::5], _FRAME)


def _pixels_and_state() -> gymnasium.Env:
    """CartPole with a Dict observation: its state vector and its (shrunk) rendered frame."""
    env = _rendered(False)
    space = spaces.Dict({"pixels": _FRAME, "state": env.observation_space["state"]})

    def shrink(obs: dict) -> dict:
        return {"pixels": obs["pixels"][::5, ::5], "state": obs["state"]}

    return wrappers.TransformObservation(env, shrink, space)


def _discretized_walker() -> gymnasium.Env:
    """BipedalWalker's 4 torques as 5 levels each: MultiDiscrete([5 5 5 5]) actions."""
    return wrappers.DiscretizeAction(gymnasium.make("BipedalWalker-v3"), 5, multidiscrete=True)


# (Gymnasium env factory, expected encoder, expected head)
CASES = {
    "cartpole": (lambda: gymnasium.make("CartPole-v1"), MLPEncoder, CategoricalHead),
    "pendulum": (lambda: gymnasium.make("Pendulum-v1"), MLPEncoder, GaussianHead),
    "halfcheetah": (lambda: gymnasium.make("HalfCheetah-v5"), MLPEncoder, GaussianHead),
    "walker-multidiscrete": (_discretized_walker, MLPEncoder, CategoricalHead),
    "cartpole-pixels": (_pixels, NatureCNN, CategoricalHead),
    "dict-pixels-and-state": (_pixels_and_state, MultiInputEncoder, CategoricalHead),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_derived_policy_acts_and_learns_on_a_real_env(case: str) -> None:
    factory, encoder_class, head_class = CASES[case]

    def creator(buf=None, seed=None):
        return GymnasiumPufferEnv(factory(), buf=buf, seed=seed)

    creator.vectorization = "single"  # type: ignore[attr-defined]  # one Gymnasium env
    derived = derive_defaults(creator, {})
    keys = {(d.section, d.key): d.value for d in derived}
    assert keys[("vec", "backend")] == "multiprocessing"
    assert all(d.why for d in derived)
    policy_keys = {k: v for (s, k), v in keys.items() if s == "policy"}
    config = Config(
        train=TrainConfig(
            horizon=8, minibatch_size=16, total_timesteps=32, device="cpu", optimizer="adam"
        ),
        policy=PolicyConfig(**policy_keys, normalize_obs=case in ("pendulum", "halfcheetah")),
    )
    vecenv = make_vec(creator, num_instances=2, seed=0)
    try:
        torch.manual_seed(0)
        policy = make_policy(config.policy, vecenv)
        assert isinstance(policy.encoder, encoder_class)
        assert isinstance(policy.head, head_class)
        before = [p.detach().clone() for p in policy.parameters()]
        trainer = PuffeRL(config, vecenv, policy)
        trainer.collect()
        losses = trainer.train()
        trainer.close()
        assert all(np.isfinite(v) for v in losses.values())
        assert any(not torch.equal(a, b) for a, b in zip(before, policy.parameters(), strict=True))
        # The env received actions inside its action space.
        space = vecenv.single_action_space
        sent = vecenv.buf.actions
        if isinstance(space, spaces.Box):
            assert (sent >= space.low).all() and (sent <= space.high).all()
        else:
            high = space.n if isinstance(space, spaces.Discrete) else np.asarray(space.nvec)
            assert (sent >= 0).all() and (sent < high).all()
    finally:
        vecenv.close()


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("gym-CartPole-v1", "classic-control.toml"),
        ("gym-Pendulum-v1", "classic-control-continuous.toml"),
        ("gym-MountainCarContinuous-v0", "classic-control-continuous.toml"),
        ("gym-LunarLander-v3", "box2d.toml"),
        ("gym-HalfCheetah-v5", "mujoco.toml"),
        ("gym-Blackjack-v1", None),
        ("breakout", None),
    ],
)
def test_gym_ids_fold_their_family_config(name: str, family: str | None) -> None:
    sources = config_sources(name, env_creator(name))
    if name == "breakout":  # an Ocean env declares its own TOML at registration
        assert [source.name for source in sources] == ["breakout.toml"]
        return
    assert sources[0] is derive_defaults
    assert [source.name for source in sources[1:2]] == ([family] if family else [])


def test_a_family_member_toml_layers_over_its_family() -> None:
    # Pusher-v5 ships one key of its own over the MuJoCo family TOML; a sibling without a file
    # of its own keeps the family's value, and an override still wins over the member's.
    assert len(config_sources("gym-Hopper-v5", env_creator("gym-Hopper-v5"))) == 2
    pusher, hopper = load_config("gym-Pusher-v5"), load_config("gym-Hopper-v5")
    assert pusher.notes[("train", "vtrace")] == "env config gym-Pusher-v5.toml"
    assert not pusher.train.vtrace and hopper.train.vtrace
    assert pusher.notes[("policy", "box_actions")] == "env config gym-Pusher-v5.toml"
    assert pusher.policy.box_actions == "clip" and hopper.policy.box_actions == "map"
    assert "mujoco.toml" in pusher.notes[("train", "update_epochs")]
    assert pusher.train.update_epochs == hopper.train.update_epochs == 10
    again = load_config("gym-Pusher-v5", overrides=["--train.vtrace", "true"])
    assert again.train.vtrace and ("train", "vtrace") not in again.notes


def test_config_notes_say_why_and_later_layers_win() -> None:
    config = load_config("gym-Pendulum-v1", overrides=["--train.gamma", "0.98"])
    run, notes = config, config.notes
    assert run.vec.backend == "multiprocessing" and run.vec.num_instances == 8
    assert run.vec.num_instances % run.vec.num_workers == 0
    assert run.policy.normalize_obs and run.train.normalize_reward
    assert notes[("policy", "encoder")].startswith("derived:")
    assert "classic-control-continuous.toml" in notes[("train", "learning_rate")]
    # The override set gamma last: no note claims it.
    assert run.train.gamma == 0.98 and ("train", "gamma") not in notes
    text = config.to_toml()
    assert 'backend = "multiprocessing"  # derived: ' in text
    assert "gamma = 0.98\n" in text


def test_mujoco_family_resolves_for_a_real_mujoco_env() -> None:
    # Builds Hopper-v5 (a member without a TOML of its own) to derive its spaces, so MuJoCo
    # must be installed by the workspace.
    config = load_config("gym-Hopper-v5")
    run, notes = config, config.notes
    assert "mujoco.toml" in notes[("train", "update_epochs")] and run.train.update_epochs == 10
    assert run.policy.normalize_obs and run.train.normalize_reward
    assert notes[("policy", "encoder")].startswith("derived:") and run.policy.encoder == "mlp"


def test_workers_follow_an_overridden_env_count() -> None:
    config = load_config("gym-CartPole-v1", overrides=["--vec.num-instances", "3"])
    assert config.vec.num_instances == 3 and 3 % config.vec.num_workers == 0


def test_envs_with_their_own_toml_get_nothing_derived() -> None:
    config = load_config("breakout")
    assert config.notes == {} and config.vec.backend == "native"


def test_native_envs_without_a_toml_keep_their_own_batch() -> None:
    creator = env_creator("squared")
    derived = derive_defaults(creator, {"num_envs": 2})
    keys = {(d.section, d.key): d.value for d in derived}
    assert keys[("vec", "backend")] == "native" and ("vec", "num_instances") not in keys
