"""Do two inputs share any query? The one place that decides it.

An evaluation whose run shares no query with the qrels (``Q1`` vs ``q1``,
pandas' float ids ``1.0`` vs ``"1"``, an empty file) would print 0 for every
metric: a number that means "nothing matched", not "the system is bad".
So every command that pairs two inputs by query (evaluate, compare, report,
similarity, fuse, the judgments path) asks :func:`check_overlap`:

- no shared query: :class:`~rankscope.errors.NoOverlapError`, naming how
  many queries each side has and a few ids of each (and the likely cause
  when the ids differ only in case or look like floats), unless the caller
  allows it (``allow_no_overlap=True``, ``--allow-no-overlap``);
- some queries on one side only: a :class:`~rankscope.errors.RankscopeWarning`
  with the counts (what happens to those queries is the query policy's
  business, see :func:`rankscope.evaluate`);
- the same queries on both sides: silence.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Collection, Sequence

from rankscope.errors import NoOverlapError, RankscopeWarning, setting

__all__ = ["allow_hint", "check_overlap", "check_query_sets", "few"]


def allow_hint() -> str:
    """How to accept no overlap, in the reader's spelling (``--allow-no-overlap`` on the
    command line, ``allow_no_overlap=True`` in Python)."""
    return f"{setting('allow_no_overlap', True)} to go on anyway"

_SHOWN = 3
_INTEGRAL_FLOAT = re.compile(r"^[+-]?\d+\.0+$")
_INTEGER = re.compile(r"^[+-]?\d+$")


def few(ids: Sequence[str], n: int = _SHOWN) -> str:
    """``Q1, Q2, Q3, ...``: the first ``n`` ids, with an ellipsis when there are more."""
    shown = ", ".join(ids[:n])
    return shown + (", ..." if len(ids) > n else "")


def _queries(n: int) -> str:
    return f"{n} query" if n == 1 else f"{n} queries"


def _side(name: str, n: int, ids: Sequence[str]) -> str:
    if n == 0:
        return f"{name} (no queries)"
    return f"{name} ({_queries(n)}: {few(ids)})" if ids else f"{name} ({_queries(n)})"


def _likely_cause(a_ids: Sequence[str], b_ids: Sequence[str]) -> str:
    """Why two id sets might not meet although they name the same queries."""
    if not a_ids or not b_ids:
        return ""
    a_floats = all(_INTEGRAL_FLOAT.match(q) for q in a_ids)
    b_floats = all(_INTEGRAL_FLOAT.match(q) for q in b_ids)
    a_ints = all(_INTEGER.match(q) for q in a_ids)
    b_ints = all(_INTEGER.match(q) for q in b_ids)
    if (a_floats and b_ints) or (b_floats and a_ints):
        return (" (the ids of one side look like floats, 1.0 vs 1: a column of floats, "
                "e.g. from pandas? write the ids as integers or strings)")
    if {q.casefold() for q in a_ids} & {q.casefold() for q in b_ids}:
        return " (the ids differ only in upper/lower case)"
    if {q.strip() for q in a_ids} & {q.strip() for q in b_ids}:
        return " (the ids differ only in surrounding spaces)"
    return ""


def check_overlap(
    a_name: str,
    a_count: int,
    a_only: Sequence[str],
    b_name: str,
    b_count: int,
    b_only: Sequence[str],
    *,
    allow: bool = False,
    warn: bool = True,
) -> int:
    """Refuse inputs that share no query; warn when they share only some.

    Parameters
    ----------
    a_name, b_name : str
        The two inputs as the user knows them (file names, run names).
    a_count, b_count : int
        How many distinct queries each has.
    a_only, b_only : sequence of str
        The queries of each that the other lacks (sorted; all of them).
    allow : bool, default False
        Accept no shared query (no error; the warning still says so).
    warn : bool, default True
        Issue the :class:`~rankscope.errors.RankscopeWarning` of a partial
        (or accepted empty) overlap.

    Returns
    -------
    int
        How many queries the two inputs share.

    Raises
    ------
    NoOverlapError
        When they share none and ``allow`` is False.

    Examples
    --------
    >>> check_overlap("run.txt", 2, ["Q1", "Q2"], "qrels.txt", 2, ["q1", "q2"])
    Traceback (most recent call last):
    ...
    rankscope.errors.NoOverlapError: no query of run.txt (2 queries: Q1, Q2) is in \
qrels.txt (2 queries: q1, q2) (the ids differ only in upper/lower case); \
allow_no_overlap=True to go on anyway
    """
    shared = a_count - len(a_only)
    if shared <= 0:
        text = (f"no query of {_side(a_name, a_count, a_only)} is in "
                f"{_side(b_name, b_count, b_only)}{_likely_cause(a_only, b_only)}")
        if not allow:
            raise NoOverlapError(f"{text}; {allow_hint()}")
        if warn:
            warnings.warn(text, RankscopeWarning, stacklevel=3)
        return 0
    if warn and (a_only or b_only):
        parts = []
        if a_only:
            parts.append(f"{len(a_only)} only in {a_name} ({few(a_only)})")
        if b_only:
            parts.append(f"{len(b_only)} only in {b_name} ({few(b_only)})")
        warnings.warn(
            f"{shared} of the {_queries(a_count)} of {a_name} are in {b_name} "
            f"({_queries(b_count)}); "
            + "; ".join(parts),
            RankscopeWarning,
            stacklevel=3,
        )
    return shared


def check_query_sets(
    a_name: str,
    a_ids: Collection[str],
    b_name: str,
    b_ids: Collection[str],
    *,
    allow: bool = False,
    warn: bool = True,
) -> int:
    """:func:`check_overlap` from two whole sets of query ids."""
    a, b = set(a_ids), set(b_ids)
    return check_overlap(a_name, len(a), sorted(a - b), b_name, len(b), sorted(b - a),
                         allow=allow, warn=warn)
