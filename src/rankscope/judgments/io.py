"""Reading and writing raters' judgments in every supported format.

A judgments file has one row per grade given: query, document, rater, grade
(empty = seen but not graded) and, optionally, when it was given. Formats:
CSV / TSV with a header, JSONL (one record a line), JSON (a list of records),
Parquet, and TREC qrels (one rater's judgments: the rater is named after the
file unless told). Column names other tools use are accepted (``qid``,
``annotator``, ``rating``, ``timestamp``...), case-insensitively.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from io import BytesIO
from typing import Any

import polars as pl

from rankscope.data._io import (
    PathLike,
    RowLocator,
    display_name,
    read_bytes,
    read_text,
    write_bytes,
)
from rankscope.data.formats import (
    RawFile,
    guess_format,
    id_column,
    read_raw,
    value_column,
    whole_grades,
)
from rankscope.data.trec import parse_trec
from rankscope.errors import InputError, OptionError, ParseError
from rankscope.judgments.scales import Scale

__all__ = [
    "ALIASES",
    "GRADE_STATUSES",
    "JUDGMENT_FORMATS",
    "STATUS_COLUMN",
    "canonical_frame",
    "check_format",
    "has_rater_column",
    "json_records",
    "judgments_of",
    "pick_column",
    "read_judgments_frame",
    "read_records",
    "write_judgments_frame",
]

JUDGMENT_FORMATS = ("trec", "json", "jsonl", "csv", "tsv", "parquet")
STATUS_COLUMN = "grade_status"
"""A column of grades files that marks history rows (see :func:`judgments_of`)."""
GRADE_STATUSES = ("counted", "advisory", "superseded", "retracted", "after freeze")


# Column names other tools use, mapped to ours (matched case-insensitively).
ALIASES: dict[str, tuple[str, ...]] = {
    "query_id": ("query_id", "qid", "query", "queryid", "query-id", "q_id", "topic",
                 "topic_id", "keyword", "keyword_id"),
    "doc_id": ("doc_id", "docid", "doc", "docno", "document", "document_id", "corpus_id",
               "corpus-id", "pid", "passage_id", "item", "item_id", "product_id"),
    "rater": ("rater", "rater_id", "annotator", "annotator_id", "assessor", "assessor_id",
              "judge", "judge_id", "grader", "grader_id", "user", "user_id", "worker",
              "worker_id", "labeler", "labeller"),
    "grade": ("grade", "rel", "relevance", "rating", "label", "judgment", "judgement", "score",
              "qrel"),
    "time": ("time", "timestamp", "graded_at", "created_at", "updated_at", "datetime", "date"),
}


def pick_column(columns: list[str], target: str, taken: set[str] | None = None) -> str | None:
    """The column of ``columns`` that is ``target`` under one of its :data:`ALIASES`."""
    taken = taken or set()
    lowered = {c.lower(): c for c in columns if c not in taken}
    for alias in ALIASES[target]:
        if alias in lowered:
            return lowered[alias]
    return None


def _default_rater(source: str) -> str:
    base = os.path.basename(source)
    for ext in (".gz", ".txt", ".qrels", ".csv", ".tsv", ".jsonl", ".json", ".parquet"):
        if base.lower().endswith(ext):
            base = base[: -len(ext)]
    return base or "rater"


def _numbers(
    text: pl.Series, what: str, source: str, locate: RowLocator, labels: Mapping[str, float]
) -> pl.Series:
    """Text -> Float64: empty is null, labels map to their grade, anything else is an error."""
    stripped = text.str.strip_chars().replace("", None)
    numbers = stripped.cast(pl.Float64, strict=False)
    if labels:
        named = stripped.str.to_lowercase().replace_strict(
            labels, default=None, return_dtype=pl.Float64
        )
        numbers = numbers.fill_null(named)
    bad = numbers.is_null() & stripped.is_not_null()
    if bad.any():
        row = int(bad.arg_true()[0])
        hint = f" or a label ({', '.join(labels)})" if labels else ""
        raise ParseError(
            f"{what} is not a number{hint}", source=source, line=locate(row),
            value=str(stripped[row]),
        )
    return numbers


def _times(column: pl.Series, source: str, locate: RowLocator) -> pl.Series:
    """A time column as Float64 (numbers) or Datetime (dates, ISO 8601 text)."""
    if column.dtype.is_numeric():
        return column.cast(pl.Float64)
    if column.dtype == pl.Date:
        return column.cast(pl.Datetime("us"))
    if isinstance(column.dtype, pl.Datetime):
        return column
    text = column.cast(pl.String).str.strip_chars().replace("", None)
    numbers = text.cast(pl.Float64, strict=False)
    if (numbers.is_not_null() == text.is_not_null()).all():
        return numbers
    try:
        parsed = text.str.to_datetime(strict=False, time_unit="us")
    except pl.exceptions.PolarsError:
        parsed = pl.Series(column.name, [None] * len(text), dtype=pl.Datetime("us"))
    bad = parsed.is_null() & text.is_not_null()
    if bad.any():
        row = int(bad.arg_true()[0])
        raise ParseError(
            "time is neither a number nor an ISO 8601 date/time",
            source=source, line=locate(row), value=str(text[row]),
        )
    return parsed


def canonical_frame(
    raw: pl.DataFrame,
    source: str,
    locate: RowLocator,
    *,
    scale: Scale | None = None,
    rater: str | None = None,
) -> pl.DataFrame:
    """Rename aliased columns and type them: ``query_id, doc_id, rater, grade[, time]``.

    A missing rater column means one rater: ``rater`` or the file's name.
    """
    taken: set[str] = set()
    chosen: dict[str, str | None] = {}
    for target in ("query_id", "doc_id", "rater", "grade", "time"):
        col = pick_column(raw.columns, target, taken)
        if col is None and target in ("query_id", "doc_id", "grade"):
            raise InputError(
                f"no {target} column (accepted names: {', '.join(ALIASES[target])}); "
                f"found {', '.join(raw.columns) or 'none'}",
                source=source,
            )
        if col is not None:
            taken.add(col)
        chosen[target] = col
    labels = scale.label_map() if scale is not None else {}
    grade_raw = value_column(raw.get_column(chosen["grade"]), "grade", source)  # type: ignore[arg-type]
    if grade_raw.dtype.is_numeric():
        grade = grade_raw.cast(pl.Float64)
    else:
        grade = _numbers(grade_raw.cast(pl.String), "grade", source, locate, labels)
    rater_col = chosen["rater"]
    columns = [
        id_column(raw.get_column(chosen["query_id"]), source).alias("query_id"),  # type: ignore[arg-type]
        id_column(raw.get_column(chosen["doc_id"]), source).alias("doc_id"),  # type: ignore[arg-type]
        (
            raw.get_column(rater_col).cast(pl.String).alias("rater")
            if rater_col is not None
            else pl.Series("rater", [rater or _default_rater(source)] * raw.height, pl.String)
        ),
        grade.alias("grade"),
    ]
    if chosen["time"] is not None:
        columns.append(_times(raw.get_column(chosen["time"]), source, locate).alias("time"))
    return pl.DataFrame(columns)


def _line_locator(data: bytes, *, skip_comments: bool, offset: int = 0) -> RowLocator:
    """Rows -> lines, skipping blank lines (and ``#`` comments), computed on first use."""
    cache: list[int] = []

    def locate(row: int) -> int | None:
        if not cache:
            for number, line in enumerate(data.splitlines(), start=1):
                stripped = line.strip()
                if not stripped or (skip_comments and stripped.startswith(b"#")):
                    continue
                cache.append(number)
        row += offset
        return cache[row] if 0 <= row < len(cache) else None

    return locate


def _no_line(row: int) -> int | None:
    return None


def json_records(data: bytes, fmt: str, source: str) -> list[tuple[int | None, Any]]:
    """The records of JSON Lines (one value a line) or JSON (a list): ``(line, value)``.

    The values as parsed, nested objects kept (a UBI record); a table of
    records is :func:`read_records`'. Blank lines of JSON Lines are skipped;
    a line that is not JSON is a :class:`ParseError` naming it. JSON records
    carry no line (None).
    """
    if fmt == "jsonl":
        out: list[tuple[int | None, Any]] = []
        for number, line in enumerate(data.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                out.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise ParseError(f"invalid JSON ({exc.msg})", source=source, line=number,
                                 value=line.decode("utf-8", "replace")) from None
        return out
    try:
        obj = json.loads(data)
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON ({exc.msg})", source=source, line=exc.lineno) from None
    if not isinstance(obj, list):
        raise ParseError("expected a JSON list of records", source=source)
    return [(None, rec) for rec in obj]


def _records_of(raw: RawFile, what: str) -> tuple[pl.DataFrame, RowLocator]:
    """A raw file's records as read (every column as text, or Parquet's types) and its lines."""
    if raw.nested is not None:
        raise ParseError(f"expected a JSON list of {what}", source=raw.source)
    frame = raw.frame if raw.frame is not None else pl.DataFrame()
    locate: RowLocator = _no_line
    if raw.fmt in ("csv", "tsv"):
        locate = _line_locator(raw.data, skip_comments=True, offset=1)
    elif raw.fmt == "jsonl":
        locate = _line_locator(raw.data, skip_comments=False)
    return frame, locate


def read_records(path: PathLike, fmt: str | None = None) -> tuple[pl.DataFrame, str, RowLocator]:
    """A table file with named columns, every column as read (text, or Parquet's types).

    CSV / TSV with a header, JSONL, JSON (a list of records) or Parquet, read
    once by :func:`rankscope.data.formats.read_raw`: the raw frame, the
    file's display name and a locator of rows' lines. The judgments and
    click-log readers map and check the columns.
    """
    fmt = check_format(fmt) if fmt else guess_format(path)
    if fmt == "trec":
        raise InputError("a TREC file has no column names; expected CSV, TSV, JSONL, JSON "
                         "or Parquet", source=display_name(path))
    raw = read_raw(path, fmt)
    frame, locate = _records_of(raw, "records")
    return frame, raw.source, locate


def read_judgments_frame(
    path: PathLike, fmt: str | None = None, *, scale: Scale | None = None,
    rater: str | None = None,
) -> tuple[pl.DataFrame, str, RowLocator]:
    """Read a judgments file: the canonical frame, its display name and a line locator.

    ``irds:NAME`` reads an ir_datasets collection's qrels as one rater's
    judgments (the rater is the collection's name unless told).
    """
    from rankscope.data.irds_prefix import is_irds

    if is_irds(path):
        from rankscope.data.formats import read_table

        frame, _, source, locate = read_table(path, "qrels")
        frame = frame.select("query_id", "doc_id",
                             pl.lit(rater or source, pl.String).alias("rater"), "grade")
        return frame, source, locate
    fmt = check_format(fmt) if fmt else guess_format(path)
    if fmt == "trec":
        data, source = read_text(path)
        frame, _ = parse_trec(data, source, "qrels")
        frame = frame.select(
            "query_id", "doc_id",
            pl.lit(rater or _default_rater(source), pl.String).alias("rater"), "grade",
        )
        return frame, source, _line_locator(data, skip_comments=True)
    return judgments_of(read_raw(path, fmt), scale=scale, rater=rater)


def judgments_of(raw: RawFile, *, scale: Scale | None, rater: str | None,
                  ) -> tuple[pl.DataFrame, str, RowLocator]:
    """A raw file's columns read as judgments (canonical frame, display name, locator).

    :func:`rankscope.judgments.relevance.read_relevance` calls it once it has
    seen a rater column in the file it read.
    """
    frame, locate = _records_of(raw, "judgment records")
    out = canonical_frame(frame, raw.source, locate, scale=scale, rater=rater)
    if STATUS_COLUMN in frame.columns:
        out, locate = _counted_rows(out, frame.get_column(STATUS_COLUMN), raw.source, locate)
    return out, raw.source, locate


def _counted_rows(frame: pl.DataFrame, status: pl.Series, source: str,
                  locate: RowLocator) -> tuple[pl.DataFrame, RowLocator]:
    """The rows a ``grade_status`` column marks as counted, and a locator of the rows kept.

    A grades export of the judging app is a complete record: beside the grades
    its numbers rest on (``counted``, or empty) it holds the grades that do
    not count there (``advisory``: a rater kept apart; ``superseded``,
    ``retracted``; ``after freeze``: given after the evaluation was frozen).
    Those are history, not grades to aggregate; any other value is an error.
    """
    text = status.cast(pl.String).fill_null("").str.strip_chars().str.to_lowercase()
    bad = ~text.is_in(["", *GRADE_STATUSES])
    if bad.any():
        row = int(bad.arg_true()[0])
        raise ParseError(
            f"{STATUS_COLUMN} must be one of {', '.join(GRADE_STATUSES)} (or empty)",
            source=source, line=locate(row), value=str(status[row]),
        )
    keep = text.is_in(["", "counted"])
    kept = keep.arg_true().to_list()
    return frame.filter(keep), lambda row: locate(kept[row]) if 0 <= row < len(kept) else None


def has_rater_column(path: PathLike, fmt: str | None = None) -> bool:
    """Whether a file has a rater column (i.e. holds judgments rather than qrels).

    Only the header (CSV / TSV), the first record (JSON, JSONL) or the schema
    (Parquet) is looked at; TREC files and ir_datasets collections never have one.
    """
    from rankscope.data.irds_prefix import is_irds

    if is_irds(path):
        return False
    fmt = check_format(fmt) if fmt else guess_format(path)
    if fmt == "trec":
        return False
    data = read_bytes(path) if fmt == "parquet" else read_text(path)[0]
    columns: list[str] = []
    if fmt in ("csv", "tsv"):
        for line in data.splitlines():
            text = line.decode("utf-8", "replace").strip()
            if text and not text.startswith("#"):
                columns = [c.strip().strip('"') for c in text.split("," if fmt == "csv" else "\t")]
                break
    elif fmt == "jsonl":
        for line in data.splitlines():
            if line.strip():
                try:
                    first = json.loads(line)
                except json.JSONDecodeError:
                    return False
                columns = list(first) if isinstance(first, Mapping) else []
                break
    elif fmt == "json":
        try:
            obj = json.loads(data)
        except json.JSONDecodeError:
            return False
        if isinstance(obj, list) and obj and isinstance(obj[0], Mapping):
            columns = list(obj[0])
    else:
        try:
            columns = list(pl.read_parquet_schema(BytesIO(data)))
        except Exception:  # not Parquet: the reader will say so
            return False
    return pick_column(columns, "rater") is not None


def check_format(fmt: str) -> str:
    """``fmt`` if it is a judgments format (lowercased), else :class:`OptionError`."""
    fmt = fmt.lower()
    if fmt not in JUDGMENT_FORMATS:
        raise OptionError(f"unknown format {fmt!r}; choose one of {', '.join(JUDGMENT_FORMATS)}")
    return fmt


def write_judgments_frame(frame: pl.DataFrame, path: PathLike, fmt: str | None = None) -> None:
    """Write judgments (``query_id, doc_id, rater, grade[, time]``) in a format.

    TREC qrels hold one rater's grades and no empty grade: writing several
    raters there is refused; ungraded rows are left out. Whole grades are
    written as integers (``3``, not ``3.0``) in the text formats.
    """
    fmt = check_format(fmt) if fmt else guess_format(path)
    if fmt != "parquet" and "grade" in frame.columns:
        frame = whole_grades(frame)
    if fmt == "trec":
        from rankscope.data.trec_writer import check_trec_ids, format_trec_qrels

        if frame.get_column("rater").n_unique() > 1:
            raise OptionError("a TREC qrels file holds one rater's judgments; write CSV instead")
        check_trec_ids(frame, "<stdout>" if os.fspath(path) == "-" else os.fspath(path))
        data = format_trec_qrels(frame.select("query_id", "doc_id", "grade"))
    elif fmt in ("csv", "tsv"):
        data = frame.write_csv(separator="," if fmt == "csv" else "\t").encode()
    elif fmt == "jsonl":
        data = frame.write_ndjson().encode()
    elif fmt == "json":
        data = (json.dumps(frame.to_dicts(), indent=1, default=str) + "\n").encode()
    else:
        buffer = BytesIO()
        frame.write_parquet(buffer)
        data = buffer.getvalue()
    write_bytes(path, data)
