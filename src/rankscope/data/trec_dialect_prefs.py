"""trec_eval's other rel_info formats: ``prefs``, ``qrels_prefs`` and ``qrels_jg``.

- ``prefs``: ``qid jg jsg docno rel_level`` (5 fields, level read with ``atof``);
- ``qrels_prefs``: ``qid jg docno rel_level`` (4 fields; every line is in
  judgment sub-group ``"0"``);
- ``qrels_jg``: ``qid jg docno rel`` (4 fields, ``atol``); a document judged
  twice in one (query, jg) is an error when the file is read.

Lines follow trec_eval's qrels rules (:func:`rankscope.data.trec_dialect.rules`:
first byte ``#`` is a comment, one skipped per data line; "Malformed line N"
counting data lines). These files are small in practice, so they are read
line by line by the family's line reader (:func:`.trec_rules.read_rows`).
"""

from __future__ import annotations

import itertools

import polars as pl

from rankscope.data.cnum import atof, atol
from rankscope.data.trec_dialect import Blob, QrelsTable, rules
from rankscope.data.trec_rules import read_rows
from rankscope.errors import TrecEvalExit

__all__ = ["parse_rel_info"]


def parse_rel_info(rel_format: str, blob: Blob, path: str, encoding: str) -> QrelsTable:
    """Parse a prefs, qrels_prefs or qrels_jg file, or raise trec_eval's error (exit 2).

    The frame has ``query_id``, ``jg``, ``doc_id`` and ``rel`` (qrels_jg) or
    ``query_id``, ``jg``, ``jsg``, ``doc_id``, ``level`` (preferences), sorted
    as trec_eval sorts them.
    """
    columns = read_rows(blob.as_bytes(), rules(rel_format, encoding), path)
    rows: list[tuple[str, ...]] = list(zip(*columns, strict=True))
    if rel_format == "qrels_jg":
        return QrelsTable(_qrels_jg(rows, path))
    if rel_format == "qrels_prefs":
        rows = [(q, jg, "0", d, lv) for q, jg, d, lv in rows]
    # trec_eval sorts by (qid, docno) with a stable merge sort
    rows.sort(key=lambda r: (r[0], r[3]))
    return QrelsTable(pl.DataFrame(
        {"query_id": [r[0] for r in rows], "jg": [r[1] for r in rows],
         "jsg": [r[2] for r in rows], "doc_id": [r[3] for r in rows],
         "level": [atof(r[4]) for r in rows]},
        schema={"query_id": pl.String, "jg": pl.String, "jsg": pl.String,
                "doc_id": pl.String, "level": pl.Float64},
    ))


def _qrels_jg(rows: list[tuple[str, ...]], path: str) -> pl.DataFrame:
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    for prev, cur in itertools.pairwise(rows):
        if prev[:3] == cur[:3]:
            raise TrecEvalExit.in_file(f"trec_eval.get_qrels: duplicate docs {cur[2]}", path)
    return pl.DataFrame(
        {"query_id": [r[0] for r in rows], "jg": [r[1] for r in rows],
         "doc_id": [r[2] for r in rows], "rel": [atol(r[3]) for r in rows]},
        schema={"query_id": pl.String, "jg": pl.String, "doc_id": pl.String, "rel": pl.Int64},
    )
