"""Recurrent cores: one set of weights, a `step` for rollout and a `sequence` for training.

State is a tuple of tensors with the batch first. Episode boundaries cut the state: rollout
multiplies it by (1 - done) before each step, and `sequence` does the same at every step where
`starts` is True (an episode began at t, i.e. row t - 1 ended one). `starts[:, 0]` is ignored,
because the stored segment-start state is already cut. `sequence` has no Python time loop: the
LSTM runs `puffer.kernels.lstm_sequence` and MinGRU `puffer.kernels.mingru_scan`, one compiled
kernel call each for forward and backward (their Python-loop references are in the tests).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from puffer.kernels import (
    Linear,
    cpu_vector_bits,
    lstm_cell_inference,
    lstm_sequence,
    mingru_scan,
    mingru_step,
)

__all__ = ["LSTMCore", "MinGRUCore", "mingru_sequence_reference"]

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

    def step(self, x: Tensor, state: State) -> tuple[Tensor, State]:
        """x (N, H), state ((N, H), (N, H)) already cut -> y (N, H), new state.

        Without gradients on CPU (the rollout) the cell runs as one kernel pass after the two
        matrix products (`puffer.kernels.lstm_cell_inference`); otherwise `torch.lstm_cell`.
        """
        lstm = self.lstm
        weights = (lstm.weight_ih_l0, lstm.weight_hh_l0, lstm.bias_ih_l0, lstm.bias_hh_l0)
        h, c = lstm_cell_inference(x, *state, *weights)
        return h, (h, c)

    def sequence(self, x: Tensor, state: State, starts: Tensor) -> Tensor:
        """x (B, T, H), segment-start state, starts (B, T) bool -> y (B, T, H)."""
        h, c = state
        # torch's fused nn.LSTM beats the kernel where no episode boundary falls inside any
        # segment, except on CPUs with AVX-512, where the kernel's 512-bit row work is faster
        # (docs/results/train.md). Host-device sync: one bool per minibatch to choose.
        if _fused_lstm_is_faster(x) and not bool(starts[:, 1:].any()):
            y, _ = self.lstm(x, (h.unsqueeze(0), c.unsqueeze(0)))
            return y
        lstm = self.lstm
        weights = (lstm.weight_ih_l0, lstm.weight_hh_l0, lstm.bias_ih_l0, lstm.bias_hh_l0)
        return lstm_sequence(x, h, c, starts, *weights)


def _fused_lstm_is_faster(x: Tensor) -> bool:
    return x.device.type != "cpu" or cpu_vector_bits() != 512


class MinGRUCore(nn.Module):
    """Stacked MinGRU layers with a highway gate.

    Per layer: [h~, g, p] = W x; h_t = (1 - sigma(g)) h_{t-1} + sigma(g) phi(h~_t);
    y_t = sigma(p) h_t + (1 - sigma(p)) x_t. Training runs each layer's gates, scan and highway
    as one kernel call (`puffer.kernels.mingru_scan`, the state cut where an episode began),
    rollout runs `step`; both read the same `W`. State: one (N, layers, H) tensor.
    `bias=False` drops the layers' biases (PufferNet's, whose layers have none).
    """

    def __init__(self, hidden_size: int, num_layers: int = 1, bias: bool = True):
        super().__init__()
        self.hidden_size = hidden_size
        self.layers = nn.ModuleList(
            Linear(hidden_size, 3 * hidden_size, bias=bias) for _ in range(num_layers)
        )

    def initial_state(self, n: int, device: torch.device) -> State:
        return (torch.zeros(n, len(self.layers), self.hidden_size, device=device),)

    def step(self, x: Tensor, state: State) -> tuple[Tensor, State]:
        """x (N, H), state ((N, L, H),) already cut -> y (N, H), new state."""
        (h_all,) = state
        new_h = []
        for i, layer in enumerate(self.layers):
            x, h = mingru_step(layer(x), x, h_all[:, i])
            new_h.append(h)
        return x, (torch.stack(new_h, dim=1),)

    def sequence(self, x: Tensor, state: State, starts: Tensor) -> Tensor:
        """x (B, T, H), segment-start state, starts (B, T) bool -> y (B, T, H)."""
        (h0_all,) = state
        for i, layer in enumerate(self.layers):
            x = mingru_scan(layer(x), x, h0_all[:, i], starts)
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
