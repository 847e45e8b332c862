"""Reading user files and checking output paths, with one-line errors.

Every reader turns what can go wrong with a user's file (missing, a folder, unreadable, not
UTF-8, malformed) into a :class:`ConfigError` naming the field; every output check says whether
a file or folder can be written *without* writing or creating anything, so a command can refuse
before its work starts and leave nothing behind.
"""

import json
import os
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from assocmem.config.errors import ConfigError

__all__ = [
    "check_output_dir",
    "check_output_file",
    "load_json",
    "load_probabilities",
    "load_toml",
    "read_text",
]


def _check_path(field: str, path: str | Path) -> None:
    if "\x00" in str(path):
        raise ConfigError(field, f"{str(path)!r} is not a valid path (it holds a NUL byte)")


def read_text(field: str, path: str | Path) -> str:
    """The UTF-8 text of a user's file (``-``: standard input)."""
    _check_path(field, path)
    if str(path) == "-":
        try:
            return sys.stdin.read()
        except UnicodeDecodeError:
            raise ConfigError(field, "standard input is not UTF-8 text") from None
    name = repr(str(path))
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(field, f"file {name} not found") from None
    except IsADirectoryError:
        raise ConfigError(field, f"{name} is a folder; give a file") from None
    except UnicodeDecodeError as err:
        raise ConfigError(field, f"{name} is not UTF-8 text (byte {err.start})") from None
    except OSError as err:
        raise ConfigError(field, f"cannot read {name}: {err.strerror}") from None


def load_toml(path: str | Path, field: str = "config") -> dict[str, Any]:
    """Read a TOML file; a missing, unreadable or malformed file is a :class:`ConfigError`."""
    text = read_text(field, path)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(field, f"malformed TOML in {str(path)!r}: {err}") from None


def load_json(path: str | Path, field: str) -> Any:
    """Read a JSON file (``-``: standard input)."""
    text = read_text(field, path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ConfigError(
            field, f"{str(path)!r} is not JSON: {err.msg} (line {err.lineno})"
        ) from None
    except RecursionError:
        raise ConfigError(field, f"{str(path)!r} is nested too deeply") from None


def load_probabilities(path: str | Path) -> list[float]:
    """A probability vector from a text file (numbers separated by white space or commas)."""
    text = read_text("probabilities", path)
    try:
        return [float(tok) for tok in text.replace(",", " ").split()]
    except ValueError:
        raise ConfigError("probabilities", f"{str(path)!r} must hold numbers only") from None


def _existing_ancestor(path: Path) -> Path:
    for parent in (path, *path.parents):
        if parent.exists():
            return parent
    return Path(".")


def check_output_dir(field: str, path: str | Path) -> None:
    """Refuse, without creating anything, a folder that cannot be created or written."""
    _check_path(field, path)
    if str(path).strip() == "":
        raise ConfigError(field, "give a folder path")
    path = Path(path)
    if path.exists():
        if not path.is_dir():
            raise ConfigError(field, f"{str(path)!r} exists and is not a folder")
        if not _can_write_in(path):
            raise ConfigError(field, f"cannot write into {str(path)!r}; give a writable folder")
        return
    _check_creatable(field, path)


def check_output_file(field: str, path: str | Path) -> None:
    """Refuse, without creating anything, a file path that cannot be written (its folder must
    exist)."""
    _check_path(field, path)
    if str(path).strip() == "" or str(path).endswith(("/", os.sep)):
        raise ConfigError(field, f"give a file path, got {str(path)!r}")
    path = Path(path)
    if path.is_dir():
        raise ConfigError(field, f"{str(path)!r} is a folder; give a file")
    if path.exists():
        if not os.access(path, os.W_OK):
            raise ConfigError(field, f"cannot write {str(path)!r} (read-only)")
        return
    folder = path.parent
    if not folder.exists() and not folder.is_symlink():  # a typo, not a folder to invent
        raise ConfigError(field, f"folder {str(folder)!r} not found; create it first")
    _check_creatable(field, path)


def _can_write_in(folder: Path) -> bool:
    """Whether a file can be created in ``folder``: a probe file, removed at once (permission
    bits alone do not tell, e.g. for root or on a read-only mount)."""
    if not os.access(folder, os.W_OK | os.X_OK):
        return False
    try:
        handle, probe = tempfile.mkstemp(dir=folder, prefix=".assocmem-probe-")
    except OSError:
        return False
    os.close(handle)
    os.unlink(probe)
    return True


def _check_creatable(field: str, path: Path) -> None:
    ancestor = _existing_ancestor(path.parent if path.parent != path else path)
    if not ancestor.is_dir():
        raise ConfigError(field, f"cannot create {str(path)!r}: {str(ancestor)!r} is not a folder")
    if not _can_write_in(ancestor):
        raise ConfigError(field, f"cannot create {str(path)!r}: {str(ancestor)!r} is not writable")
