"""User-facing errors: one line, naming the field and what is allowed."""

import difflib
from collections.abc import Iterable, Mapping


class ConfigError(ValueError):
    """A user input is invalid: one line naming the field and what is allowed.

    Parameters
    ----------
    field : str
        The config field, spec key or command-line option at fault.
    message : str
        What is wrong and what is allowed.

    Attributes
    ----------
    field, message : str
        As given; ``str(err)`` is ``"<field>: <message>"``. The command line prints it and exits
        with status 2.
    """

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


def did_you_mean(name: object, allowed: Iterable[str]) -> str:
    """``"did you mean X? "`` for the registered name nearest ``name`` (difflib's ratio ≥ 0.6),
    else ``""``: the one place unknown names get a suggestion."""
    if not isinstance(name, str):
        return ""
    near = difflib.get_close_matches(name, [str(a) for a in allowed], n=1)
    return f"did you mean {near[0]}? " if near else ""


def unknown_name(
    field: str,
    what: str,
    name: object,
    allowed: Iterable[str],
    listed: str = "allowed",
    *,
    groups: Mapping[str, Iterable[str]] | None = None,
) -> ConfigError:
    """The error for a name that is not registered: ``FIELD: unknown WHAT 'NAME'; did you mean
    X? allowed: A, B, …`` (no ``'NAME'`` when it is the field, as for an unknown key).

    Parameters
    ----------
    field : str
        The field at fault (``"schemes"``).
    what : str
        What the name names (``"scheme"``, ``"key"``, ``"value"``).
    name : object
        The name given.
    allowed : iterable of str
        The registered names, in the order to list them.
    listed : str, default "allowed"
        The word before the list (``"stored"`` for the names a database holds).
    groups : mapping of str to iterable of str, optional
        The same names listed by group instead (``allowed: items (A, B); experiments (C)``).
    """
    names = [str(a) for a in allowed]
    hint = did_you_mean(name, names)
    named = "" if name == field else f" {name!r}"  # a key: the field is the name
    shown = ", ".join(names)
    if groups is not None:
        shown = "; ".join(f"{label} ({', '.join(map(str, g))})" for label, g in groups.items())
    return ConfigError(field, f"unknown {what}{named}; {hint}{listed}: {shown}")
