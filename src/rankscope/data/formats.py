"""Readers and writers for every supported format, frame by frame.

The tables built from them, and from anything else users pass as qrels or a
run, are in :mod:`rankscope.data.tables` (``as_qrels``, ``as_run``).
Formats: ``trec`` (whitespace separated, ``#`` comments), ``json`` (nested
``{query: {doc: value}}`` or a list of records), ``jsonl`` (one record a
line), ``csv`` / ``tsv`` (with a header), ``parquet``; any of them gzipped
(``.gz``). In memory: polars and pandas DataFrames, and nested dicts.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from io import BytesIO
from typing import Any

import polars as pl

from rankscope.data._io import (
    Kind,
    PathLike,
    RowLocator,
    display_name,
    read_bytes,
    read_text,
    write_bytes,
)
from rankscope.data.delimited import read_delimited
from rankscope.data.json_text import KeyedDict, find_key_line, loads_keeping_duplicates
from rankscope.data.trec import parse_trec
from rankscope.data.trec_writer import check_trec_ids, format_trec_qrels, format_trec_run
from rankscope.errors import (
    DependencyError,
    FileAccessError,
    InputError,
    OptionError,
    ParseError,
    RankscopeWarning,
)

__all__ = [
    "FORMATS",
    "RawFile",
    "canonical_columns",
    "frame_from_nested_dict",
    "guess_format",
    "id_column",
    "raw_columns",
    "read_raw",
    "read_table",
    "require_pandas",
    "value_column",
    "whole_grades",
    "write_table",
]


FORMATS = ("trec", "json", "jsonl", "csv", "tsv", "parquet")

_EXTENSIONS = {
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".tsv": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
}

# Column names other tools use, mapped to ours (matched case-insensitively).
_ALIASES = {
    "query_id": ("query_id", "qid", "query", "query-id", "queryid", "topic", "topic_id", "q_id"),
    "doc_id": (
        "doc_id", "docid", "doc", "docno", "document", "document_id", "corpus-id", "corpus_id",
        "pid", "passage_id", "item", "item_id",
    ),
    "grade": ("grade", "rel", "relevance", "label", "judgment", "judgement", "score", "qrel"),
    "score": ("score", "sim", "similarity", "retrieval_score", "value"),
}


def guess_format(path: PathLike) -> str:
    """The format implied by a file name (``trec`` when nothing else fits)."""
    name = os.fspath(path).lower()
    if name.endswith(".gz"):
        name = name[:-3]
    _, ext = os.path.splitext(name)
    return _EXTENSIONS.get(ext, "trec")


def _check_format(fmt: str) -> str:
    fmt = fmt.lower()
    if fmt not in FORMATS:
        raise OptionError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return fmt


@dataclass(frozen=True)
class RawFile:
    """A CSV, TSV, JSONL, JSON or Parquet file read once, before its columns are interpreted.

    ``frame`` holds the file's own columns, one row a record (text as text);
    ``nested`` a JSON object ``{query: {doc: value}}`` instead. What the
    columns mean (qrels, a run, raters' judgments) is decided from them by the
    caller, without reading the file again.
    """

    fmt: str
    source: str
    data: bytes
    frame: pl.DataFrame | None
    nested: Mapping[Any, Any] | None = None


def read_raw(path: PathLike, fmt: str | None = None) -> RawFile:
    """Read a file that is not TREC into its own columns (see :class:`RawFile`)."""
    fmt = _check_format(fmt) if fmt else guess_format(path)
    if fmt == "trec":
        raise OptionError("a TREC file has fixed columns: read it with read_table")
    if fmt == "parquet":
        source = display_name(path)
        data = read_bytes(path)
        try:
            return RawFile(fmt, source, data, pl.read_parquet(BytesIO(data)))
        except Exception as exc:  # polars raises several types for bad files
            raise FileAccessError(f"not a readable Parquet file ({exc})", source=source) from None
    data, source = read_text(path)
    if fmt in ("csv", "tsv"):
        return RawFile(fmt, source, data, read_delimited(data, fmt, source))
    if fmt == "jsonl":
        return RawFile(fmt, source, data, _jsonl_records(data, source))
    try:
        obj = loads_keeping_duplicates(data)
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON ({exc.msg})", source=source, line=exc.lineno) from None
    if isinstance(obj, Mapping):
        return RawFile(fmt, source, data, None, nested=obj)
    if isinstance(obj, list):
        for i, rec in enumerate(obj):
            if isinstance(rec, KeyedDict) and rec.duplicates:
                raise ParseError(f"key {rec.duplicates[0]!r} twice in record {i + 1}",
                                 source=source)
        return RawFile(fmt, source, data, _records_frame(obj, source) if obj else None)
    raise ParseError("expected a JSON object {query: {doc: value}} or a list", source=source)


def raw_columns(raw: RawFile, kind: Kind) -> tuple[pl.DataFrame, RowLocator]:
    """A raw file's qrels or run columns (``query_id, doc_id`` and the value), and its lines."""
    value = "grade" if kind == "qrels" else "score"
    if raw.nested is not None:
        frame = frame_from_nested_dict(raw.nested, value, raw.source, text=raw.data)
        return frame, _no_line
    if raw.frame is None:
        return _empty(value), _no_line
    if raw.fmt == "parquet":
        return canonical_columns(raw.frame, value, raw.source), _no_line
    if raw.fmt in ("csv", "tsv"):
        return canonical_columns(raw.frame, value, raw.source, numeric_from_text=True,
                                 header_lines=1), lambda row: row + 2
    if raw.fmt == "jsonl":
        frame = canonical_columns(raw.frame, value, raw.source, numeric_from_text=True)
        return frame, _jsonl_locator(raw.data)
    return canonical_columns(raw.frame, value, raw.source, numeric_from_text=True), _no_line


def read_table(
    path: PathLike, kind: Kind, fmt: str | None = None
) -> tuple[pl.DataFrame, list[str], str, RowLocator]:
    """Read a qrels or run file into canonical columns.

    Returns the frame, the run tags (TREC runs only), the display name and a
    function mapping a row of the frame back to the file's 1-based line.
    Qrels named ``irds:NAME`` are read through ir_datasets
    (:mod:`rankscope.data.irds`).
    """
    from rankscope.data.irds_prefix import is_irds

    if is_irds(path):
        return _read_irds(os.fspath(path), kind)
    fmt = _check_format(fmt) if fmt else guess_format(path)
    if fmt != "trec":
        raw = read_raw(path, fmt)
        frame, locate = raw_columns(raw, kind)
        return frame, [], raw.source, locate
    from rankscope.data.trec import read_trec_file

    streamed = read_trec_file(path, kind)  # plain files: chunked, parallel, bounded
    if streamed is not None:
        return streamed
    data, source = read_text(path)
    frame, tags = parse_trec(data, source, kind)
    return frame, tags, source, _trec_locator(data)


def _no_line(row: int) -> int | None:
    return None


def _read_irds(path: str, kind: Kind) -> tuple[pl.DataFrame, list[str], str, RowLocator]:
    """Qrels of an ir_datasets collection; subtopic qrels give each document its best grade."""
    from rankscope.data.irds import irds_qrels

    if kind != "qrels":
        raise InputError("an ir_datasets collection gives qrels, queries and documents, not "
                         "a run", source=path)
    frame, source = irds_qrels(path)
    if "subtopic_id" in frame.columns:
        frame = frame.group_by("query_id", "doc_id", maintain_order=True).agg(
            pl.col("grade").max())
    return frame, [], source, lambda row: None


def _trec_locator(data: bytes) -> RowLocator:
    """Map data rows to file lines, skipping comments and blank lines (lazily)."""
    cache: list[int] = []

    def locate(row: int) -> int | None:
        if not cache:
            for number, line in enumerate(data.splitlines(), start=1):
                stripped = line.strip()
                if stripped and not stripped.startswith(b"#"):
                    cache.append(number)
        return cache[row] if 0 <= row < len(cache) else None

    return locate


def _jsonl_locator(data: bytes) -> RowLocator:
    lines = [n for n, line in enumerate(data.splitlines(), start=1) if line.strip()]
    return lambda row: lines[row] if 0 <= row < len(lines) else None


def _pick(columns: list[str], target: str, taken: set[str]) -> str | None:
    lowered = {c.lower(): c for c in columns if c not in taken}
    for alias in _ALIASES[target]:
        if alias in lowered:
            return lowered[alias]
    return None


def canonical_columns(
    raw: pl.DataFrame,
    value: str,
    source: str,
    *,
    numeric_from_text: bool = False,
    header_lines: int = 0,
) -> pl.DataFrame:
    """Rename aliased columns to ``query_id``, ``doc_id`` and ``value``, and check them."""
    taken: set[str] = set()
    chosen: dict[str, str] = {}
    for target in ("query_id", "doc_id", value):
        col = _pick(raw.columns, target, taken)
        if col is None:
            raise InputError(
                f"no {target} column (accepted names: {', '.join(_ALIASES[target])}); "
                f"found {', '.join(raw.columns) or 'none'}",
                source=source,
            )
        taken.add(col)
        chosen[target] = col
    frame = raw.select(
        id_column(raw.get_column(chosen["query_id"]), source).alias("query_id"),
        id_column(raw.get_column(chosen["doc_id"]), source).alias("doc_id"),
        value_column(raw.get_column(chosen[value]), value, source).alias(value),
    )
    if numeric_from_text or frame.schema[value] == pl.String:
        text = frame.get_column(value).str.strip_chars()
        text = text.replace("", None)
        numbers = text.cast(pl.Float64, strict=False)
        bad = numbers.is_null() & text.is_not_null()
        if bad.any():
            row = int(bad.arg_true()[0])
            raise ParseError(
                f"{value} is not a number",
                source=source,
                line=row + 1 + header_lines,
                value=str(text[row]),
            )
        frame = frame.with_columns(numbers.alias(value))
    return frame


def id_column(column: pl.Series, source: str) -> pl.Series:
    """Query or document ids as text; whole-number floats (pandas' ``1.0``) become ``1``.

    A column of floats whose values are all whole numbers is read as
    integers, with a :class:`~rankscope.errors.RankscopeWarning`: pandas
    turns an integer column with a missing value into floats, and ``"1.0"``
    would never match the ``1`` of a TREC file. Other types than text and
    numbers (lists, structs, booleans, dates) are refused.
    """
    dtype = column.dtype
    if dtype == pl.String or dtype == pl.Null:
        return column.cast(pl.String)
    if dtype.is_float():
        present = column.drop_nulls()
        if present.len() and bool(((present.round(0) == present) & present.is_finite()).all()):
            warnings.warn(
                f"{source}: column {column.name!r} holds whole numbers as floats (e.g. "
                f"{present[0]!r}); read as integers ({int(present[0])}), as written in TREC "
                "files",
                RankscopeWarning,
                stacklevel=4,
            )
            return column.cast(pl.Int64).cast(pl.String)
        return column.cast(pl.String)
    if dtype.is_integer() or isinstance(dtype, pl.Categorical | pl.Enum):
        return column.cast(pl.String)
    raise ParseError(
        f"column {column.name!r} has type {dtype}; an id must be text or a whole number",
        source=source,
    )


def value_column(column: pl.Series, value: str, source: str) -> pl.Series:
    """The grade or score column: numbers, or text read as numbers later; nothing else."""
    dtype = column.dtype
    if dtype == pl.String or dtype == pl.Null or (dtype.is_numeric() and dtype != pl.Boolean):
        return column
    raise ParseError(
        f"column {column.name!r} has type {dtype}; a {value} must be a number",
        source=source,
    )


def _records_frame(records: list[Any], source: str) -> pl.DataFrame:
    """JSON records as text columns (a missing key or null is null)."""
    for i, rec in enumerate(records):
        if not isinstance(rec, Mapping):
            raise ParseError("expected an object per record", source=source, line=i + 1)
    columns: dict[str, list[Any]] = {}
    for rec in records:
        for key in rec:
            columns.setdefault(str(key), [])
    for rec in records:
        for key, col in columns.items():
            col.append(rec.get(key))
    return pl.DataFrame(
        {k: pl.Series(k, [None if v is None else str(v) for v in col], dtype=pl.String)
         for k, col in columns.items()}
    )


def _jsonl_records(data: bytes, source: str) -> pl.DataFrame | None:
    """One JSON object a line (blank lines skipped); None for a file without any."""
    records: list[Any] = []
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = loads_keeping_duplicates(line)
        except json.JSONDecodeError as exc:
            raise ParseError(
                f"invalid JSON ({exc.msg})", source=source, line=number,
                value=line.decode("utf-8", "replace"),
            ) from None
        if isinstance(record, KeyedDict) and record.duplicates:
            raise ParseError(f"key {record.duplicates[0]!r} twice in one record",
                             source=source, line=number)
        records.append(record)
    return _records_frame(records, source) if records else None


def _empty(value: str) -> pl.DataFrame:
    return pl.DataFrame(schema={"query_id": pl.String, "doc_id": pl.String, value: pl.Float64})


def frame_from_nested_dict(
    data: Mapping[Any, Any], value: str, source: str, *, text: bytes | None = None
) -> pl.DataFrame:
    """Flatten ``{query: {doc: value}}`` into canonical columns, checking every value.

    ``text`` is the JSON the mapping was parsed from (with
    :func:`~rankscope.data.json_text.loads_keeping_duplicates`): errors then
    name a line, and a key given twice is an error rather than "last wins".
    """
    queries: list[str] = []
    docs: list[str] = []
    values: list[float | None] = []

    def line_of(*keys: str, occurrence: int = 1) -> int | None:
        return None if text is None else find_key_line(text, keys, occurrence=occurrence)

    if isinstance(data, KeyedDict) and data.duplicates:
        q = data.duplicates[0]
        raise ParseError(f"query {q!r} given twice", source=source,
                         line=line_of(q, occurrence=2))
    for q, ranking in data.items():
        if not isinstance(ranking, Mapping):
            raise ParseError(
                f"query {q!r} maps to {type(ranking).__name__}, expected {{doc: {value}}}",
                source=source, line=line_of(q),
            )
        if isinstance(ranking, KeyedDict) and ranking.duplicates:
            d = ranking.duplicates[0]
            raise ParseError(f"document {d!r} given twice for query {q!r}", source=source,
                             line=line_of(q, d, occurrence=2))
        for d, v in ranking.items():
            if v is None:
                number = None
            elif isinstance(v, bool):
                raise ParseError(
                    f"{value} for query {q!r}, document {d!r} is a boolean, not a number",
                    source=source, line=line_of(q, d), value=json.dumps(v),
                )
            elif not isinstance(v, int | float):
                # a quoted number ("2") is text, as a boolean is: a JSON writer that quotes
                # its numbers has a bug worth seeing, not a grade to guess
                what = "text, not a number (write it without quotes)" if isinstance(
                    v, str) else "not a number"
                raise ParseError(
                    f"{value} for query {q!r}, document {d!r} is {what}",
                    source=source,
                    line=line_of(q, d),
                    value=json.dumps(v),
                )
            else:
                number = float(v)
            queries.append(str(q))
            docs.append(str(d))
            values.append(number)
    return pl.DataFrame(
        {"query_id": queries, "doc_id": docs, value: values},
        schema={"query_id": pl.String, "doc_id": pl.String, value: pl.Float64},
    )


def whole_grades(frame: pl.DataFrame, column: str = "grade") -> pl.DataFrame:
    """``frame`` with a float ``column`` of whole numbers as integers (``3``, not ``3.0``).

    Grades on an integral scale are written as the scale writes them; a column
    holding one fraction (a mean of grades) stays float.
    """
    values = frame.get_column(column)
    if not values.dtype.is_float():
        return frame
    present = values.drop_nulls()
    if present.len() and not bool((present.is_finite() & (present.round(0) == present)).all()):
        return frame
    return frame.with_columns(values.cast(pl.Int64))


def write_table(
    frame: pl.DataFrame, path: PathLike, kind: Kind, fmt: str | None, *, tag: str
) -> None:
    """Write canonical columns in a format (see :data:`FORMATS`); whole grades as integers."""
    fmt = _check_format(fmt) if fmt else guess_format(path)
    value = "grade" if kind == "qrels" else "score"
    if kind == "qrels" and fmt != "parquet":
        frame = whole_grades(frame)
    if fmt == "trec":
        check_trec_ids(frame, "<stdout>" if os.fspath(path) == "-" else os.fspath(path))
        if kind == "qrels":
            data = format_trec_qrels(frame)
        else:
            data = format_trec_run(frame, tag)
    elif fmt == "json":
        nested: dict[str, dict[str, float | None]] = {}
        for q, d, v in frame.iter_rows():
            nested.setdefault(q, {})[d] = v
        data = (json.dumps(nested, indent=1) + "\n").encode()
    elif fmt == "jsonl":
        data = frame.select("query_id", "doc_id", value).write_ndjson().encode()
    elif fmt in ("csv", "tsv"):
        data = frame.write_csv(separator="," if fmt == "csv" else "\t").encode()
    else:
        buffer = BytesIO()
        frame.write_parquet(buffer)
        data = buffer.getvalue()
    write_bytes(path, data)


def require_pandas(purpose: str) -> Any:
    """Import pandas or raise :class:`~rankscope.errors.DependencyError`."""
    try:
        import pandas
    except ImportError:
        raise DependencyError("pandas", "pandas", purpose) from None
    return pandas
