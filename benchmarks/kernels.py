"""CPU speed of the compiled kernels against their pure-torch references.

Advantage: the time of one call of `puff_advantage` and `segment_priorities` (C++/OpenMP kernel
through the torch custom op) and of `puff_advantage_reference` / `segment_priorities_reference`
on the same inputs, in milliseconds per call. Recommended: the default S=16384 segments x T=64
steps (a 1M-step batch).

Recurrent: forward + backward (loss y.square().sum(), gradients for input and weights) of one
training minibatch through the recurrent cores at PufferLib's breakout shape (--rnn-segments
512 x T=64 = 32,768 steps, hidden 128), episode starts drawn with probability --reset-rate per
step, one torch thread. Rows: the LSTM's previous path (a Python loop of `lstm_cell`, the
reference), its kernel path (`lstm_sequence`) and torch's fused `nn.LSTM` (what `LSTMCore` runs
when no episode starts inside a segment); MinGRU's previous path (the log-space Hillis-Steele
scan, kept here as the peer) and its kernel path (`linear_scan`). Reported in ms and in
training steps/s, with the ratio to the LSTM loop.

LSTM forward parts (at 1 thread, then at torch's default): at one microbatch of the CPU default (8,192 steps: 8,192 / T segments),
the sequence kernel's forward against its two parts done separately, T per-step MKL products
h_{t-1} W_hh^T (`torch.addmm`) and T passes of the cell kernel (`puffer::lstm_cell_inference`):
where the kernel's time is near their sum, its own product runs at MKL's rate.

All figures: median of --repeats calls after a warm-up, calls interleaved so machine load hits
each alike. Run on an idle machine.

    uv run python benchmarks/kernels.py [--segments 16384] [--horizon 64] [--repeats 9]
        [--rnn-segments 512] [--reset-rate 0.01]
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable

import torch
import torch.nn.functional as F

from puffer.cli.bench import header, timed
from puffer.kernels import lstm_sequence_reference
from puffer.train.advantage import (
    kernel_libraries,
    puff_advantage,
    puff_advantage_reference,
    segment_priorities,
    segment_priorities_reference,
)
from puffer.train.policies import LSTMCore, MinGRUCore


def _ms(fn: Callable[[], object]) -> float:
    """Milliseconds of one call of `fn`."""

    def call() -> int:
        fn()
        return 1

    return 1e3 * timed(call).wall


def _log_space_mingru(core: MinGRUCore, x: torch.Tensor, h0: torch.Tensor, starts: torch.Tensor):
    """MinGRU's sequence before the scan kernel: a log-space Hillis-Steele scan (the peer)."""
    cut = starts.clone()
    cut[:, 0] = False
    cut = cut.unsqueeze(-1)
    for i, layer in enumerate(core.layers):
        h_tilde, g, p = layer(x).chunk(3, dim=-1)
        log_a = torch.where(cut, float("-inf"), F.logsigmoid(-g))
        log_phi = torch.where(
            h_tilde >= 0, (h_tilde.clamp(min=0) + 0.5).log(), F.logsigmoid(h_tilde)
        )
        log_b = F.logsigmoid(g) + log_phi
        first = torch.logaddexp(log_a[:, 0] + h0[:, i].log(), log_b[:, 0])
        log_b = torch.cat([first.unsqueeze(1), log_b[:, 1:]], dim=1)
        offset = 1
        while offset < log_a.shape[1]:
            b_next = torch.logaddexp(log_b[:, :-offset] + log_a[:, offset:], log_b[:, offset:])
            a_next = log_a[:, :-offset] + log_a[:, offset:]
            log_b = torch.cat([log_b[:, :offset], b_next], dim=1)
            log_a = torch.cat([log_a[:, :offset], a_next], dim=1)
            offset *= 2
        gate = torch.sigmoid(p)
        x = gate * log_b.exp() + (1 - gate) * x
    return x


def _recurrent(args: argparse.Namespace) -> None:
    torch.manual_seed(0)
    b, t, hidden = args.rnn_segments, args.horizon, 128
    lstm, mingru = LSTMCore(hidden), MinGRUCore(hidden)
    x = torch.randn(b, t, hidden, requires_grad=True)
    h0, c0 = 0.1 * torch.randn(b, hidden), 0.1 * torch.randn(b, hidden)
    m0 = torch.rand(b, 1, hidden) + 0.1
    starts = torch.rand(b, t) < args.reset_rate
    weights = list(lstm.lstm.parameters())
    inside = starts[:, 1:].any(dim=1).float().mean().item()
    rows = {
        "lstm loop (before)": lambda: lstm_sequence_reference(x, h0, c0, starts, *weights),
        "lstm kernel (after)": lambda: lstm.sequence(x, (h0, c0), starts),
        "nn.LSTM, no resets": lambda: lstm.lstm(x, (h0[None], c0[None]))[0],
        "mingru log-space (before)": lambda: _log_space_mingru(mingru, x, m0, starts),
        "mingru kernel (after)": lambda: mingru.sequence(x, (m0,), starts),
    }

    def fwd_bwd(fn: Callable[[], torch.Tensor]) -> torch.Tensor:
        y = fn()
        y.square().sum().backward()
        return y

    print(
        f"recurrent fwd+bwd: {b} segments x T={t}, hidden {hidden}, reset rate "
        f"{args.reset_rate} ({inside:.0%} of segments hold an episode start), ms per minibatch"
    )
    for fn in rows.values():
        fwd_bwd(fn)  # warm-up: library load, op registration, allocator
    times = [[_ms(lambda f=fn: fwd_bwd(f)) for fn in rows.values()] for _ in range(args.repeats)]
    medians = [statistics.median(column) for column in zip(*times, strict=True)]
    base = medians[0]
    for name, ms in zip(rows, medians, strict=True):
        rate = b * t / (ms / 1e3)
        print(f"{name:26s} {ms:9.1f} ms  {rate / 1e3:8.1f}k steps/s  {base / ms:5.2f}x loop")


def _lstm_forward_parts(args: argparse.Namespace) -> None:
    torch.manual_seed(0)
    t, hidden = args.horizon, 128
    b = max(1, 8192 // t)
    xproj = torch.randn(b, t, 4 * hidden)
    w_hh = 0.1 * torch.randn(4 * hidden, hidden)
    h0, c0 = 0.1 * torch.randn(b, hidden), 0.1 * torch.randn(b, hidden)
    starts = torch.rand(b, t) < args.reset_rate
    bias = 0.1 * torch.randn(4 * hidden)
    w_t, h, pre = w_hh.T.contiguous(), torch.randn(b, hidden), torch.empty(b, 4 * hidden)
    pres = [torch.randn(b, 4 * hidden) for _ in range(t)]

    def products() -> None:
        for step in range(t):
            torch.addmm(xproj[:, step], h, w_t, out=pre)

    def cells() -> None:
        for step_pre in pres:
            torch.ops.puffer.lstm_cell_inference(step_pre, c0, bias)

    rows = {
        "kernel forward": lambda: torch.ops.puffer.lstm_sequence(xproj, w_hh, h0, c0, starts, bias),
        f"{t} MKL products": products,
        f"{t} cell passes": cells,
    }
    for fn in rows.values():
        fn()  # warm-up
    times = [[_ms(fn) for fn in rows.values()] for _ in range(args.repeats)]
    kernel, product, cell = (statistics.median(column) for column in zip(*times, strict=True))
    print(
        f"lstm forward parts, {b} segments x T={t}, hidden {hidden}, "
        f"{torch.get_num_threads()} threads: kernel {kernel:.2f} ms; "
        f"MKL products {product:.2f} + cell passes {cell:.2f} = {product + cell:.2f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--segments", type=int, default=16384)
    parser.add_argument("--horizon", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--rnn-segments", type=int, default=512)
    parser.add_argument("--reset-rate", type=float, default=0.01)
    parser.add_argument("--skip-advantage", action="store_true", help="recurrent rows only")
    args = parser.parse_args()
    g = torch.Generator().manual_seed(0)
    shape = (args.segments, args.horizon)
    batch = (
        torch.randn(shape, generator=g),
        torch.randn(shape, generator=g),
        torch.rand(shape, generator=g) < 0.05,
        torch.rand(shape, generator=g) < 0.03,
        torch.randn(shape, generator=g),
        0.3 + 1.7 * torch.rand(shape, generator=g),
        torch.randn(args.segments, generator=g),
        0.995,
        0.9,
        1.0,
        1.0,
    )
    adv = puff_advantage(*batch)
    pairs = {
        "puff_advantage": (
            lambda: puff_advantage(*batch),
            lambda: puff_advantage_reference(*batch),
        ),
        "segment_priorities": (
            lambda: segment_priorities(adv, 0.8),
            lambda: segment_priorities_reference(adv, 0.8),
        ),
    }
    print(
        f"{header('torch')} ({torch.get_num_threads()} threads), "
        f"kernels {kernel_libraries()['cpu']}"
    )
    print(f"S={args.segments} T={args.horizon}: ms per call, median of {args.repeats}")
    for name, (kernel, reference) in pairs.items():
        if args.skip_advantage:
            break
        kernel(), reference()  # warm-up: library load, allocator
        times = [(_ms(kernel), _ms(reference)) for _ in range(args.repeats)]
        k = statistics.median(t[0] for t in times)
        r = statistics.median(t[1] for t in times)
        print(f"{name:20s} kernel {k:8.3f}  reference {r:8.3f}  ratio {r / k:6.1f}x")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the trainer runs on CPU (train README)
    try:
        _recurrent(args)
        _lstm_forward_parts(args)
    finally:
        torch.set_num_threads(threads)
    if threads > 1:
        _lstm_forward_parts(args)


if __name__ == "__main__":
    main()
