"""One chunk of a TREC qrels or run file's bytes to its frame: the three readers.

:mod:`rankscope.data.trec` cuts a file at line ends and hands each chunk to
:func:`_parse_chunk` (the bulk readers: polars' CSV reader on single
separators, whole lines split for any other layout), then to
:func:`_read_slow` when neither takes it (line by line, naming the first bad
line). Each gives ``(frame, tags)``; ``compact`` holds the query ids as a
polars Categorical (see :data:`rankscope.data.trec.COMPACT_FROM`).
"""

from __future__ import annotations

from functools import partial

import polars as pl

from rankscope.data._io import Kind
from rankscope.data.trec_rules import (
    LineRules,
    Problem,
    read_any_spacing,
    read_rows,
    read_separated,
)
from rankscope.errors import ParseError

Parsed = tuple[pl.DataFrame, list[str]]
"""A chunk's frame and its run tags (distinct, in order of first appearance)."""

_LAYOUT: dict[str, tuple[int, str]] = {
    "qrels": (4, "query iteration document grade"),
    "run": (6, "query Q0 document rank score tag"),
}
_NAMES = {
    "qrels": ["query_id", "iteration", "doc_id", "grade"],
    "run": ["query_id", "q0", "doc_id", "rank", "score", "tag"],
}
_VALUE_AT = {"qrels": 3, "run": 4}

def _value_name(kind: Kind) -> str:
    return "grade" if kind == "qrels" else "score"


def _query_type(compact: bool) -> type[pl.DataType]:
    """The query column's type: a Categorical when the file is held compact (COMPACT_FROM)."""
    return pl.Categorical if compact else pl.String


def _empty(kind: Kind, compact: bool = False) -> pl.DataFrame:
    value = _value_name(kind)
    return pl.DataFrame(schema={"query_id": _query_type(compact), "doc_id": pl.String,
                                value: pl.Float64})


# -- the three readers of one chunk ----------------------------------------------------------


def _finish(raw: pl.DataFrame, kind: Kind, compact: bool = False) -> Parsed | None:
    """Check a chunk read by polars; None when anything is missing or not finite."""
    value = _value_name(kind)
    if raw.null_count().sum_horizontal().item() != 0:
        return None
    values = raw.get_column(value)
    if values.len() and not values.is_finite().all():
        return None
    frame = raw.select("query_id", "doc_id", value)
    if compact and frame.schema["query_id"] != pl.Categorical:
        frame = frame.with_columns(pl.col("query_id").cast(pl.Categorical))
    tags: list[str] = []
    if kind == "run":
        tag = raw.get_column("tag")
        # one tag throughout (a run as systems write it): a comparison, not a hash of every row
        one = tag.len() > 0 and bool((tag == tag[0]).all())
        tags = [tag[0]] if one else tag.unique(maintain_order=True).to_list()
    return frame, tags


def _read_regular(chunk: bytes, kind: Kind, compact: bool = False) -> Parsed | None:
    """Single-separator files: polars' CSV reader directly on the bytes."""
    if b"\x0b" in chunk or b"\x0c" in chunk:
        return None
    if b"\r" in chunk and chunk.count(b"\r") != chunk.count(b"\r\n"):
        return None  # a lone CR ends a line; polars would not see it
    if b"\t" in chunk:
        if b" " in chunk:
            return None
        separator = "\t"
    else:
        separator = " "
    names = _NAMES[kind]
    value = _value_name(kind)
    keep = [i for i, n in enumerate(names) if n in ("query_id", "doc_id", value, "tag")]
    raw = read_separated(chunk, names, keep, value, separator=separator,
                         categorical=("query_id",) if compact else ())
    return None if raw is None else _finish(raw, kind, compact)


def _read_irregular(chunk: bytes, kind: Kind, compact: bool = False) -> Parsed | None:
    """Any whitespace layout: the family's whole-line reader."""
    raw = read_any_spacing(chunk, _NAMES[kind], _value_name(kind))
    return None if raw is None else _finish(raw, kind, compact)


def _fail(problem: Problem, source: str, line: int, data_line: int,
          fields: list[bytes], raw: bytes, kind: Kind) -> ParseError:
    """rankscope's error for a bad line: the file, the physical line and the value."""
    value_name = _value_name(kind)
    if problem == "text":
        return ParseError("not valid UTF-8 text", source=source, line=line,
                          value=raw.decode("utf-8", errors="replace"))
    if problem == "fields":
        n_fields, layout = _LAYOUT[kind]
        hint = ""
        if source == "<stdin>":
            from rankscope.errors import setting

            hint = (f"; standard input is read as TREC unless its format is named "
                    f"({setting('format', flag=f'--{kind}-format')})")
        return ParseError(f"expected {n_fields} fields ({layout}), found {len(fields)}{hint}",
                          source=source, line=line,
                          value=" ".join(f.decode("utf-8") for f in fields))
    token = fields[_VALUE_AT[kind]].decode("utf-8")
    what = "not a number" if problem == "number" else "not a finite number"
    return ParseError(f"{value_name} is {what}", source=source, line=line, value=token)


def _rules(kind: Kind) -> LineRules:
    """rankscope's own TREC rules (see :mod:`rankscope.data.trec_rules`)."""
    value_at = _VALUE_AT[kind]
    return LineRules(
        n_fields=_LAYOUT[kind][0], at_least=False,
        keep=(0, 2, value_at) + ((5,) if kind == "run" else ()), numbers=(value_at,),
        parse_number=float, finite=True, universal_newlines=True, comments="first_field",
        encoding="utf-8", check_text=True, number_encoding="utf-8",
        fail=partial(_fail, kind=kind),
    )


_RULES: dict[str, LineRules] = {"qrels": _rules("qrels"), "run": _rules("run")}


def _read_slow(chunk: bytes, kind: Kind, source: str, first_line: int,
               compact: bool = False) -> Parsed:
    """Line by line; raises the exact error for the first bad line of the chunk."""
    value_name = _value_name(kind)
    columns = read_rows(chunk, _RULES[kind], source, first_line)
    frame = pl.DataFrame(
        {"query_id": columns[0], "doc_id": columns[1], value_name: columns[2]},
        schema={"query_id": pl.String, "doc_id": pl.String, value_name: pl.Float64},
    )
    if compact:
        frame = frame.with_columns(pl.col("query_id").cast(pl.Categorical))
    return frame, list(dict.fromkeys(columns[3])) if kind == "run" else []


def _parse_chunk(chunk: bytes, kind: Kind, compact: bool = False) -> Parsed | None:
    """The bulk readers; None means the chunk needs the slow path.

    ``compact``: the query column as a polars Categorical (see ``trec.COMPACT_FROM``).
    """
    return _read_regular(chunk, kind, compact) or _read_irregular(chunk, kind, compact)
