"""TREC qrels and run files: a fast bulk parser with an exact, slow error path.

A qrels line is ``query iteration document grade``; a run line is
``query Q0 document rank score tag``. Fields are separated by any run of spaces
or tabs; lines starting with ``#`` are comments and blank lines are skipped
(``#`` inside a field is part of it). The rank column of a run is ignored, as
trec_eval ignores it.

The bulk path hands the bytes to polars' CSV reader. When that reader refuses
the data, or the result has holes, the slow path re-reads the original bytes
line by line to raise an error that names the file, the 1-based line and the
value: the two paths must agree on every valid file.
"""

from __future__ import annotations

import math
import re
from typing import Literal

import polars as pl

from rankscope.errors import ParseError

__all__ = ["format_trec_qrels", "format_trec_run", "parse_trec"]

Kind = Literal["qrels", "run"]

_LAYOUT: dict[str, tuple[int, str]] = {
    "qrels": (4, "query iteration document grade"),
    "run": (6, "query Q0 document rank score tag"),
}

_SPACES = re.compile(rb"[ \t\f\v]+")
_EDGES = re.compile(rb"(?m)^ | $")
_BLANK_LINES = re.compile(rb"\n\n+")


def _normalize(data: bytes) -> bytes:
    """Turn any whitespace layout into single-space-separated, non-blank lines."""
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if b"\t" in data:
        data = data.replace(b"\t", b" ")
    irregular = (
        b"  " in data
        or data[:1] in (b" ", b"\n")
        or b"\n " in data
        or b" \n" in data
        or b"\n\n" in data
        or data.endswith(b" ")
        or b"\f" in data
        or b"\v" in data
    )
    if irregular:
        data = _SPACES.sub(b" ", data)
        data = _EDGES.sub(b"", data)
        data = _BLANK_LINES.sub(b"\n", data).lstrip(b"\n")
    return data


def parse_trec(data: bytes, source: str, kind: Kind) -> tuple[pl.DataFrame, list[str]]:
    """Parse a TREC qrels or run file.

    Parameters
    ----------
    data : bytes
        The file's content (already un-gzipped).
    source : str
        The file's name, for messages.
    kind : {"qrels", "run"}
        Which layout to expect.

    Returns
    -------
    frame : polars.DataFrame
        Columns ``query_id``, ``doc_id`` (strings) and ``grade`` (qrels) or
        ``score`` (run), both float64, in file order.
    tags : list of str
        The distinct run tags in order of first appearance (empty for qrels).

    Raises
    ------
    ParseError
        A line with the wrong number of fields, or a grade / score that is not
        a finite number, naming the file, the line and the value.
    """
    frame, tags = _parse_bulk(data, kind)
    if frame is None:
        return _parse_slow(data, source, kind)
    return frame, tags


def _parse_bulk(data: bytes, kind: Kind) -> tuple[pl.DataFrame | None, list[str]]:
    n_fields, _ = _LAYOUT[kind]
    clean = _normalize(data)
    if not clean.strip():
        return _empty(kind), []
    value_name = "grade" if kind == "qrels" else "score"
    names = (
        ["query_id", "iteration", "doc_id", "grade"]
        if kind == "qrels"
        else ["query_id", "q0", "doc_id", "rank", "score", "tag"]
    )
    schema: dict[str, type[pl.DataType]] = {n: pl.String for n in names}
    schema[value_name] = pl.Float64
    try:
        raw = pl.read_csv(
            clean,
            separator=" ",
            has_header=False,
            comment_prefix="#",
            quote_char=None,
            schema=schema,
            truncate_ragged_lines=False,
            raise_if_empty=False,
        )
    except Exception:  # polars raises several types for malformed data
        return None, []
    if raw.width != n_fields:
        return None, []
    # A short line leaves nulls; any hole sends us to the exact slow path.
    if raw.null_count().row(0) != (0,) * n_fields:
        return None, []
    values = raw.get_column(value_name)
    if values.len() and not values.is_finite().all():
        return None, []
    frame = raw.select("query_id", "doc_id", value_name)
    tags: list[str] = []
    if kind == "run":
        tags = raw.get_column("tag").unique(maintain_order=True).to_list()
    return frame, tags


def _empty(kind: Kind) -> pl.DataFrame:
    value_name = "grade" if kind == "qrels" else "score"
    return pl.DataFrame(
        schema={"query_id": pl.String, "doc_id": pl.String, value_name: pl.Float64}
    )


def _parse_slow(data: bytes, source: str, kind: Kind) -> tuple[pl.DataFrame, list[str]]:
    """Line-by-line parse that raises the exact error for the first bad line."""
    n_fields, layout = _LAYOUT[kind]
    value_index = 3 if kind == "qrels" else 4
    value_name = "grade" if kind == "qrels" else "score"
    text = data.decode("utf-8", errors="replace")
    queries: list[str] = []
    docs: list[str] = []
    values: list[float] = []
    tags: dict[str, None] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) != n_fields:
            raise ParseError(
                f"expected {n_fields} fields ({layout}), found {len(fields)}",
                source=source,
                line=number,
                value=line,
            )
        token = fields[value_index]
        try:
            value = float(token)
        except ValueError:
            raise ParseError(
                f"{value_name} is not a number", source=source, line=number, value=token
            ) from None
        if not math.isfinite(value):
            raise ParseError(
                f"{value_name} is not a finite number", source=source, line=number, value=token
            )
        queries.append(fields[0])
        docs.append(fields[2])
        values.append(value)
        if kind == "run":
            tags.setdefault(fields[5], None)
    frame = pl.DataFrame(
        {"query_id": queries, "doc_id": docs, value_name: values},
        schema={"query_id": pl.String, "doc_id": pl.String, value_name: pl.Float64},
    )
    return frame, list(tags)


def _format_number(values: pl.Expr) -> pl.Expr:
    # Integral grades print as integers (trec_eval reads them with atol).
    return (
        pl.when(values == values.round(0))
        .then(values.cast(pl.Int64).cast(pl.String))
        .otherwise(values.cast(pl.String))
    )


def format_trec_qrels(frame: pl.DataFrame) -> bytes:
    """Render a qrels frame (``query_id, doc_id, grade``) as TREC lines."""
    graded = frame.filter(pl.col("grade").is_not_null())
    out = graded.select(
        pl.col("query_id"),
        pl.lit("0").alias("iteration"),
        pl.col("doc_id"),
        _format_number(pl.col("grade")).alias("grade"),
    )
    return out.write_csv(separator=" ", include_header=False, quote_style="never").encode()


def format_trec_run(frame: pl.DataFrame, tag: str) -> bytes:
    """Render a run frame as TREC lines, ranks numbered in trec_eval order."""
    ordered = frame.sort(
        ["query_id", "score", "doc_id"], descending=[False, True, True], maintain_order=True
    )
    out = ordered.select(
        pl.col("query_id"),
        pl.lit("Q0").alias("q0"),
        pl.col("doc_id"),
        (pl.int_range(pl.len()).over("query_id") + 1).alias("rank"),
        pl.col("score").cast(pl.String).alias("score"),
        pl.lit(tag).alias("tag"),
    )
    return out.write_csv(separator=" ", include_header=False, quote_style="never").encode()
