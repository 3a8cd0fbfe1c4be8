"""CSV and TSV with a header: every field as text, and every row as wide as the header.

polars reads the bytes; a row with fewer fields than the header would come
back padded with nulls (a grade silently missing) and a row with more makes
polars fail with a multi-line message. Both become one
:class:`~rankscope.errors.ParseError` naming the file, the line and the row.
The field count is checked only when polars failed or returned an empty
field, so well-formed files pay nothing for it.

**Spreadsheet formulas.** A cell starting with ``=``, ``+``, ``-``, ``@``, a
tab or a carriage return is a formula to Excel, LibreOffice and Google
Sheets (``=HYPERLINK(...)`` becomes a live link, and worse). rankscope's
CSV and TSV exports write such a cell with a ``'`` in front
(:func:`neutralise_cell`; a plain number such as ``-1`` stays as it is), which
spreadsheets show as text; :func:`read_delimited` takes one ``'`` off again
(:func:`restore_cell`), so an export read back gives the values written. A
cell that starts with ``'`` followed by one of those characters gets one
more ``'``, so the round trip holds for it too.
"""

from __future__ import annotations

import csv
import io
import re

import polars as pl

from rankscope.errors import ParseError

__all__ = [
    "check_field_counts",
    "neutralise_cell",
    "neutralise_frame",
    "read_delimited",
    "restore_cell",
]

_FORMULA = r"^'*[=+\-@\t\r]"
_NUMBER = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"
_ESCAPED = r"^'+[=+\-@\t\r]"


def neutralise_cell(value: str) -> str:
    """A cell as a CSV/TSV export writes it: a formula gets a ``'`` in front.

    Examples
    --------
    >>> [neutralise_cell(v) for v in ("=HYPERLINK(A1)", "+1+2", "@SUM(A1)", "-1", "2.5",
    ...                               "shoes", "'=x")]
    ["'=HYPERLINK(A1)", "'+1+2", "'@SUM(A1)", '-1', '2.5', 'shoes', "''=x"]
    """
    if re.match(_FORMULA, value) and not re.match(_NUMBER, value):
        return "'" + value
    return value


def restore_cell(value: str) -> str:
    """A cell as read back: the ``'`` :func:`neutralise_cell` added is taken off.

    Examples
    --------
    >>> [restore_cell(neutralise_cell(v)) for v in ("=x", "'=x", "-1", "'x")]
    ['=x', "'=x", '-1', "'x"]
    """
    return value[1:] if re.match(_ESCAPED, value) else value


def neutralise_frame(frame: pl.DataFrame) -> pl.DataFrame:
    """Every text column of ``frame`` through :func:`neutralise_cell` (vectorised)."""
    texts = [name for name, kind in frame.schema.items() if kind == pl.String]
    return frame.with_columns([
        pl.when(pl.col(name).str.contains(_FORMULA) & ~pl.col(name).str.contains(_NUMBER))
        .then(pl.lit("'") + pl.col(name)).otherwise(pl.col(name)).alias(name)
        for name in texts])


def check_field_counts(data: bytes, separator: str, source: str) -> None:
    """Raise :class:`ParseError` at the first row whose field count is not the header's.

    Lines starting with ``#`` (comments) and blank lines are skipped, as the
    reader skips them; quoted fields may hold separators and line breaks.
    """
    text = data.decode("utf-8", "replace").lstrip("\ufeff")
    lines = io.StringIO(text)
    reader = csv.reader(lines, delimiter=separator)
    header: list[str] | None = None
    start = 1
    for row in reader:
        line = start
        start = reader.line_num + 1
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        if row[0].startswith("#"):
            continue
        if header is None:
            header = row
            continue
        if len(row) != len(header):
            few = "few" if len(row) < len(header) else "many"
            raise ParseError(
                f"too {few} fields: {len(row)} where the header ({separator.join(header)}) "
                f"has {len(header)}",
                source=source,
                line=line,
                value=separator.join(row),
            )


def read_delimited(data: bytes, fmt: str, source: str) -> pl.DataFrame:
    """Read CSV (``fmt="csv"``) or TSV with a header, all columns as strings.

    Raises
    ------
    ParseError
        A row wider or narrower than the header (file, line, row), or text
        polars cannot read as CSV at all.
    """
    separator = "," if fmt == "csv" else "\t"
    try:
        raw = pl.read_csv(data, separator=separator, infer_schema=False, comment_prefix="#")
    except Exception as exc:  # polars raises several types for malformed text
        check_field_counts(data, separator, source)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ParseError(f"malformed {fmt.upper()} ({first})", source=source) from None
    if raw.height and raw.null_count().sum_horizontal().item():
        check_field_counts(data, separator, source)  # a null may be a short row
    return _restore_frame(raw) if b"'" in data else raw


def _restore_frame(frame: pl.DataFrame) -> pl.DataFrame:
    """:func:`restore_cell` on every column that has a cell starting with ``'`` (a prefix
    test first: the regular expression runs only on the columns where it may apply)."""
    if not frame.height:
        return frame
    quoted = frame.select(pl.col(name).str.starts_with("'").any() for name in frame.columns)
    names = [name for name, found in zip(frame.columns, quoted.row(0), strict=True) if found]
    return frame.with_columns(
        pl.when(pl.col(name).str.contains(_ESCAPED)).then(pl.col(name).str.slice(1))
        .otherwise(pl.col(name)).alias(name) for name in names)
