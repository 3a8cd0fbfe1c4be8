"""trec_eval's own input files: qrels, results (runs) and z-score files.

This is the trec_eval dialect of the TREC reader family
(:mod:`rankscope.data.trec_rules`): its line rules are :func:`rules` values
read by the family's line reader, and its bulk reads are the family's readers
given C number parsing. trec_eval's rules differ from rankscope's general
ones (:mod:`rankscope.data.trec`) in ways scripts rely on:

- relevance values are read with C ``atol`` (``1.9`` is 1, ``abc`` is 0) and
  scores with ``atof`` (a prefix parse, ``inf`` and ``nan`` accepted);
- lines end at ``\n`` only (a ``\r`` is a blank inside a line);
- a qrels line has exactly 4 fields; a blank qrels line is malformed; a line
  whose first byte is ``#`` is a comment, but only one comment line is skipped
  before each data line (trec_eval 10.0 parses a second one as data);
- a run line has at least 6 fields (the rest are ignored); blank run lines are
  skipped; a run line whose first non-blank character is ``#`` is a comment;
- "Malformed line N" counts only the lines parsed as data;
- duplicates are kept here: trec_eval complains about them only when the
  query is evaluated (the command's tables defer the check to the ranking
  step, which reports them per query, see :func:`rankscope.engine.ranking.rank`).

A file is read whole (memory-mapped). A results file first tries trec_eval's
own fast path (a one-pass layout proof, then polars reads only the columns it
needs, query positions included); a plain UTF-8 qrels file is read by polars
from its path too (no copy of it); other qrels files and anything the fast
reads refuse go to the family's bulk readers, and what they refuse is read
line by line, so errors and values are exactly trec_eval's.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial

import numpy as np
import numpy.typing as npt
import polars as pl

from rankscope.data.cnum import atof, atof_series, atol, atol_series
from rankscope.data.trec_input import _ODD_WS, Blob, Layout, decode_choice, read_input
from rankscope.data.trec_rules import (
    CommentRule,
    LineRules,
    Problem,
    drop_blank_rows,
    read_any_spacing,
    read_columns,
    read_rows,
    read_separated,
)
from rankscope.errors import TrecEvalExit

__all__ = [
    "Blob",
    "QrelsTable",
    "RunTable",
    "Zscores",
    "decode_choice",
    "parse_qrels",
    "parse_results",
    "parse_zscores",
    "read_input",
    "rules",
]

_WS_TO_SPACE = bytes.maketrans(b"\t\r\v\f", b"    ")
_QRELS_NAMES = ("query_id", "iteration", "doc_id", "rel")
_RUN_NAMES = ("query_id", "q0", "doc_id", "rank", "score", "tag")
_LEAN = ["column_1", "column_3", "column_5", "column_7"]
_FOUR = ["column_1", "column_3", "column_5", "column_6"]


@dataclass(frozen=True)
class QrelsTable:
    """Judgments in file order: ``query_id``, ``doc_id`` (str), ``rel`` (int64)."""

    frame: pl.DataFrame


@dataclass(frozen=True)
class RunTable:
    """Results in file order (``query_id``, ``doc_id``, ``score``) and the last run tag.

    A file read against a sorted query list holds ``query_id`` as an Enum of
    that list: its codes are each row's position in it (the ranking reads
    them; no array of them is kept here, 80 MB at 10^7 lines).
    """

    frame: pl.DataFrame
    run_id: str


@dataclass(frozen=True)
class Zscores:
    """Z-score lines sorted by (query, measure name) for trec_eval's lookup."""

    keys: list[tuple[str, str]]
    mean: list[float]
    stddev: list[float]


def _malformed(reader: str, problem: Problem, source: str, line: int, data_line: int,
               fields: list[bytes], raw: bytes) -> TrecEvalExit:
    """trec_eval's error for a bad line: "Malformed line N", N counting data lines only."""
    if reader == "get_zscores":
        return TrecEvalExit(f"trec_eval.{reader}: Malformed line {data_line}\n", 255)
    return TrecEvalExit.in_file(f"trec_eval.{reader}: Malformed line {data_line}", source)


# (reader, fields, more allowed, kept, numbers, number parser, comment rule) per file kind
_KINDS: dict[str, tuple[str, int, bool, tuple[int, ...], tuple[int, ...],
                        Callable[[str], float | int], CommentRule]] = {
    "qrels": ("get_qrels", 4, False, (0, 2, 3), (3,), atol, "first_byte_once"),
    "results": ("get_results", 6, True, (0, 2, 4, 5), (4,), atof, "first_field"),
    "zscores": ("get_zscores", 4, False, (0, 1, 2, 3), (2, 3), atof, "none"),
    "prefs": ("get_prefs", 5, False, (0, 1, 2, 3, 4), (), atof, "first_byte_once"),
    "qrels_prefs": ("get_qrels_prefs", 4, False, (0, 1, 2, 3), (), atof, "first_byte_once"),
    "qrels_jg": ("get_qrels_jg", 4, False, (0, 1, 2, 3), (), atol, "first_byte_once"),
}


def rules(kind: str, encoding: str) -> LineRules:
    """trec_eval's line rules for one kind of input file (see :mod:`.trec_rules`).

    Lines end at ``\n`` only; numbers are C ``atol``/``atof`` of the field's
    Latin-1 text (never an error); errors are "Malformed line N" with N
    counting data lines.
    """
    reader, n_fields, at_least, keep, numbers, parse, comments = _KINDS[kind]
    return LineRules(
        n_fields=n_fields, at_least=at_least, keep=keep, numbers=numbers,
        parse_number=parse, finite=False, universal_newlines=False, comments=comments,
        encoding=encoding, check_text=False, number_encoding="latin-1",
        fail=partial(_malformed, reader),
    )


def _as_utf8(data: bytes, encoding: str) -> bytes:
    return data if encoding == "utf-8" else data.decode(encoding).encode("utf-8")


def _read_frame(data: bytes | str, n_cols: int, float_col: int | None,
                columns: list[str] | None = None,
                queries: pl.Series | None = None, comments: bool = True) -> pl.DataFrame | None:
    schema: dict[str, pl.DataType] = {f"column_{i + 1}": pl.String() for i in range(n_cols)}
    if float_col is not None:
        schema[f"column_{float_col}"] = pl.Float64()
    if n_cols == 7:  # read only to see that no line has a 7th field: small type
        schema["column_7"] = pl.Int8()
    if queries is not None:
        schema["column_1"] = pl.Enum(queries)  # fails on a query not in the list
    return read_columns(data, schema, columns=columns, comments=comments, ragged=True)


# -- qrels --------------------------------------------------------------------------

def parse_qrels(blob: Blob, path: str, encoding: str) -> QrelsTable:
    """Parse a qrels file (``qid iter docno rel``), or raise trec_eval's error (exit 2)."""
    frame = None
    direct = blob.path is not None and encoding == "utf-8" and not blob.contains(b"#")
    if direct:
        # polars reads the file itself: no copy of it in the C heap, which kept the
        # copy's pages (627 MB for a 10^7-judgment qrels file of URLs) resident, free,
        # beside the frames through the run's reading and its ranking
        facts = blob.layout()
        direct = not facts.odd_whitespace
        if direct:
            frame = _qrels_fast(blob.path, facts.spaces)  # type: ignore[arg-type]  # a path
    if frame is None:
        data = blob.as_bytes()
        if not direct and not (data.startswith(b"#") or b"\n#" in data):
            frame = _qrels_fast(_as_utf8(data, encoding))
        if frame is None:
            frame = _qrels_slow(data, path, encoding)
    return QrelsTable(frame)


def _qrels_fast(data: bytes | str, spaces: int | None = None) -> pl.DataFrame | None:
    """The family's single-separator read, with C ``atol`` as the number parser.

    Any C whitespace byte separates fields as a space does. No line starts
    with ``#`` here, so a ``#`` is part of a field and every line is data:
    a blank, short, long or irregular line makes this refuse (the line
    reader then names it). ``data`` is the bytes, or the path of a file
    without other whitespace than spaces and newlines and its ``spaces``.
    """
    if isinstance(data, bytes) and any(ch in data for ch in _ODD_WS):
        data = data.translate(_WS_TO_SPACE)
    raw = read_separated(data, _QRELS_NAMES, (0, 2, 3), "rel", separator=" ",
                         comments=False, number=_atol_column, separators=spaces)
    if raw is None or raw.height == 0:
        return None
    return raw.select("query_id", "doc_id", "rel")


def _atol_column(raw: pl.Series) -> pl.Series:
    return pl.Series(raw.name, atol_series(raw))


def _qrels_slow(data: bytes, path: str, encoding: str) -> pl.DataFrame:
    columns = read_rows(data, rules("qrels", encoding), path)
    return pl.DataFrame(
        {"query_id": columns[0], "doc_id": columns[1], "rel": columns[2]},
        schema={"query_id": pl.String, "doc_id": pl.String, "rel": pl.Int64},
    )


# -- results ------------------------------------------------------------------------

def parse_results(blob: Blob, path: str, encoding: str,
                  queries: pl.Series | None = None,
                  layout: Future[Layout] | None = None) -> RunTable:
    """Parse a results file (``qid iter docno rank sim run_id ...``), or raise (exit 2).

    With ``queries`` (sorted, distinct), a file whose queries are all in the
    list is read with each row's query position already computed. ``layout``
    is the file's :meth:`Blob.layout` when already being computed elsewhere.
    """
    table = None
    if encoding == "utf-8":
        source: bytes | str = blob.path if blob.path is not None else blob.as_bytes()
        # Without a "#" anywhere, read the three columns we need (and the 7th,
        # to see that there is none) while this thread checks the layout that
        # makes that read exact; polars works without the GIL, and splits
        # lines faster when it need not look for comments.
        comment = blob.contains(b"#")
        raw = None
        with ThreadPoolExecutor(max_workers=1) as pool:
            lean = None if comment else pool.submit(
                _read_frame, source, 7, 5, _LEAN, queries, comments=False)
            facts = blob.layout() if layout is None else layout.result()
            if lean is not None:
                raw = lean.result()
        plain = not (facts.odd_whitespace or facts.double_space)
        if plain and not (comment or facts.loose_space):
            if raw is None and queries is not None:  # most likely a query not in the qrels
                raw = _read_frame(source, 7, 5, _LEAN, comments=False)
            if raw is not None:
                table = _lean_table(raw, facts.spaces, blob, encoding)
        del raw
        if table is None and plain:
            table = _results_fast(source, _FOUR, queries)
            if table is None and queries is not None:
                table = _results_fast(source, _FOUR)
        if table is None and not facts.odd_whitespace:
            table = _results_fast(source, None)
    if table is None:
        utf8 = _as_utf8(blob.as_bytes(), encoding)
        if any(ch in utf8 for ch in _ODD_WS):
            utf8 = utf8.translate(_WS_TO_SPACE)
        table = _results_fast(utf8, None)
        if table is None:
            table = _results_any_spacing(utf8)
    if table is None:
        table = _results_slow(blob.as_bytes(), path, encoding)
    return table


def _lean_table(raw: pl.DataFrame, spaces: int, blob: Blob, encoding: str) -> RunTable | None:
    """The run from a read of columns 1, 3, 5 and 7, if the file's layout makes it exact.

    With single spaces only, no comment and no space at a line's end, a line
    of k spaces has k + 1 non-empty fields. No 7th field means at most 5
    spaces per line, so ``spaces == 5 * lines`` means exactly 6 fields on
    every non-blank line: trec_eval's reading, and the run tag is the 6th
    field of the last line.
    """
    if raw.get_column("column_7").null_count() != raw.height:
        return None
    data = drop_blank_rows(raw.select("column_1", "column_3", "column_5"))
    if data is None:
        return None
    if spaces != 5 * data.height:
        return None
    if data.height == 0:
        return RunTable(_empty_run(), "")
    end = len(blob.data)
    while end and blob.data[end - 1] == 10:  # blank lines at the end
        end -= 1
    last = blob.data[blob.data.rfind(b"\n", 0, end) + 1:end]
    return _run_table(data.get_column("column_1"), data.get_column("column_3"),
                      data.get_column("column_5").to_numpy(), last.split(b" ")[5].decode(encoding))


def _results_fast(data: bytes | str, columns: list[str] | None,
                  queries: pl.Series | None = None) -> RunTable | None:
    raw = _read_frame(data, 6, 5, columns, queries)
    score_text = False
    if raw is None and queries is not None:
        return None  # a query outside the list: read again without it
    if raw is None:
        raw = _read_frame(data, 6, None, columns)  # a score polars cannot read: C atof
        score_text = True
    if raw is None:
        return None
    raw = drop_blank_rows(raw)  # blank lines (all null) are skipped, others fail
    if raw is None:
        return None
    if raw.height == 0:
        return RunTable(_empty_run(), "")
    score = raw.get_column("column_5")
    scores = atof_series(score) if score_text else score.to_numpy()
    return _run_table(raw.get_column("column_1"), raw.get_column("column_3"), scores,
                      str(raw.get_column("column_6")[-1]))


def _results_any_spacing(data: bytes) -> RunTable | None:
    """Runs of blanks, tabs, form feeds: the family's whole-line reader, C ``atof`` scores."""
    raw = read_any_spacing(data, _RUN_NAMES, "score", at_least=True, universal_newlines=False,
                           number=_atof_column)
    if raw is None:
        return None
    if raw.height == 0:
        return RunTable(_empty_run(), "")
    return _run_table(raw.get_column("query_id"), raw.get_column("doc_id"),
                      raw.get_column("score").to_numpy(), str(raw.get_column("tag")[-1]))


def _atof_column(raw: pl.Series) -> pl.Series:
    return pl.Series(raw.name, atof_series(raw))


def _run_table(qcol: pl.Series, docs: pl.Series, scores: npt.NDArray[np.float64],
               run_id: str) -> RunTable:
    return RunTable(pl.DataFrame({"query_id": qcol, "doc_id": docs, "score": scores}), run_id)


def _empty_run() -> pl.DataFrame:
    return pl.DataFrame(
        schema={"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64}
    )


def _results_slow(data: bytes, path: str, encoding: str) -> RunTable:
    columns = read_rows(data, rules("results", encoding), path)
    frame = pl.DataFrame(
        {"query_id": columns[0], "doc_id": columns[1], "score": columns[2]},
        schema={"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64},
    )
    return RunTable(frame, columns[3][-1] if columns[3] else "")


# -- z-scores -----------------------------------------------------------------------

def parse_zscores(path: str, encoding: str) -> Zscores:
    """Read a ``-Z`` file (``qid measure mean stddev``); errors exit with status 255."""
    blob = read_input(path, "zscores")
    if blob is None:
        raise TrecEvalExit(
            f"trec_eval.get_zscores: Cannot read zscores file '{path}'\n", 255
        )
    q, name, mean, stddev = read_rows(blob.as_bytes(), rules("zscores", encoding), path)
    rows = list(zip(q, name, mean, stddev, strict=True))
    # trec_eval sorts by (qid, name) in byte order; Latin-1/UTF-8 text sorts the same.
    rows.sort(key=lambda r: (r[0], r[1]))
    return Zscores([(r[0], r[1]) for r in rows], [r[2] for r in rows], [r[3] for r in rows])
