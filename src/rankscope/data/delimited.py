"""CSV and TSV with a header: every field as text, and every row as wide as the header.

polars reads the bytes; a row with fewer fields than the header would come
back padded with nulls (a grade silently missing) and a row with more makes
polars fail with a multi-line message. Both become one
:class:`~rankscope.errors.ParseError` naming the file, the line and the row.
The field count is checked only when polars failed or returned an empty
field, so well-formed files pay nothing for it.
"""

from __future__ import annotations

import csv
import io

import polars as pl

from rankscope.errors import ParseError

__all__ = ["check_field_counts", "read_delimited"]


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
    return raw
