"""The one config of a run: typed sections, TOML layering, typed overrides and derived defaults.

`load_config(env, config_file, overrides)` is what `puffer train ENV --config FILE --train.x y`
resolves, from Python as from the command line; `Config()` is the typed defaults alone.
"""

from __future__ import annotations

from puffer.train.config.fields import (
    RENAMED_KEYS,
    ConfigError,
    Kind,
    check_field,
    field_help,
    refuse_renamed,
)
from puffer.train.config.fold import (
    SECTIONS,
    env_defaults,
    load_config,
    parse_overrides,
    read_config_file,
)
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
    "Kind",
    "PolicyConfig",
    "Sizes",
    "TrainConfig",
    "VecConfig",
    "check_field",
    "env_defaults",
    "field_help",
    "load_config",
    "parse_overrides",
    "read_config_file",
    "refuse_renamed",
]
