"""Encoders: observation rows -> a (B, hidden) feature vector.

`MLPEncoder` takes flat rows, or structured rows through `puffer.core.nativize` when the env
has an `obs_layout`, optionally standardized by running statistics (`observe` updates them);
`NatureCNN` and `IMPALA` take images (channels first or last, uint8 scaled to [0, 1]);
`MultiInputEncoder` takes structured rows with image leaves (a NatureCNN per image leaf, the
other leaves through one Linear). The first layer of each encoder is named `input`.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor, nn

from puffer.kernels import Linear
from puffer.train.normalize import ObsNormalizer

__all__ = ["IMPALA", "MLPEncoder", "MultiInputEncoder", "NatureCNN", "is_image", "layer_init"]


def layer_init(layer: nn.Module, std: float = math.sqrt(2), bias: float = 0.0) -> nn.Module:
    """Orthogonal weights with gain `std` and constant bias (if it has one); returns the layer."""
    nn.init.orthogonal_(layer.weight, std)
    if layer.bias is not None:
        nn.init.constant_(layer.bias, bias)
    return layer


def _flat_float(x: Tensor) -> Tensor:
    return x.reshape(x.shape[0], -1).float()


# Keyed by the names `PolicyConfig.activation` accepts (`MLP_ACTIVATIONS`).
_ACTIVATIONS: dict[str, type[nn.Module]] = {"gelu": nn.GELU, "tanh": nn.Tanh, "relu": nn.ReLU}


class MLPEncoder(nn.Module):
    """Linear + activation, then `num_layers` hidden Linear + activation layers.

    Args:
        obs_shape: shape of one observation row.
        hidden_size: output width.
        num_layers: hidden layers after the input layer.
        obs_layout: a `puffer.core` layout when rows pack a structured space; each leaf is then
            flattened, cast to float32 and concatenated in layout order.
        obs_dtype: dtype of the observation rows (used to size the structured input).
        normalize: standardize the flattened rows with running statistics (`ObsNormalizer`,
            a buffer of this module, so checkpoints keep it); `observe` updates them.
        activation: 'gelu'; 'tanh', which keeps every hidden unit in [-1, 1] however many
            standardized inputs feed it (so one optimizer step moves the outputs less);
            'relu'; or None, no nonlinearity (PufferNet's encoder is one linear map, the
            MinGRU layers after it being the nonlinear part).
        bias: whether the Linear layers have biases (PufferNet's encoder has none).
    """

    def __init__(
        self,
        obs_shape: tuple[int, ...],
        hidden_size: int,
        num_layers: int,
        obs_layout=None,
        obs_dtype: torch.dtype = torch.float32,
        normalize: bool = False,
        activation: str | None = "gelu",
        bias: bool = True,
    ):
        super().__init__()
        if activation is not None and activation not in _ACTIVATIONS:
            raise ValueError(f"activation is {activation!r}; use one of {sorted(_ACTIVATIONS)}")
        act = nn.Identity if activation is None else _ACTIVATIONS[activation]
        self.obs_layout = obs_layout
        in_features = int(np.prod(obs_shape))
        if obs_layout is not None:
            in_features = self._flatten(torch.zeros((1, *obs_shape), dtype=obs_dtype)).shape[1]
        self.normalizer = ObsNormalizer(in_features) if normalize else None
        self.input = layer_init(Linear(in_features, hidden_size, bias=bias))
        self.act = act()
        self.hidden = nn.Sequential(
            *(
                module
                for _ in range(num_layers)
                for module in (layer_init(Linear(hidden_size, hidden_size, bias=bias)), act())
            )
        )

    def _flatten(self, obs: Tensor) -> Tensor:
        if self.obs_layout is None:
            return _flat_float(obs)
        from puffer.core import nativize

        leaves = _leaves(nativize(obs, self.obs_layout))
        return torch.cat([_flat_float(leaf) for leaf in leaves], dim=-1)

    def observe(self, obs: Tensor, weights: Tensor | None = None) -> None:
        """Merge observation rows (B, *obs_shape) into the normalizer (no-op without one)."""
        if self.normalizer is not None:
            self.normalizer.update(self._flatten(obs), weights)

    def forward(self, obs: Tensor) -> Tensor:
        x = self._flatten(obs)
        if self.normalizer is not None:
            x = self.normalizer(x)
        return self.hidden(self.act(self.input(x)))


def _leaves(tree) -> list[Tensor]:
    if isinstance(tree, dict):
        return [leaf for value in tree.values() for leaf in _leaves(value)]
    if isinstance(tree, tuple | list):
        return [leaf for value in tree for leaf in _leaves(value)]
    return [tree]


def is_image(shape: tuple[int, ...]) -> bool:
    """True for (C, H, W) or (H, W, C) shapes with C <= 4 and both sides at least 36 pixels
    (what NatureCNN's 8x8 stride-4 input layer needs)."""
    if len(shape) != 3:
        return False
    spatial = shape[1:] if _channels_first(shape) else shape[:2]
    return min(shape[0], shape[-1]) <= 4 and min(spatial) >= 36


def _channels_first(obs_shape: tuple[int, ...]) -> bool:
    """Images are (C, H, W) unless the last axis looks like channels (1, 3 or 4) and the first
    does not."""
    return not (obs_shape[-1] in (1, 3, 4) and obs_shape[0] not in (1, 3, 4))


class _Image(nn.Module):
    """Shared image prologue: channels first, floats in [0, 1] for uint8 input."""

    def __init__(self, obs_shape: tuple[int, ...]):
        super().__init__()
        if len(obs_shape) != 3:
            raise ValueError(f"image encoders need (C, H, W) or (H, W, C) obs, got {obs_shape}")
        self.channels_first = _channels_first(obs_shape)
        c, h, w = obs_shape if self.channels_first else (obs_shape[2], *obs_shape[:2])
        self.chw = (c, h, w)

    def prepare(self, obs: Tensor) -> Tensor:
        """(N, C, H, W) or (N, H, W, C) observations -> (N, C, H, W) float32, uint8 scaled to
        [0, 1]. Channels-last in memory when training on the CPU; an (N, H, W, C) input's
        permuted view always is."""
        if not self.channels_first:
            obs = obs.permute(0, 3, 1, 2)
        elif obs.device.type == "cpu" and torch.is_grad_enabled():
            # oneDNN trains faster channels-last: NatureCNN's forward + backward of 256 Atari
            # frames 129 against 162 ms, IMPALA's 391 against 618 (2-core Xeon, 2 threads).
            # Without gradients (the rollout) channels-first was 5-10 % faster at 8 to 128 rows.
            # The uint8 copy is the cheap one; `float()` keeps the layout.
            obs = obs.contiguous(memory_format=torch.channels_last)
        scale = 1 / 255 if obs.dtype == torch.uint8 else 1.0
        return obs.float() * scale


class NatureCNN(_Image):
    """The DQN Nature CNN: 3 conv layers then a Linear to `hidden_size`."""

    def __init__(self, obs_shape: tuple[int, ...], hidden_size: int, channels: int = 32):
        super().__init__(obs_shape)
        c = self.chw[0]
        self.input = layer_init(nn.Conv2d(c, channels, 8, stride=4))
        self.convs = nn.Sequential(
            nn.ReLU(),
            layer_init(nn.Conv2d(channels, 2 * channels, 4, stride=2)),
            nn.ReLU(),
            layer_init(nn.Conv2d(2 * channels, 2 * channels, 3, stride=1)),
            nn.ReLU(),
            nn.Flatten(),
        )
        with torch.no_grad():
            width = self.convs(self.input(torch.zeros(1, *self.chw))).shape[1]
        self.project = layer_init(Linear(width, hidden_size))

    def forward(self, obs: Tensor) -> Tensor:
        return torch.relu(self.project(self.convs(self.input(self.prepare(obs)))))


class _Residual(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv0 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x: Tensor) -> Tensor:
        return x + self.conv1(torch.relu(self.conv0(torch.relu(x))))


class IMPALA(_Image):
    """The IMPALA ResNet: 3 stages of conv, max-pool and 2 residual blocks, then a Linear."""

    def __init__(self, obs_shape: tuple[int, ...], hidden_size: int, channels: int = 16):
        super().__init__(obs_shape)
        c = self.chw[0]
        widths = (channels, 2 * channels, 2 * channels)
        self.input = nn.Conv2d(c, widths[0], 3, padding=1)
        stages: list[nn.Module] = []
        for i, width in enumerate(widths):
            if i > 0:
                stages.append(nn.Conv2d(widths[i - 1], width, 3, padding=1))
            stages += [nn.MaxPool2d(3, stride=2, padding=1), _Residual(width), _Residual(width)]
        self.stages = nn.Sequential(*stages, nn.ReLU(), nn.Flatten())
        with torch.no_grad():
            width = self.stages(self.input(torch.zeros(1, *self.chw))).shape[1]
        self.project = layer_init(Linear(width, hidden_size))

    def forward(self, obs: Tensor) -> Tensor:
        return torch.relu(self.project(self.stages(self.input(self.prepare(obs)))))


class MultiInputEncoder(nn.Module):
    """Structured rows with image leaves: a NatureCNN per image leaf, one Linear for the rest.

    Args:
        obs_shape: shape of one packed observation row.
        obs_layout: its `puffer.core` layout (Dict/Tuple leaves, in layout order).
        obs_dtype: dtype of the packed rows.
        hidden_size: output width (and each image leaf's feature width).
        channels: base channel count of the NatureCNNs.
    """

    def __init__(
        self,
        obs_shape: tuple[int, ...],
        obs_layout,
        obs_dtype: torch.dtype,
        hidden_size: int,
        channels: int = 32,
    ):
        super().__init__()
        self.obs_layout = obs_layout
        leaves = self._leaves(torch.zeros((1, *obs_shape), dtype=obs_dtype))
        self.images = [i for i, leaf in enumerate(leaves) if is_image(tuple(leaf.shape[1:]))]
        if not self.images:
            raise ValueError(
                f"the multi-input encoder needs an image leaf; leaves are "
                f"{[tuple(leaf.shape[1:]) for leaf in leaves]}; use encoder 'mlp'"
            )
        self.cnns = nn.ModuleList(
            NatureCNN(tuple(leaves[i].shape[1:]), hidden_size, channels) for i in self.images
        )
        vector = sum(
            _flat_float(leaf).shape[1] for i, leaf in enumerate(leaves) if i not in self.images
        )
        self.input = layer_init(Linear(vector, hidden_size)) if vector else None
        width = hidden_size * (len(self.images) + (vector > 0))
        self.project = layer_init(Linear(width, hidden_size))

    def _leaves(self, obs: Tensor) -> list[Tensor]:
        from puffer.core import nativize

        return _leaves(nativize(obs, self.obs_layout))

    def forward(self, obs: Tensor) -> Tensor:
        leaves = self._leaves(obs)
        features = [cnn(leaves[i]) for cnn, i in zip(self.cnns, self.images, strict=True)]
        if self.input is not None:
            rest = [_flat_float(leaf) for i, leaf in enumerate(leaves) if i not in self.images]
            features.append(nn.functional.gelu(self.input(torch.cat(rest, dim=-1))))
        return nn.functional.gelu(self.project(torch.cat(features, dim=-1)))
