"""Policies: encoders, recurrent cores, action heads and the `Policy` that joins them."""

from __future__ import annotations

from puffer.train.policies.encoders import (
    IMPALA,
    MLPEncoder,
    MultiInputEncoder,
    NatureCNN,
    layer_init,
)
from puffer.train.policies.heads import (
    ActionHead,
    CategoricalHead,
    GaussianHead,
    MixedHead,
    make_head,
)
from puffer.train.policies.policy import Policy, make_policy
from puffer.train.policies.puffernet import PufferNet, make_puffernet, puffernet_init
from puffer.train.policies.recurrent import LSTMCore, MinGRUCore

__all__ = [
    "IMPALA",
    "ActionHead",
    "CategoricalHead",
    "GaussianHead",
    "LSTMCore",
    "MLPEncoder",
    "MinGRUCore",
    "MultiInputEncoder",
    "MixedHead",
    "NatureCNN",
    "Policy",
    "PufferNet",
    "layer_init",
    "make_head",
    "make_policy",
    "make_puffernet",
    "puffernet_init",
]
