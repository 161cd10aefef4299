"""puffer.cli: the `puffer` command and the typed TOML configs it trains from."""

from __future__ import annotations

from puffer.cli.config import Config, ConfigError, load_config

__version__ = "0.1.0"

__all__ = ["Config", "ConfigError", "load_config"]
