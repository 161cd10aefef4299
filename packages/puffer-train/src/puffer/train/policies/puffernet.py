"""PufferNet, PufferLib 4.0's policy (its `src/models.cu`), built from our parts.

    obs (N, D) -> x = W_enc obs                     bias-free linear encoder, no nonlinearity
    per layer:  [h~, g, p] = W_l x                  bias-free, (3H, H)
                h_t = (1 - sigmoid(g)) h_{t-1} + sigmoid(g) phi(h~)     MinGRU
                x = sigmoid(p) h_t + (1 - sigmoid(p)) x                 highway gate
    [params, value] = W_dec x                       one bias-free (P + 1, H) decoder

phi(z) = z + 1/2 for z >= 0, sigmoid(z) below (positive, continuous). The state is each
layer's h, cut to zero where an episode began. Init as 4.0's `puf_kaiming_init`: every weight
uniform in +-gain / sqrt(fan_in), gain sqrt(2) for the encoder and 1 for the layers and the
decoder (torch's default `nn.Linear` bound times the gain).

The decoder is one parameter, as 4.0's: Muon orthogonalizes the action and value rows
together. The action head keeps its sampling and log-probabilities and gives up its layer.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor, nn

from puffer.kernels import Linear
from puffer.train.config.sections import PolicyConfig
from puffer.train.policies.encoders import MLPEncoder
from puffer.train.policies.heads import ActionHead, make_head
from puffer.train.policies.policy import ENCODER_DTYPES, Policy
from puffer.train.policies.recurrent import MinGRUCore

__all__ = ["ENCODER_GAIN", "PufferNet", "make_puffernet", "puffernet_init"]

ENCODER_GAIN = math.sqrt(2.0)


class PufferNet(Policy):
    """A `Policy` whose encoder is one bias-free Linear, whose core is a bias-free
    `MinGRUCore` and whose head params and value come from one bias-free `decoder`.

    Args:
        encoder: (N, *obs_shape) -> (N, hidden_size), an `MLPEncoder` without activation or bias.
        head: an action head whose params are one Linear (its layer is dropped).
        hidden_size: H.
        core: the `MinGRUCore`.
        encoder_dtype, box_actions: as `Policy`'s.
    """

    def __init__(
        self,
        encoder: nn.Module,
        head: ActionHead,
        hidden_size: int,
        core: MinGRUCore,
        encoder_dtype: torch.dtype | None = torch.float32,
        box_actions: str = "map",
    ):
        super().__init__(encoder, head, hidden_size, core, encoder_dtype, None, box_actions)
        head.drop_params_layer()
        del self.value
        self.decoder = Linear(hidden_size, head.num_params + 1, bias=False)

    def _decode(self, hidden: Tensor) -> tuple[Tensor, Tensor]:
        out = self.decoder(hidden)
        return out[..., :-1], out[..., -1]


def make_puffernet(config: PolicyConfig, env) -> PufferNet:
    """PufferNet for `env` (flat or structured observations) at `config.hidden_size` and
    `config.mingru_layers`, initialized as PufferLib 4.0's (`puffernet_init`)."""
    obs_space = env.single_observation_space
    obs_dtype = torch.from_numpy(np.zeros(0, dtype=obs_space.dtype)).dtype
    hidden = config.hidden_size
    encoder = MLPEncoder(
        tuple(obs_space.shape),
        hidden,
        num_layers=0,
        obs_layout=getattr(env, "obs_layout", None),
        obs_dtype=obs_dtype,
        normalize=config.normalize_obs,
        activation=None,
        bias=False,
    )
    head = make_head(
        hidden, env.single_action_space, getattr(env, "action_layout", None), config.log_std_init
    )
    core = MinGRUCore(hidden, config.mingru_layers, bias=False)
    encoder_dtype = ENCODER_DTYPES[config.encoder_dtype]
    policy = PufferNet(encoder, head, hidden, core, encoder_dtype, config.box_actions)
    return puffernet_init(policy)


def puffernet_init(policy: PufferNet) -> PufferNet:
    """Re-initialize `policy` as PufferLib 4.0 does; returns it.

    Every Linear weight uniform in +-gain / sqrt(fan_in): gain sqrt(2) in the encoder, 1 in
    the MinGRU layers and the decoder. Log stds keep their `log_std_init`.
    """
    with torch.no_grad():
        for network, gain in ((policy.encoder, ENCODER_GAIN), (policy.core, 1.0)):
            for module in network.modules():
                if isinstance(module, nn.Linear):
                    _uniform(module.weight, gain)
        _uniform(policy.decoder.weight, 1.0)
    return policy


def _uniform(weight: Tensor, gain: float) -> None:
    bound = gain / math.sqrt(weight.shape[1])
    weight.uniform_(-bound, bound)
