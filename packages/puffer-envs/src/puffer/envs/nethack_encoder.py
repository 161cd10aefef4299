"""`NetHackEncoder`: the structured encoder for `puffer.envs.nethack` rows (needs torch).

In the spirit of the NLE baseline agent (Küttler et al. 2020), scaled down for CPU training:
glyph ids are embedded, then read twice, by a small CNN over the whole 21x79 map and by one
over the 9x9 crop centred on the hero (blstats x, y); blstats go through sign(x) log(1 + |x|)
and a Linear layer; the message is a 1-D CNN over embedded bytes, max-pooled. The four parts
are concatenated and projected to `hidden_size`. The TOML names it as
`encoder = "puffer.envs.nethack_encoder:NetHackEncoder"`; puffer-train calls it with the env
and the `[policy]` config.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor, nn

from puffer.core import nativize

__all__ = ["CROP", "NetHackEncoder"]

# Side of the egocentric crop around the hero.
CROP = 9
# nle's glyph ids run 0..MAX_GLYPH (5976, "nothing"); the crop pads with that id.
_NUM_GLYPHS = 5977
_GLYPH_DIM = 16


def _init(layer: nn.Module) -> nn.Module:
    nn.init.orthogonal_(layer.weight, math.sqrt(2))
    nn.init.zeros_(layer.bias)
    return layer


def _cnn(width: int) -> nn.Sequential:
    return nn.Sequential(
        _init(nn.Conv2d(_GLYPH_DIM, width, 3, padding=1)),
        nn.ELU(),
        _init(nn.Conv2d(width, width, 3, stride=2, padding=1)),
        nn.ELU(),
        nn.Flatten(),
    )


class NetHackEncoder(nn.Module):
    """Rows of a `NetHackEnv` -> (B, hidden_size) features.

    Args:
        env: anything with the `obs_layout` of `NetHackEnv` (its leaves glyphs (21, 79)
            int16, blstats (27,) int64, message (256,) uint8).
        config: the `[policy]` config; `hidden_size` is the output width and `cnn_channels`
            the width of the two map CNNs.

    Input: (B, row_bytes) uint8 rows. Output: (B, hidden_size) float32.
    """

    def __init__(self, env: Any, config: Any):
        super().__init__()
        self.obs_layout = env.obs_layout
        if self.obs_layout is None or set(self.obs_layout.tree) != {"glyphs", "blstats", "message"}:
            raise ValueError(
                f"NetHackEncoder reads nethack-* rows (glyphs, blstats, message); {env!r} has "
                "another observation; use an encoder for that env's TOML"
            )
        width = config.cnn_channels
        rows, cols = self.obs_layout.tree["glyphs"].shape
        self.input = nn.Embedding(_NUM_GLYPHS, _GLYPH_DIM)
        self.map_cnn = _cnn(width)
        self.crop_cnn = _cnn(width)
        self.blstats = nn.Sequential(_init(nn.Linear(27, 64)), nn.ELU())
        self.message_embed = nn.Embedding(256, _GLYPH_DIM)
        self.message_cnn = nn.Sequential(
            _init(nn.Conv1d(_GLYPH_DIM, width, 5, stride=2)),
            nn.ELU(),
        )
        with torch.no_grad():
            probe = torch.zeros(1, _GLYPH_DIM, rows, cols)
            features = (
                self.map_cnn(probe).shape[1]
                + self.crop_cnn(probe[..., :CROP, :CROP]).shape[1]
                + 64
                + width
            )
        self.project = nn.Sequential(_init(nn.Linear(features, config.hidden_size)), nn.ELU())
        offsets = torch.arange(CROP) - CROP // 2
        self.register_buffer("_offsets", offsets, persistent=False)

    def _crop(self, glyphs: Tensor, x: Tensor, y: Tensor) -> Tensor:
        """(B, 21, 79) glyph ids -> (B, CROP, CROP) around (x, y), padded with "nothing"."""
        half = CROP // 2
        padded = nn.functional.pad(glyphs, (half, half, half, half), value=_NUM_GLYPHS - 1)
        rows = (y[:, None] + half + self._offsets)[:, :, None]  # (B, CROP, 1)
        cols = (x[:, None] + half + self._offsets)[:, None, :]  # (B, 1, CROP)
        batch = torch.arange(glyphs.shape[0], device=glyphs.device)[:, None, None]
        return padded[batch, rows, cols]

    def forward(self, obs: Tensor) -> Tensor:
        parts = nativize(obs, self.obs_layout)
        glyphs = parts["glyphs"].long()
        blstats = parts["blstats"]
        x = blstats[:, 0].clamp(0, glyphs.shape[2] - 1)
        y = blstats[:, 1].clamp(0, glyphs.shape[1] - 1)
        embedded = self.input(glyphs).permute(0, 3, 1, 2)
        crop = self.input(self._crop(glyphs, x, y)).permute(0, 3, 1, 2)
        stats = blstats.float()
        stats = torch.sign(stats) * torch.log1p(stats.abs())
        message = self.message_embed(parts["message"].long()).transpose(1, 2)
        features = torch.cat(
            [
                self.map_cnn(embedded),
                self.crop_cnn(crop),
                self.blstats(stats),
                self.message_cnn(message).amax(dim=2),
            ],
            dim=1,
        )
        return self.project(features)
