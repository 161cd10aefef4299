"""`Policy`: encode -> (recurrent core) -> decode into an action head and a value."""

from __future__ import annotations

import functools
import importlib

import numpy as np
import torch
from gymnasium import spaces
from torch import Tensor, nn

from puffer.core import APIUsageError
from puffer.kernels import Linear, linear
from puffer.train.config.sections import BOX_ACTIONS, PolicyConfig
from puffer.train.policies.encoders import (
    IMPALA,
    MLPEncoder,
    MultiInputEncoder,
    NatureCNN,
    layer_init,
)
from puffer.train.policies.heads import ActionHead, make_head
from puffer.train.policies.recurrent import LSTMCore, MinGRUCore

__all__ = ["Policy", "make_policy", "native_bfloat16", "pufferlib_init"]

State = tuple[Tensor, ...]

# `PolicyConfig.encoder_dtype` names -> `Policy(encoder_dtype=...)` (None: native bfloat16).
ENCODER_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "auto": None}


class Policy(nn.Module):
    """An actor-critic over one encoder, an optional recurrent core and two heads, or, with a
    separate `critic`, an actor over the encoder and a value over a second network.

    Args:
        encoder: module mapping (B, *obs_shape) rows to (B, hidden).
        head: the action head (`puffer.train.policies.heads`).
        hidden_size: encoder output width.
        core: an `LSTMCore`, a `MinGRUCore`, or None for a feed-forward policy.
        encoder_dtype: torch.float32, or torch.bfloat16 to run the encoder under
            `torch.autocast` (its output is cast back, so the core and heads see float32), or
            None for bfloat16 where the observations' device computes it natively
            (`native_bfloat16`) and float32 elsewhere.
        critic: None (the value reads the encoder's, or the core's, hidden vector), or an
            encoder of its own, (B, *obs_shape) -> (B, hidden_size), that the value reads, so
            that the value loss's gradients do not move the actor's features (SB3's MlpPolicy
            for continuous actions). Feed-forward policies only.
        box_actions: how a rollout sends this policy's actions to a Box with finite bounds:
            "map" ([-1, 1] clipped and mapped onto [low, high]) or "clip" (clipped to
            [low, high]); `PolicyConfig.box_actions`. Other action spaces ignore it.

    Every parameter, the heads included, takes the optimizer's one rule (`puffer.train.optim`).
    """

    def __init__(
        self,
        encoder: nn.Module,
        head: ActionHead,
        hidden_size: int,
        core: nn.Module | None = None,
        encoder_dtype: torch.dtype | None = torch.float32,
        critic: nn.Module | None = None,
        box_actions: str = "map",
    ):
        super().__init__()
        if box_actions not in BOX_ACTIONS:
            raise APIUsageError(f"Policy: box_actions is {box_actions!r}; use one of {BOX_ACTIONS}")
        if critic is not None and core is not None:
            raise APIUsageError(
                "Policy: a separate critic is for feed-forward policies; with a recurrent core "
                "the value reads the core's output (policy.critic = 'shared')"
            )
        if encoder_dtype not in (torch.float32, torch.bfloat16, None):
            raise APIUsageError(
                f"Policy: encoder_dtype is {encoder_dtype}; use torch.float32, torch.bfloat16 "
                "or None (bfloat16 where the device computes it natively)"
            )
        self.encoder = encoder
        self.encoder_dtype = encoder_dtype
        self.core = core
        self.head = head
        self.critic = critic
        self.box_actions = box_actions
        self.value = layer_init(Linear(hidden_size, 1), std=1.0)

    @property
    def is_recurrent(self) -> bool:
        return self.core is not None

    def initial_state(self, n: int, device: torch.device | str = "cpu") -> State:
        """Zero state for `n` agents; `()` for a feed-forward policy."""
        return () if self.core is None else self.core.initial_state(n, torch.device(device))

    def observe(self, obs: Tensor, masks: Tensor) -> None:
        """Merge rollout observations (N, *obs_shape) into the encoder's running statistics,
        rows weighted by `masks` (N,) so padded agents count for nothing; no-op for encoders
        without them. The trainer's rollout calls it; evaluation does not."""
        observe = getattr(self.encoder, "observe", None)
        if observe is not None:
            observe(obs, masks)

    def forward_eval(self, obs: Tensor, state: State) -> tuple[Tensor, Tensor, State]:
        """One rollout step.

        Args:
            obs: (N, *obs_shape) observation rows.
            state: the recurrent state for these N agents, already cut at episode ends.

        Returns:
            (head params (N, P), value (N,) float32, new state).
        """
        hidden = self._encode(obs)
        if self.core is not None:
            hidden, state = self.core.step(hidden, state)
        if self.critic is not None:
            return self.head(hidden), self._criticize(obs), state
        params, value = self._decode(hidden)
        return params, value, state

    def forward_train(
        self, obs: Tensor, state: State, starts: Tensor | None
    ) -> tuple[Tensor, Tensor]:
        """Replay whole segments.

        Args:
            obs: (B, T, *obs_shape) rows of B segments.
            state: the state stored at each segment start (batch B).
            starts: (B, T) bool, True where an episode began at t (ignored for t = 0); a
                recurrent policy needs it, a feedforward one takes None.

        Returns:
            (head params (B, T, P), value (B, T)).
        """
        batch, steps = obs.shape[:2]
        rows = obs.reshape(batch * steps, *obs.shape[2:])
        hidden = self._encode(rows).view(batch, steps, -1)
        if self.critic is not None:
            return self.head(hidden), self._criticize(rows).view(batch, steps)
        if self.core is not None:
            if starts is None:
                raise APIUsageError(
                    "forward_train: a recurrent policy needs `starts` ((B, T) bool, where "
                    "episodes began) to cut its state; pass RolloutBuffer.starts(idx)"
                )
            hidden = self.core.sequence(hidden, state, starts)
        return self._decode(hidden)

    def _encode(self, obs: Tensor, encoder: nn.Module | None = None) -> Tensor:
        """(N, hidden) float32 from (N, *obs_shape) observations, in `encoder_dtype`, through
        `encoder` (default: the actor's).

        Rollout and training both pass here, so the log-probabilities a step was sampled with
        and the ones the loss recomputes come from the same arithmetic; the heads stay float32
        because PPO's ratio compares those log-probabilities to within its clip. The cast
        cache is off, as CUDA-graph capture (`train.cuda_graphs`) requires; each autocast
        region is one encoder pass, so the cache would save nothing.
        """
        encoder = self.encoder if encoder is None else encoder
        dtype = self.encoder_dtype
        if dtype is None:
            dtype = torch.bfloat16 if native_bfloat16(obs.device) else torch.float32
        if dtype == torch.float32:
            return encoder(obs)
        with torch.autocast(obs.device.type, dtype=dtype, cache_enabled=False):
            hidden = encoder(obs)
        return hidden.float()

    def _criticize(self, obs: Tensor) -> Tensor:
        """(N,) values of (N, *obs_shape) observations through the separate critic."""
        return self.value(self._encode(obs, self.critic)).squeeze(-1)

    def _decode(self, hidden: Tensor) -> tuple[Tensor, Tensor]:
        """(head params (..., P), value (...)) from hidden (..., H).

        A head whose params are one Linear of the hidden vector shares a product with the
        value: one (H, P + 1) product instead of a (H, P) and an (H, 1) one, and in backward one
        gradient for the hidden vector instead of two that are then summed.
        """
        layer = self.head.params_layer
        if layer is None:
            return self.head(hidden), self.value(hidden).squeeze(-1)
        weight = torch.cat([layer.weight, self.value.weight])
        bias = torch.cat([layer.bias, self.value.bias])
        out = linear(hidden, weight, bias)
        return out[..., :-1], out[..., -1]

    def forward(self, obs: Tensor, state: State = ()) -> tuple[Tensor, Tensor, State]:
        return self.forward_eval(obs, state)


def make_policy(config: PolicyConfig, env) -> Policy:
    """Build the policy `config` describes for `env` (anything with `single_observation_space`,
    `single_action_space` and optional `obs_layout` / `action_layout`).

    Example:
        >>> from gymnasium import spaces
        >>> class Env:
        ...     single_observation_space = spaces.Box(-1, 1, (4,))
        ...     single_action_space = spaces.Discrete(2)
        >>> policy = make_policy(PolicyConfig(hidden_size=16), Env())
        >>> logits, value, state = policy.forward_eval(torch.zeros(3, 4), ())
        >>> tuple(logits.shape), tuple(value.shape)
        ((3, 2), (3,))
    """
    if config.network == "puffernet":
        # Imported here: PufferNet is built from `Policy`, which this module defines.
        from puffer.train.policies.puffernet import make_puffernet

        return make_puffernet(config, env)
    hidden = config.hidden_size
    if config.critic == "separate" and config.recurrent != "none":
        raise APIUsageError(
            f"policy.critic is 'separate' with policy.recurrent {config.recurrent!r}; a separate "
            "critic is feed-forward and would not see the core's memory: use critic = 'shared'"
        )
    encoder = _make_encoder(config, env)
    critic = None
    if config.critic == "separate":
        critic = _make_encoder(config, env)
        if config.normalize_obs:
            # One set of running statistics, which `Policy.observe` updates through the actor.
            critic.normalizer = encoder.normalizer
    cores = {
        "none": lambda: None,
        "lstm": lambda: LSTMCore(hidden),
        "mingru": lambda: MinGRUCore(hidden, config.mingru_layers),
    }
    if config.recurrent not in cores:
        raise APIUsageError(f"policy.recurrent is {config.recurrent!r}; use one of {sorted(cores)}")
    head = make_head(
        hidden,
        env.single_action_space,
        getattr(env, "action_layout", None),
        config.log_std_init,
    )
    core = cores[config.recurrent]()
    encoder_dtype = ENCODER_DTYPES[config.encoder_dtype]
    policy = Policy(encoder, head, hidden, core, encoder_dtype, critic, config.box_actions)
    return pufferlib_init(policy) if config.init == "pufferlib" else policy


def _make_encoder(config: PolicyConfig, env) -> nn.Module:
    """The encoder `config.encoder` names for `env`'s observations, (B, *obs_shape) ->
    (B, hidden_size)."""
    obs_space: spaces.Box = env.single_observation_space
    obs_shape = tuple(obs_space.shape)
    hidden = config.hidden_size
    obs_layout = getattr(env, "obs_layout", None)
    obs_dtype = torch.from_numpy(np.zeros(0, dtype=obs_space.dtype)).dtype
    if config.normalize_obs and config.encoder != "mlp":
        raise APIUsageError(
            f"policy.normalize_obs is set with policy.encoder {config.encoder!r}; observation "
            "normalization is for the 'mlp' encoder (images are scaled by /255 already)"
        )
    if config.activation != "gelu" and config.encoder != "mlp":
        raise APIUsageError(
            f"policy.activation is {config.activation!r} with policy.encoder "
            f"{config.encoder!r}; the activation is the 'mlp' encoder's: leave it 'gelu'"
        )
    if config.encoder == "mlp":
        return MLPEncoder(
            obs_shape,
            hidden,
            config.num_layers,
            obs_layout,
            obs_dtype,
            config.normalize_obs,
            config.activation,
        )
    if config.encoder == "multi":
        if obs_layout is None:
            raise APIUsageError(
                "policy.encoder is 'multi' but the env's observations are not structured (no "
                "obs_layout); use 'mlp', 'nature_cnn' or 'impala'"
            )
        return MultiInputEncoder(obs_shape, obs_layout, obs_dtype, hidden, config.cnn_channels)
    if config.encoder == "nature_cnn":
        return NatureCNN(obs_shape, hidden, config.cnn_channels)
    if config.encoder == "impala":
        return IMPALA(obs_shape, hidden, config.cnn_channels // 2)
    if ":" in config.encoder:
        return _imported(config.encoder)(env, config)
    raise APIUsageError(
        f"policy.encoder is {config.encoder!r}; use 'mlp', 'nature_cnn', 'impala' or 'multi'"
    )


def pufferlib_init(policy: Policy) -> Policy:
    """Re-initialize `policy` as PufferLib 3.0 does (`policy.init = "pufferlib"`); returns it.

    With a recurrent core, as its LSTM wrapper: every weight outside the core orthogonal at gain
    1 and every bias 0 (the action head too, which starts far from uniform), an LSTM at torch's
    default (uniform in ±1/sqrt(hidden)). Without one, as its default policy: the encoder's (and
    a separate critic's) layers at torch's default; the heads keep ours, which are its (action
    0.01, value 1). On pong at its config this init learns where ours stalls (puffer-ocean
    README, learning beside PufferLib).
    """
    if policy.core is None:
        for network in (policy.encoder, policy.critic):
            for module in () if network is None else network.modules():
                if module is not network and hasattr(module, "reset_parameters"):
                    module.reset_parameters()
        return policy
    with torch.no_grad():
        for name, param in policy.named_parameters():
            if name.startswith("core."):
                continue
            if "bias" in name:
                param.zero_()
            elif param.ndim >= 2:
                nn.init.orthogonal_(param, 1.0)
    for module in policy.core.modules():
        if isinstance(module, nn.LSTM):
            module.reset_parameters()
    return policy


@functools.cache
def native_bfloat16(device: torch.device) -> bool:
    """Whether `device` computes bfloat16 products natively: an NVIDIA GPU from Ampere on, or
    a CPU with AVX512-BF16 or AMX. Elsewhere bfloat16 is emulated and slower than float32."""
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported(including_emulation=False)
    if device.type == "cpu":
        return torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported()
    return False


def _imported(path: str):
    """The encoder factory named `module:attribute` (a family's own encoder, e.g. NetHack's)."""
    module, _, name = path.partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as error:
        raise APIUsageError(
            f"policy.encoder is {path!r}, which does not import ({error}); name an installed "
            "'module:factory' or use 'mlp', 'nature_cnn' or 'impala'"
        ) from None
