"""Suite-wide setup: one torch thread per test process.

The suite runs in two xdist workers on the 2-core machines it is tested on, so the trainer's
auto thread count (`train.torch_threads = 0`: every core) would oversubscribe them. It honours
`OMP_NUM_THREADS`, as torch does for its default; a value set by the caller is kept.
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
