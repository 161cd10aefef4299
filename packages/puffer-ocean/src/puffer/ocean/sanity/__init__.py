"""Sanity envs: tiny tasks in Python with a known best score, for testing trainers.

Each is a native `puffer.core.PufferEnv` stepping `num_envs` copies with numpy in one call, and
each isolates one thing a trainer must get right:

| env | tests | best / chance mean reward |
|---|---|---|
| `Bandit` | learning at all (one step, stochastic payout) | 0.8 / 0.35 |
| `Password` | exploration under sparse reward | 1 / 2^-length per episode |
| `Spaces` | structured Dict observations and actions (`nativize`) | 1 / 0.5 |
| `Multiagent` | keeping agents' rows apart | 1 / 0.5 |
| `Continuous` | Box actions | 0 / -2/3 |
| `Stochastic` | keeping a stochastic policy | ~0.9 / 0.67 for a deterministic one |

Example:
    >>> import puffer.core
    >>> env = puffer.core.make("bandit", num_envs=8)
    >>> obs, _ = env.reset(seed=0)
    >>> obs.shape
    (8, 1)
"""

from __future__ import annotations

from puffer.ocean.sanity.bandit import Bandit
from puffer.ocean.sanity.base import SanityEnv
from puffer.ocean.sanity.continuous import Continuous
from puffer.ocean.sanity.multiagent import Multiagent
from puffer.ocean.sanity.password import Password
from puffer.ocean.sanity.spaces import Spaces
from puffer.ocean.sanity.stochastic import Stochastic

__all__ = [
    "Bandit",
    "Continuous",
    "Multiagent",
    "Password",
    "SanityEnv",
    "Spaces",
    "Stochastic",
]
