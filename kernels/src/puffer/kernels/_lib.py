"""ctypes bindings to the compiled kernels in ``csrc/`` (private; the ops in ``ops.py`` use them).

The build installs two plain C ABI libraries next to this file: ``_kernels_cpu.so`` (always)
and ``_kernels_cuda.so`` (when nvcc was found and ``PUFFER_CUDA`` was not 0). They are located
through the import system, so wheel and editable installs resolve alike, and loaded lazily on
first use. A missing library is not an error: the ops fall back to their pure-torch reference.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util

__all__ = ["library", "library_path"]

_MODULES = {"cpu": "puffer.kernels._kernels_cpu", "cuda": "puffer.kernels._kernels_cuda"}

_ptr = ctypes.c_void_p
_ADVANTAGE_ARGS = [_ptr] * 8 + [ctypes.c_int64] * 2 + [ctypes.c_float] * 4
_PRIORITY_ARGS = [_ptr, _ptr, ctypes.c_int64, ctypes.c_int64, ctypes.c_float]
_sizes = [ctypes.c_int64] * 3  # batch, steps, hidden or width
# Categorical PPO loss: 9 inputs, then forward's 4 outputs (probs, logp, ratio, sums) or
# backward's 3 saved and 2 outputs; rows, horizon, branches, width; 4 floats (+3 gradients in
# backward); threads.
_PPO_FORWARD_ARGS = [_ptr] * 13 + [ctypes.c_int64] * 4 + [ctypes.c_float] * 4 + [ctypes.c_int]
_PPO_BACKWARD_ARGS = [_ptr] * 14 + [ctypes.c_int64] * 4 + [ctypes.c_float] * 7 + [ctypes.c_int]
# The sequence kernels exist as _f32 and _f64; every pointer is a c_void_p.
_SEQUENCE_ARGS = {
    "lstm_forward": [_ptr] * 9 + _sizes,
    "lstm_backward": [_ptr] * 9 + _sizes,
    "linear_scan": [_ptr] * 4 + _sizes,
    "linear_scan_backward": [_ptr] * 7 + _sizes,
    "mingru_scan": [_ptr] * 6 + _sizes,
    "mingru_scan_backward": [_ptr] * 9 + _sizes,
}


def library_path(device_type: str) -> str | None:
    """Path of the compiled kernel library for ``"cpu"`` or ``"cuda"``, or None if not built."""
    spec = importlib.util.find_spec(_MODULES[device_type])
    return spec.origin if spec is not None else None


@functools.cache
def library(device_type: str) -> ctypes.CDLL | None:
    """The loaded kernel library for ``"cpu"`` or ``"cuda"`` with its C signatures declared.

    Returns None when the library was not built, so callers use the torch reference.
    """
    path = library_path(device_type)
    if path is None:
        return None
    # torch is imported before this runs, so libgomp resolves to the copy torch already loaded
    # and both share one OpenMP thread pool.
    lib = ctypes.CDLL(path)
    lib.puffer_kernels_version.restype = ctypes.c_char_p
    lib.puffer_kernels_version.argtypes = []
    # The last argument is the OpenMP thread count on CPU and the cudaStream_t on CUDA.
    last = ctypes.c_int if device_type == "cpu" else ctypes.c_void_p
    advantage = getattr(lib, f"puffer_advantage_{device_type}")
    advantage.restype = ctypes.c_int
    advantage.argtypes = [*_ADVANTAGE_ARGS, last]
    priorities = getattr(lib, f"puffer_segment_priorities_{device_type}")
    priorities.restype = ctypes.c_int
    priorities.argtypes = [*_PRIORITY_ARGS, last]
    for name, args in _SEQUENCE_ARGS.items():
        for suffix in ("f32", "f64"):
            fn = getattr(lib, f"puffer_{name}_{device_type}_{suffix}")
            fn.restype = ctypes.c_int
            fn.argtypes = [*args, last]
    if device_type == "cpu":
        for name, args in (("forward", _PPO_FORWARD_ARGS), ("backward", _PPO_BACKWARD_ARGS)):
            fn = getattr(lib, f"puffer_ppo_categorical_{name}_cpu")
            fn.restype = ctypes.c_int
            fn.argtypes = args
        lib.puffer_cpu_vector_bits.restype = ctypes.c_int
        lib.puffer_cpu_vector_bits.argtypes = []
        for suffix in ("f32", "f64"):
            cell = getattr(lib, f"puffer_lstm_cell_cpu_{suffix}")
            cell.restype = ctypes.c_int
            cell.argtypes = [_ptr] * 5 + [ctypes.c_int64] * 2 + [last]
    if device_type == "cuda":
        lib.puffer_cuda_error_string.restype = ctypes.c_char_p
        lib.puffer_cuda_error_string.argtypes = [ctypes.c_int]
    return lib
