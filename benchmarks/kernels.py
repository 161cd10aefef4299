"""CPU speed of the compiled kernels against their pure-torch references.

Measures the time of one call of `puff_advantage` and `segment_priorities` (C++/OpenMP kernel
through the torch custom op) and of `puff_advantage_reference` / `segment_priorities_reference`
on the same inputs, in milliseconds per call, median of --repeats calls after a warm-up, with
the calls interleaved so machine load hits both alike. Prints the ratio reference / kernel.
Recommended: the default S=16384 segments x T=64 steps (a 1M-step batch), on an idle machine.

    uv run python benchmarks/kernels.py [--segments 16384] [--horizon 64] [--repeats 9]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable

import torch

from puffer.train.advantage import (
    kernel_libraries,
    puff_advantage,
    puff_advantage_reference,
    segment_priorities,
    segment_priorities_reference,
)


def _timed(fn: Callable[[], torch.Tensor]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--segments", type=int, default=16384)
    parser.add_argument("--horizon", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    g = torch.Generator().manual_seed(0)
    shape = (args.segments, args.horizon)
    batch = (
        torch.randn(shape, generator=g),
        torch.randn(shape, generator=g),
        torch.rand(shape, generator=g) < 0.05,
        torch.rand(shape, generator=g) < 0.03,
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
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, torch "
        f"{torch.__version__} ({torch.get_num_threads()} threads), load {os.getloadavg()[0]:.2f}, "
        f"kernels {kernel_libraries()['cpu']}"
    )
    print(f"S={args.segments} T={args.horizon}: ms per call, median of {args.repeats}")
    for name, (kernel, reference) in pairs.items():
        kernel(), reference()  # warm-up: library load, allocator
        times = [(_timed(kernel), _timed(reference)) for _ in range(args.repeats)]
        k = statistics.median(t[0] for t in times)
        r = statistics.median(t[1] for t in times)
        print(f"{name:20s} kernel {k:8.3f}  reference {r:8.3f}  ratio {r / k:6.1f}x")


if __name__ == "__main__":
    main()
