"""Recurrent cores: one set of weights, a `step` for rollout and a `sequence` for training.

State is a tuple of tensors with the batch first. Episode boundaries cut the state: rollout
multiplies it by (1 - done) before each step, and `sequence` does the same inside the time loop
from `starts` (True at t when an episode began at t, i.e. row t - 1 ended one). `starts[:, 0]` is
ignored, because the stored segment-start state is already cut.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = ["LSTMCore", "MinGRUCore", "log_space_scan", "mingru_sequence_reference"]

State = tuple[Tensor, ...]


class LSTMCore(nn.Module):
    """An `nn.LSTM` layer; rollout steps its weights as a cell, training runs the sequence."""

    def __init__(self, hidden_size: int):
        super().__init__()
        self.hidden_size = hidden_size
        self.lstm = nn.LSTM(hidden_size, hidden_size, batch_first=True)
        for name, param in self.lstm.named_parameters():
            if "bias" in name:
                nn.init.constant_(param, 0)
            else:
                nn.init.orthogonal_(param, 1.0)

    def initial_state(self, n: int, device: torch.device) -> State:
        zeros = torch.zeros(n, self.hidden_size, device=device)
        return (zeros, zeros.clone())

    def _cell(self, x: Tensor, h: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
        lstm = self.lstm
        return torch.lstm_cell(
            x, (h, c), lstm.weight_ih_l0, lstm.weight_hh_l0, lstm.bias_ih_l0, lstm.bias_hh_l0
        )

    def step(self, x: Tensor, state: State) -> tuple[Tensor, State]:
        """x (N, H), state ((N, H), (N, H)) already cut -> y (N, H), new state."""
        h, c = self._cell(x, *state)
        return h, (h, c)

    def sequence(self, x: Tensor, state: State, starts: Tensor) -> Tensor:
        """x (B, T, H), segment-start state, starts (B, T) bool -> y (B, T, H)."""
        h, c = state
        # Host-device sync: one bool per minibatch picks the fused whole-sequence path when no
        # episode boundary falls inside any segment.
        if not bool(starts[:, 1:].any()):
            y, _ = self.lstm(x, (h.unsqueeze(0), c.unsqueeze(0)))
            return y
        keep = (~starts).to(x.dtype).unsqueeze(-1)
        outputs = []
        for t in range(x.shape[1]):
            if t > 0:
                h, c = h * keep[:, t], c * keep[:, t]
            h, c = self._cell(x[:, t], h, c)
            outputs.append(h)
        return torch.stack(outputs, dim=1)


def _log_phi(z: Tensor) -> Tensor:
    """log of phi(z) = z + 0.5 for z >= 0, sigmoid(z) below: phi > 0, so log-space is safe."""
    return torch.where(z >= 0, (z.clamp(min=0) + 0.5).log(), F.logsigmoid(z))


def _phi(z: Tensor) -> Tensor:
    return torch.where(z >= 0, z + 0.5, torch.sigmoid(z))


def log_space_scan(log_a: Tensor, log_b: Tensor) -> Tensor:
    """log h for h_t = a_t * h_{t-1} + b_t along dim 1, h_{-1} = 0, in log space.

    Hillis-Steele doubling over (log a, log b) pairs: combining (A1, B1) then (A2, B2) gives
    (A1 + A2, logaddexp(B1 + A2, B2)). Nothing is subtracted, so log a = -inf (an episode
    boundary: the state is cut) is exact and keeps gradients finite.

    Args:
        log_a: (B, T, H) float log decay, -inf where the state is cut.
        log_b: (B, T, H) float log input (finite).

    Returns:
        (B, T, H) log h.
    """
    steps = log_a.shape[1]
    offset = 1
    while offset < steps:
        combined_b = torch.logaddexp(log_b[:, :-offset] + log_a[:, offset:], log_b[:, offset:])
        combined_a = log_a[:, :-offset] + log_a[:, offset:]
        log_b = torch.cat([log_b[:, :offset], combined_b], dim=1)
        log_a = torch.cat([log_a[:, :offset], combined_a], dim=1)
        offset *= 2
    return log_b


class MinGRUCore(nn.Module):
    """Stacked MinGRU layers with a highway gate (DESIGN.md §6).

    Per layer: [h~, g, p] = W x; h_t = (1 - sigma(g)) h_{t-1} + sigma(g) phi(h~_t);
    y_t = sigma(p) h_t + (1 - sigma(p)) x_t. Training runs `log_space_scan` over time, rollout
    runs `step`; both read the same `W`. State: one (N, layers, H) tensor, positive.
    """

    def __init__(self, hidden_size: int, num_layers: int = 1):
        super().__init__()
        self.hidden_size = hidden_size
        self.layers = nn.ModuleList(
            nn.Linear(hidden_size, 3 * hidden_size) for _ in range(num_layers)
        )

    def initial_state(self, n: int, device: torch.device) -> State:
        return (torch.zeros(n, len(self.layers), self.hidden_size, device=device),)

    def step(self, x: Tensor, state: State) -> tuple[Tensor, State]:
        """x (N, H), state ((N, L, H),) already cut -> y (N, H), new state."""
        (h_all,) = state
        new_h = []
        for i, layer in enumerate(self.layers):
            h_tilde, g, p = layer(x).chunk(3, dim=-1)
            z = torch.sigmoid(g)
            h = (1 - z) * h_all[:, i] + z * _phi(h_tilde)
            gate = torch.sigmoid(p)
            x = gate * h + (1 - gate) * x
            new_h.append(h)
        return x, (torch.stack(new_h, dim=1),)

    def sequence(self, x: Tensor, state: State, starts: Tensor) -> Tensor:
        """x (B, T, H), segment-start state, starts (B, T) bool -> y (B, T, H)."""
        (h0_all,) = state
        cut = starts.clone()
        cut[:, 0] = False
        cut = cut.unsqueeze(-1)
        for i, layer in enumerate(self.layers):
            h_tilde, g, p = layer(x).chunk(3, dim=-1)
            log_a = torch.where(cut, float("-inf"), F.logsigmoid(-g))
            log_b = F.logsigmoid(g) + _log_phi(h_tilde)
            # Fold h_{-1} into b_0 so the scan starts from zero.
            first = torch.logaddexp(log_a[:, 0] + h0_all[:, i].log(), log_b[:, 0])
            log_b = torch.cat([first.unsqueeze(1), log_b[:, 1:]], dim=1)
            h = log_space_scan(log_a, log_b).exp()
            gate = torch.sigmoid(p)
            x = gate * h + (1 - gate) * x
        return x


def mingru_sequence_reference(core: MinGRUCore, x: Tensor, state: State, starts: Tensor):
    """`core.sequence` computed with `core.step` in a time loop (the test reference)."""
    (h,) = state
    keep = (~starts).to(x.dtype)[:, :, None, None]
    outputs = []
    for t in range(x.shape[1]):
        if t > 0:
            h = h * keep[:, t]
        y, (h,) = core.step(x[:, t], (h,))
        outputs.append(y)
    return torch.stack(outputs, dim=1)
