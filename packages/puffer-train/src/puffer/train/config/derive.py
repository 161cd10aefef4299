"""Defaults for envs without a TOML of their own, derived from the env's spaces and the machine.

A source of the fold (`sources.config_sources`), under a `gym-<id>`'s family TOML. Each key
carries its reason (`puffer config ENV` prints it beside the value): [vec] from whether the
env's registration declares it 'native' (it steps its own batch;
`puffer.core.declared_vectorization`), [policy] from the observation space, [train] PPO in
CleanRL's style.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from gymnasium import spaces

from puffer.core import Vectorization, declared_vectorization, usable_cores
from puffer.train.policies.encoders import is_image

__all__ = ["ENVS_PER_CORE", "Derived", "derive_defaults"]

# Python env copies per core: enough rows per step to amortize the policy's forward and the
# IPC round trip, few enough that 128-step segments still make iterations of a few thousand steps.
ENVS_PER_CORE = 4


@dataclass(frozen=True)
class Derived:
    """One derived key: `section.key = value`, and why (shown by `puffer config`)."""

    section: str
    key: str
    value: Any
    why: str


def _vec(native: bool) -> Iterator[Derived]:
    if native:
        yield Derived("vec", "backend", "native", "the env steps its own batch (takes num_envs)")
        return
    cores = usable_cores()
    yield Derived("vec", "backend", "multiprocessing", "a Python env: one process per core")
    yield Derived("vec", "num_instances", ENVS_PER_CORE * cores, f"{ENVS_PER_CORE} copies per core")
    yield Derived(
        "vec",
        "num_workers",
        cores,
        f"one per core ({cores} here), the largest divisor of num_instances up to that",
    )


def _policy(env: Any) -> Iterator[Derived]:
    shape = tuple(env.single_observation_space.shape)
    layout = getattr(env, "obs_layout", None)
    leaves = [tuple(getattr(leaf, "shape", ())) for leaf in getattr(layout, "leaves", ())]
    if layout is None and is_image(shape):
        yield Derived("policy", "encoder", "nature_cnn", f"image observations {shape}")
        yield Derived("policy", "hidden_size", 512, "NatureCNN's feature width")
    elif any(is_image(leaf) for leaf in leaves):
        yield Derived("policy", "encoder", "multi", "structured observations with an image leaf")
    else:
        what = "structured" if layout is not None else f"vector {shape}"
        yield Derived("policy", "encoder", "mlp", f"{what} observations")
        yield Derived("policy", "hidden_size", 64, "small vector observations: a 64-wide MLP")
        yield Derived("policy", "num_layers", 1, "two hidden layers, as CleanRL/SB3 MLPs")


_PPO = (
    ("optimizer", "adam", "Adam: the Muon default is tuned for big Ocean batches"),
    ("learning_rate", 2.5e-4, "CleanRL's PPO learning rate for Adam"),
    ("adam_beta1", 0.9, "Adam's usual beta1"),
    ("adam_eps", 1e-5, "CleanRL's PPO epsilon"),
    ("horizon", 128, "128-step segments (CleanRL's num_steps)"),
    ("update_epochs", 4, "4 passes over each batch"),
    ("gamma", 0.99, "the usual discount for episodic envs"),
    ("gae_lambda", 0.95, "the usual GAE lambda"),
    ("vf_coef", 0.5, "the usual value-loss weight"),
    ("vf_clip_coef", 1e9, "no value clip (SB3's default): a 0.2 clip lags unscaled returns"),
    ("max_grad_norm", 0.5, "the usual PPO gradient clip"),
    ("prio_alpha", 0.0, "uniform segment sampling: small batches gain nothing from priority"),
    ("reward_clip", 0.0, "rewards as the env gives them, as CleanRL and SB3 train"),
    ("refresh_values", False, "advantages from the rollout's values, as CleanRL and SB3 train"),
)


def _train(env: Any, num_agents: int) -> Iterator[Derived]:
    for key, value, why in _PPO:
        yield Derived("train", key, value, why)
    horizon = next(value for key, value, _ in _PPO if key == "horizon")
    batch = num_agents * horizon
    minibatch = max(horizon, batch // 4)
    yield Derived("train", "minibatch_size", minibatch, f"4 minibatches of the {batch}-step batch")
    if isinstance(env.single_action_space, spaces.Box):
        yield Derived("train", "ent_coef", 0.0, "Box actions: the Gaussian's log-std explores")
    else:
        yield Derived("train", "ent_coef", 0.01, "discrete actions: CleanRL's entropy bonus")


def derive_defaults(creator: Callable[..., Any], env_keys: dict[str, Any]) -> list[Derived]:
    """Derive [vec], [policy] and [train] keys from one instance of the env.

    Args:
        creator: the env creator (`puffer.core.env_creator(name)`); called once with
            `env_keys` to read the spaces, then closed.
        env_keys: the [env] keyword arguments (the creator's defaults and any set so far).

    Returns:
        The derived keys, in section order.
    """
    native = (
        declared_vectorization(creator, getattr(creator, "__qualname__", "the env"))
        is Vectorization.NATIVE
    )
    env = creator(**env_keys)
    try:
        derived = [*_vec(native), *_policy(env)]
        vec = {d.key: d.value for d in derived if d.section == "vec"}
        agents = int(env.num_agents) * int(vec.get("num_instances", 1))
        derived += _train(env, agents)
    finally:
        env.close()
    return derived
