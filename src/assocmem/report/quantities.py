"""Measured quantities in words, for the report and the command line: a quantity's name read from
its key (:func:`quantity_name`), its unit (:func:`unit_of`) and its numbers as shown."""

import math
import re


def json_number(value: float) -> float | str:
    """A number for JSON: non-finite values as strings ("inf", "nan")."""
    return value if isinstance(value, int) or math.isfinite(value) else str(float(value))


def format_measured(measured: dict[str, float]) -> str:
    """``name=value, …`` with 4 significant digits (integers as they are)."""
    return ", ".join(f"{k}={number_text(v)}" for k, v in measured.items())


def number_text(v: float, digits: int = 4) -> str:
    """A number with ``digits`` significant digits (integers as they are)."""
    return str(v) if isinstance(v, int) else f"{v:.{digits}g}" if math.isfinite(v) else str(v)


def quantity_text(value: float, unit: str) -> str:
    """A measured value as a reader takes it in: a probability (an error, a share) in percent,
    anything else with its unit, 3 significant digits (0.003363 → "0.336 %")."""
    if unit == "probability" and not isinstance(value, int) and math.isfinite(value):
        return f"{100 * value:.3g} %"
    text = number_text(value, digits=3)
    return f"{text} {unit}" if unit else text


SYMBOLS = {"rho": "ρ", "alpha": "α", "lr": "lr"}


WORDS = {"le": "≤", "ge": "≥", "se": "s.e.", "sem": "s.e.", "rel": "relative", "nmi": "NMI",
         "ci": "CI", "mc": "MC", "abs": "absolute", "p90": "90th percentile", "gd": "GD",
         "sgd": "SGD", "n": "N", "d": "in d", "T": "in T"}  # fmt: skip


_PARAMETER = re.compile(r"^(d|T|M|B|H|K|G|k|rho|alpha|lr)(\d[\d.e+]*)$")


def _power_of_ten(value: str) -> str:
    """``1e4`` as :math:`10^4`; other numbers as written."""
    match = re.fullmatch(r"1e\+?(\d+)", value)
    return (
        "10" + match.group(1).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
        if match
        else value
    )


def quantity_name(key: str) -> str:
    """A measured key read as a quantity: ``min_error_d_le_200`` → "min error (d ≤ 200)",
    ``truncate_d10_T1e4`` → "truncate (d = 10, T = 10⁴)", ``slope_rho0.5`` → "slope (ρ = 0.5)".
    Keys that are not plain identifiers are shown as they are."""
    if not re.fullmatch(r"[A-Za-z0-9_.+]+", key):
        return key
    tokens, words, settings = key.split("_"), [], []
    i = 0
    while i < len(tokens):
        token, parameter = tokens[i], _PARAMETER.match(tokens[i])
        if parameter:
            symbol = SYMBOLS.get(parameter.group(1), parameter.group(1))
            settings.append(f"{symbol} = {_power_of_ten(parameter.group(2))}")
        elif i + 2 < len(tokens) and tokens[i + 1] in ("le", "ge") and token in ("d", "T", "lr"):
            settings.append(f"{token} {WORDS[tokens[i + 1]]} {tokens[i + 2]}")
            i += 2
        else:
            words.append(WORDS.get(token, token))
        i += 1
    head = " ".join(words)
    if not settings:
        return head
    return f"{head} ({', '.join(settings)})" if head else ", ".join(settings)


# The unit a measured quantity's name implies, first match wins: step counts, capacities (edits),
# N_eff (tokens), counts of cells, d and T; slopes, exponents, ratios, indices, NMI, z-scores,
# fractions of cells and relative gaps are pure numbers (""); every other measured quantity of
# the claims is an error, a success share, a mass or a difference of them: a probability.
UNITS = (
    (r"steps", "steps"),
    (r"(^|_)(median|trained|threshold)_d\d", "edits"),
    (r"n_eff", "tokens"),
    (r"^(cells|points|pairs|rows|resolved|beaten)$|_cells$|^cells_", "cells"),
    (r"^dims_", "values of d"),
    (r"(^|_)dim$", "dimensions"),
    (r"n_samples$", "samples"),
    (r"^concepts_used$", "concepts"),
    (r"slope|exponent|ratio|index|nmi|distance|(^|_|: )z$|fraction|rel|over|miss|alpha_kl|d∈|"
     r"(^|_)ci(_|$)|predicted_alpha|^(adam|sgd)_H\d|^lr$|^gap(_sem)?$", ""),
    (r".", "probability"),
)  # fmt: skip


def unit_of(key: str) -> str:
    """The unit :data:`UNITS` reads from a measured quantity's name ("" for a pure number)."""
    for pattern, unit in UNITS:
        if re.search(pattern, key):
            return unit
    return ""
