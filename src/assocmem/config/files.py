"""Reading user files: TOML configs and probability vectors, with one-line errors."""

import tomllib
from pathlib import Path
from typing import Any

from assocmem.config.errors import ConfigError


def load_toml(path: str | Path) -> dict[str, Any]:
    """Read a TOML file; a missing or malformed file is a :class:`ConfigError` naming it."""
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError("config", f"file {str(path)!r} not found") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError("config", f"malformed TOML in {str(path)!r}: {err}") from None


def load_probabilities(path: str | Path) -> list[float]:
    """A probability vector from a text file (numbers separated by white space or commas)."""
    try:
        text = Path(path).read_text()
    except OSError as err:
        raise ConfigError("probabilities", f"cannot read {str(path)!r}: {err.strerror}") from None
    try:
        return [float(tok) for tok in text.replace(",", " ").split()]
    except ValueError:
        raise ConfigError("probabilities", f"{str(path)!r} must hold numbers only") from None
