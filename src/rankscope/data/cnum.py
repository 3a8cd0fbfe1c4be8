"""C library number parsing as trec_eval uses it: ``atol`` and ``atof``.

trec_eval reads relevance values with ``atol`` and scores with ``atof``; both
read the longest valid prefix and ignore the rest (``1.9`` is 1 for ``atol``,
``1.5abc`` is 1.5 for ``atof``, ``abc`` is 0 for both). Python's ``int()`` and
``float()`` are stricter, so these functions emulate the C semantics in the C
locale. Whitespace is C ``isspace``: space, tab, newline, vertical tab, form
feed and carriage return.
"""

from __future__ import annotations

import re

import numpy as np
import numpy.typing as npt
import polars as pl

__all__ = ["LONG_MAX", "LONG_MIN", "atof", "atof_series", "atol", "atol_series"]

LONG_MAX = 2**63 - 1
LONG_MIN = -(2**63)

_WS = " \t\n\v\f\r"
_ATOL = re.compile(r"[+-]?[0-9]+")
_DEC = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_HEX = re.compile(
    r"([+-]?)0[xX]((?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+))(?:[pP]([+-]?[0-9]+))?"
)
_SPECIAL = re.compile(r"([+-]?)(?:(inf(?:inity)?)|(nan(?:\([0-9A-Za-z_]*\))?))", re.IGNORECASE)


def atol(text: str) -> int:
    """C ``atol``: the leading integer of ``text`` (0 if none), clamped to a C long."""
    m = _ATOL.match(text.lstrip(_WS))
    if m is None:
        return 0
    return max(LONG_MIN, min(LONG_MAX, int(m.group())))


def atof(text: str) -> float:
    """C ``atof`` (``strtod`` prefix parse, C locale) of ``text``.

    Accepts decimal and hexadecimal floats, ``inf``/``infinity`` and
    ``nan``/``nan(...)`` in any case, with an optional sign; 0.0 when no
    prefix is a number.
    """
    s = text.lstrip(_WS)
    m = _HEX.match(s)
    if m is not None:
        sign, mantissa, exponent = m.group(1), m.group(2), m.group(3)
        try:
            value = float.fromhex(f"{sign}0x{mantissa}p{exponent or '0'}")
        except OverflowError:
            value = float("inf")
        return -value if sign == "-" and value == 0.0 else value
    m = _SPECIAL.match(s)
    if m is not None:
        negative = m.group(1) == "-"
        if m.group(2):
            return float("-inf") if negative else float("inf")
        return float("-nan") if negative else float("nan")
    m = _DEC.match(s)
    if m is None:
        # "0x" with no hex digits still reads the leading 0 (a valid prefix)
        return 0.0
    return float(m.group())


def atol_series(raw: pl.Series) -> npt.NDArray[np.int64]:
    """``atol`` of every string of a series, fast for plain integers."""
    fast = raw.cast(pl.Int64, strict=False)
    bad = fast.is_null() & raw.is_not_null()
    if bad.any():
        idx = bad.arg_true()
        slow = [atol(v) for v in raw.gather(idx).to_list()]
        fast = fast.scatter(idx, pl.Series(slow, dtype=pl.Int64))
    return fast.fill_null(0).to_numpy().astype(np.int64, copy=False)


def atof_series(raw: pl.Series) -> npt.NDArray[np.float64]:
    """``atof`` of every string of a series, fast for plain numbers."""
    fast = raw.cast(pl.Float64, strict=False)
    bad = fast.is_null() & raw.is_not_null()
    if bad.any():
        idx = bad.arg_true()
        slow = [atof(v) for v in raw.gather(idx).to_list()]
        fast = fast.scatter(idx, pl.Series(slow, dtype=pl.Float64))
    out = fast.fill_null(0.0).to_numpy().astype(np.float64, copy=False)
    return out
