"""The one config of a run: typed sections, the env's typed [env], and the fold of its layers.

`load_config(env, config_file, overrides)` is what `puffer train ENV --config FILE --train.x y`
resolves, from Python as from the command line; `Config()` is the typed defaults alone.
"""

from __future__ import annotations

from puffer.train.config.fold import env_config_class, env_defaults, load_config, parse_overrides
from puffer.train.config.keys import RENAMED_KEYS, SECTIONS, ConfigError, check, field_help, flag
from puffer.train.config.sections import (
    ENCODER_DTYPES,
    MATMUL_PRECISIONS,
    PolicyConfig,
    TrainConfig,
    VecConfig,
)
from puffer.train.config.sizes import Sizes
from puffer.train.config.whole import Config

__all__ = [
    "ENCODER_DTYPES",
    "MATMUL_PRECISIONS",
    "RENAMED_KEYS",
    "SECTIONS",
    "Config",
    "ConfigError",
    "PolicyConfig",
    "Sizes",
    "TrainConfig",
    "VecConfig",
    "check",
    "env_config_class",
    "env_defaults",
    "field_help",
    "flag",
    "load_config",
    "parse_overrides",
]
