"""The configuration layer: user-facing errors and file reading, below all science."""

from assocmem.config.errors import ConfigError
from assocmem.config.files import load_probabilities, load_toml

__all__ = ["ConfigError", "load_probabilities", "load_toml"]
