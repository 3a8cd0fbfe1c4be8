"""Click logs: the result pages users were shown and what they clicked.

A :class:`ClickLog` has one row per result shown: ``session_id`` and
``query_id`` (together they name one result page), ``doc_id``, ``position``
(1 = the top), ``clicked`` and ``purchased`` (0 or 1; a purchase implies the
result was clicked). The plain format, for teams without UBI, is a CSV / TSV
with a header, JSONL, JSON or Parquet file with these columns
(``purchased`` optional)::

    session_id,query_id,doc_id,position,clicked
    s1,q1,d3,1,0
    s1,q1,d7,2,1

UBI logs are read by :func:`rankscope.judgments.clicks.ubi.read_ubi`. Bad
records are errors naming the file, the line and the value; a result page
listing one position twice, or one document twice, is an error too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import polars as pl

from rankscope.data.formats import id_column
from rankscope.errors import InputError, ParseError
from rankscope.judgments.io import ALIASES, read_records

if TYPE_CHECKING:
    from rankscope.data._io import PathLike, RowLocator

__all__ = ["LOG_ALIASES", "ClickLog", "read_click_log"]

LOG_ALIASES: dict[str, tuple[str, ...]] = {
    "session_id": ("session_id", "session", "sid", "search_id", "serp_id"),
    "query_id": ALIASES["query_id"],
    "doc_id": (*ALIASES["doc_id"], "object_id"),
    "position": ("position", "rank", "pos", "ordinal"),
    "clicked": ("clicked", "click"),
    "purchased": ("purchased", "purchase", "converted"),
}
"""Column names accepted in a plain click log (matched case-insensitively)."""

_SCHEMA = {"session_id": pl.String, "query_id": pl.String, "doc_id": pl.String,
           "position": pl.Int64, "clicked": pl.Int8, "purchased": pl.Int8}
_FLAGS = {"0": 0, "1": 1, "false": 0, "true": 1}


def _by_row(row: int) -> int | None:
    return row + 1


class ClickLog:
    """Result pages shown and what was clicked on them: one row per result shown.

    Parameters
    ----------
    frame : polars.DataFrame
        Columns ``session_id``, ``query_id``, ``doc_id`` (text), ``position``
        (whole number >= 1), ``clicked`` and optionally ``purchased`` (0 or 1).
        A (``session_id``, ``query_id``) pair is one result page.
    source : str
        Where the log came from, for messages.
    notes : sequence of str
        What the reader left out and why (UBI events it could not place).

    Raises
    ------
    ParseError
        A position that is not a whole number >= 1, a flag other than 0 or
        1, an id that is not text or a whole number, a position or a document
        listed twice on one result page (file and line).

    Examples
    --------
    >>> import polars as pl
    >>> log = ClickLog(pl.DataFrame({
    ...     "session_id": ["s1", "s1", "s2", "s2"], "query_id": ["q1"] * 4,
    ...     "doc_id": ["a", "b", "b", "a"], "position": [1, 2, 1, 2],
    ...     "clicked": [1, 0, 1, 1]}))
    >>> log
    ClickLog(2 result pages, 1 queries, 4 results shown, 3 clicks, source='<memory>')
    """

    def __init__(self, frame: pl.DataFrame, *, source: str = "<memory>",
                 notes: Sequence[str] = (), _locate: RowLocator = _by_row) -> None:
        if "purchased" not in frame.columns:
            frame = frame.with_columns(pl.lit(0, pl.Int8).alias("purchased"))
        missing = [c for c in _SCHEMA if c not in frame.columns]
        if missing:
            raise InputError(f"a click log needs the columns {', '.join(_SCHEMA)}; "
                             f"missing {', '.join(missing)}", source=source)
        frame = _conform(frame, source, _locate)
        _check(frame, source, _locate)
        self._frame = frame
        self.source = source
        self.notes = list(notes)

    @classmethod
    def read(cls, path: PathLike, *, format: str | None = None) -> ClickLog:
        """Read a plain click log (CSV, TSV, JSONL, JSON, Parquet; ``-`` = stdin)."""
        return read_click_log(path, format=format)

    @property
    def frame(self) -> pl.DataFrame:
        """The rows: ``session_id, query_id, doc_id, position, clicked, purchased``."""
        return self._frame

    @property
    def n_pages(self) -> int:
        """How many result pages (session, query) the log holds."""
        return int(self._frame.select(pl.struct("session_id", "query_id").n_unique()).item())

    @property
    def n_queries(self) -> int:
        """How many distinct queries."""
        return int(self._frame.get_column("query_id").n_unique())

    def __len__(self) -> int:
        return self._frame.height

    def __repr__(self) -> str:
        clicks = int((self._frame.get_column("clicked") | self._frame.get_column("purchased"))
                     .cast(pl.Int64).sum())
        return (f"ClickLog({self.n_pages} result pages, {self.n_queries} queries, {len(self)} "
                f"results shown, {clicks} clicks, source={self.source!r})")


def _conform(frame: pl.DataFrame, source: str, locate: RowLocator) -> pl.DataFrame:
    """Type each column, refusing what is not an id, a whole number or a 0/1 flag."""
    return pl.DataFrame([
        *(id_column(frame.get_column(c), source).alias(c)
          for c in ("session_id", "query_id", "doc_id")),
        _whole_numbers(frame.get_column("position"), "position", source, locate)
        .alias("position"),
        *(_flags(frame.get_column(c), c, source, locate).alias(c)
          for c in ("clicked", "purchased")),
    ])


def _check(frame: pl.DataFrame, source: str, locate: RowLocator) -> None:
    """Positions >= 1, and no position or document twice on one result page."""
    nulls = frame.select(pl.any_horizontal(pl.col(c).is_null() for c in _SCHEMA)
                         .arg_true()).to_series()
    if nulls.len():
        row = int(nulls[0])
        empty = next(c for c in _SCHEMA if frame.get_column(c)[row] is None)
        raise ParseError(f"empty {empty}", source=source, line=locate(row))
    low = frame.get_column("position") < 1
    if low.any():
        row = int(low.arg_true()[0])
        raise ParseError("position must be 1 or more (1 = the top result)", source=source,
                         line=locate(row), value=str(frame.get_column("position")[row]))
    for key, what in (("position", "position"), ("doc_id", "document")):
        keys = pl.struct("session_id", "query_id", key)
        again = frame.select((~keys.is_first_distinct()).arg_true()).to_series()
        if again.len():
            second = int(again[0])
            s, q, v = (*frame.row(second)[:2], frame.get_column(key)[second])
            first = int(frame.select(((pl.col("session_id") == s) & (pl.col("query_id") == q)
                                      & (pl.col(key) == v)).arg_true().first()).item())
            raise ParseError(
                f"{what} {v!r} listed twice on the result page of session {s!r}, query {q!r} "
                f"(first at line {locate(first)})", source=source, line=locate(second))


def _pick(columns: list[str], target: str) -> str | None:
    lowered = {c.lower(): c for c in columns}
    return next((lowered[a] for a in LOG_ALIASES[target] if a in lowered), None)


def _whole_numbers(column: pl.Series, what: str, source: str, locate: RowLocator) -> pl.Series:
    """Text or numbers -> Int64; anything that is not a whole number is an error."""
    if column.dtype.is_integer():
        return column.cast(pl.Int64)
    if column.dtype == pl.Boolean:
        return column.cast(pl.Int64)
    text = column.cast(pl.String).str.strip_chars()
    numbers = text.cast(pl.Float64, strict=False)
    bad = (numbers.is_null() | (numbers.round(0) != numbers) | ~numbers.is_finite()) \
        & text.is_not_null()
    if bad.any():
        row = int(bad.arg_true()[0])
        raise ParseError(f"{what} is not a whole number", source=source, line=locate(row),
                         value=str(text[row]))
    return numbers.cast(pl.Int64)


def _flags(column: pl.Series, what: str, source: str, locate: RowLocator) -> pl.Series:
    """0 / 1 (also true / false) -> Int8; anything else is an error."""
    if column.dtype == pl.Boolean:
        return column.cast(pl.Int8)
    if column.dtype.is_numeric():
        bad = ~column.is_in([0, 1]) & column.is_not_null()
        flags = column.cast(pl.Int8, strict=False)
    else:
        text = column.cast(pl.String).str.strip_chars().str.to_lowercase()
        flags = text.replace_strict(_FLAGS, default=None, return_dtype=pl.Int8)
        bad = flags.is_null() & text.is_not_null()
    if bad.any():
        row = int(bad.arg_true()[0])
        raise ParseError(f"{what} must be 0 or 1", source=source, line=locate(row),
                         value=str(column[row]))
    return flags


def log_from_records(raw: pl.DataFrame, source: str, locate: RowLocator) -> ClickLog:
    """A :class:`ClickLog` from a table with the plain format's columns (aliases accepted)."""
    chosen = {c: _pick(raw.columns, c) for c in LOG_ALIASES}
    missing = [c for c, col in chosen.items() if col is None and c != "purchased"]
    if missing:
        raise InputError(
            f"a click log needs the columns session_id, query_id, doc_id, position, clicked "
            f"(purchased optional); no {', '.join(missing)} column among "
            f"{', '.join(raw.columns) or 'none'}", source=source)
    names = {c: col for c, col in chosen.items() if col is not None}
    frame = raw.select(pl.col(col).alias(c) for c, col in names.items())
    return ClickLog(frame, source=source, _locate=locate)


def read_click_log(path: PathLike, *, format: str | None = None) -> ClickLog:
    """Read a plain click log: ``session_id,query_id,doc_id,position,clicked[,purchased]``.

    One row per result shown (position 1 = the top); ``clicked`` and
    ``purchased`` are 0 or 1. CSV / TSV with a header, JSONL, JSON (a list of
    records) or Parquet, chosen by the file name unless ``format`` says.

    Raises
    ------
    ParseError
        A missing column, a position that is not a whole number >= 1, a flag
        other than 0 / 1, a position or document twice on one result page
        (file, line and value).
    """
    raw, source, locate = read_records(path, format)
    return log_from_records(raw, source, locate)
