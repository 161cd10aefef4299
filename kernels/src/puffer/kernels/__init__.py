"""puffer.kernels: the C++/OpenMP and CUDA training kernels behind ``torch.library`` ops.

Importing this package registers ``torch.ops.puffer.puff_advantage``,
``torch.ops.puffer.segment_priorities`` (each runs the compiled kernel for its inputs' device
and the pure-torch reference where that library was not built; ``puffer.train.advantage`` holds
the validated public functions) and the recurrent sequence ops behind ``lstm_sequence`` and
``linear_scan`` (forward and backward in one kernel call each, with episode resets), and
PufferNet's MinGRU layer, ``mingru_scan`` (its gates, scan and highway gate fused).
``linear``, ``matmul`` and the ``Linear`` layer run float32 CPU products through oneDNN where
torch's BLAS is the slower of the two (``puffer.kernels.onednn``).

Example:
    >>> import torch
    >>> import puffer.kernels
    >>> v = torch.zeros(2, 3)
    >>> d = torch.zeros(2, 3, dtype=torch.bool)
    >>> torch.ops.puffer.puff_advantage(v, v + 1, d, d, v, v + 1, v[:, 0], 0.5, 1.0, 1.0, 1.0)
    tensor([[1.7500, 1.5000, 1.0000],
            [1.7500, 1.5000, 1.0000]])
"""

from __future__ import annotations

from puffer.kernels.mingru import mingru_scan, mingru_scan_reference, mingru_step
from puffer.kernels.onednn import Linear, cpu_matmul_library, linear, matmul
from puffer.kernels.ops import (
    KernelLaunchError,
    cpu_vector_bits,
    kernel_libraries,
    puff_advantage_reference,
    segment_priorities_reference,
)
from puffer.kernels.sequence import (
    linear_scan,
    linear_scan_reference,
    lstm_cell_inference,
    lstm_sequence,
    lstm_sequence_reference,
)

__version__ = "0.1.0"

__all__ = [
    "KernelLaunchError",
    "Linear",
    "__version__",
    "cpu_matmul_library",
    "cpu_vector_bits",
    "kernel_libraries",
    "linear",
    "linear_scan",
    "linear_scan_reference",
    "lstm_cell_inference",
    "lstm_sequence",
    "lstm_sequence_reference",
    "matmul",
    "mingru_scan",
    "mingru_scan_reference",
    "mingru_step",
    "puff_advantage_reference",
    "segment_priorities_reference",
]
