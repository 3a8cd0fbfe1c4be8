"""Subtopic qrels: relevance of each document to each intent of a query.

The format is the one TREC's ``ndeval`` reads (Web track diversity tasks): one
judgment a line, ``topic subtopic document grade``, whitespace separated, ``#``
comments and blank lines ignored, ``.gz`` read transparently. A plain TREC qrels
file has the same shape: its second column becomes the subtopic, as ir_measures
reads it. The intent-aware measures (:mod:`rankscope.metrics.intent_aware`) need
this table; every other measure sees its :meth:`SubtopicQrels.collapsed` form,
a document's best grade over the subtopics.
"""

from __future__ import annotations

import gzip
import math
import os
from collections.abc import Mapping
from typing import Any

import polars as pl

from rankscope.data.tables import Qrels
from rankscope.errors import FileAccessError, InputError, ParseError

__all__ = ["SubtopicQrels", "as_subtopic_qrels"]

_SCHEMA = {"query_id": pl.String, "subtopic_id": pl.String, "doc_id": pl.String,
           "grade": pl.Float64}


class SubtopicQrels:
    """Judgments of (query, subtopic, document) triples.

    Parameters
    ----------
    frame : polars.DataFrame
        Columns ``query_id``, ``subtopic_id``, ``doc_id`` (str) and ``grade`` (float).
    source : str
        Where the data came from, for messages.

    Raises
    ------
    InputError
        A missing column, a non-finite grade, or a triple judged twice.
    """

    def __init__(self, frame: pl.DataFrame, *, source: str = "<memory>") -> None:
        missing = [c for c in _SCHEMA if c not in frame.columns]
        if missing:
            raise InputError(f"{source}: subtopic qrels need the columns {', '.join(_SCHEMA)}; "
                             f"missing {', '.join(missing)}")
        frame = frame.select(*(pl.col(c).cast(t) for c, t in _SCHEMA.items()))
        bad = frame.filter(pl.col("grade").is_null() | ~pl.col("grade").is_finite())
        if bad.height:
            row = bad.row(0, named=True)
            raise InputError(f"{source}: grade of {row['query_id']} {row['subtopic_id']} "
                             f"{row['doc_id']} must be a finite number, not {row['grade']!r}")
        twice = frame.group_by(["query_id", "subtopic_id", "doc_id"]).len().filter(
            pl.col("len") > 1)
        if twice.height:
            row = twice.row(0, named=True)
            raise InputError(f"{source}: {row['query_id']} {row['subtopic_id']} {row['doc_id']} "
                             f"is judged {row['len']} times")
        self.frame = frame
        self.source = source

    def __len__(self) -> int:
        return self.frame.height

    def __repr__(self) -> str:
        n_q = self.frame.get_column("query_id").n_unique()
        return f"SubtopicQrels({self.frame.height} judgments, {n_q} queries, {self.source})"

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> SubtopicQrels:
        """Read ndeval's format: ``topic subtopic document grade`` per line.

        Raises
        ------
        FileAccessError
            The file cannot be read.
        ParseError
            A line without exactly four fields or a grade that is not a finite
            number, naming the file, line and value.

        ``irds:NAME`` reads an ir_datasets collection whose qrels have a
        ``subtopic_id`` (the diversity tasks).
        """
        name = os.fspath(path)
        from rankscope.data.irds import irds_qrels, is_irds

        if is_irds(name):
            frame, source = irds_qrels(name)
            if "subtopic_id" not in frame.columns:
                raise InputError(f"{source}: intent-aware measures need subtopic qrels; this "
                                 "collection's qrels have no subtopic_id")
            return cls(frame, source=source)
        rows: dict[str, list[Any]] = {c: [] for c in _SCHEMA}
        try:
            opener = gzip.open if name.endswith(".gz") else open
            with opener(name, "rt", encoding="utf-8") as fh:
                for number, line in enumerate(fh, 1):
                    text = line.strip()
                    if not text or text.startswith("#"):
                        continue
                    fields = text.split()
                    if len(fields) != 4:
                        raise ParseError(f"{name}, line {number}: expected 4 fields (topic "
                                         f"subtopic document grade), got {len(fields)}: "
                                         f"{text[:80]!r}")
                    try:
                        grade = float(fields[3])
                    except ValueError:
                        grade = math.nan
                    if not math.isfinite(grade):
                        raise ParseError(f"{name}, line {number}: grade must be a finite "
                                         f"number, not {fields[3]!r}")
                    for column, value in zip(_SCHEMA, (*fields[:3], grade), strict=True):
                        rows[column].append(value)
        except OSError as exc:
            raise FileAccessError(f"cannot read {name}: {exc.strerror or exc}") from None
        except UnicodeDecodeError:
            raise ParseError(f"{name}: not a text file (UTF-8)") from None
        return cls(pl.DataFrame(rows, schema=_SCHEMA), source=name)

    @classmethod
    def from_dict(cls, data: Mapping[str, Mapping[str, Mapping[str, float]]]) -> SubtopicQrels:
        """Build from ``{query: {subtopic: {document: grade}}}``."""
        rows = [(q, str(t), d, g) for q, topics in data.items() for t, docs in topics.items()
                for d, g in docs.items()]
        frame = pl.DataFrame(rows, schema=_SCHEMA, orient="row")
        return cls(frame, source="<dict>")

    def collapsed(self) -> Qrels:
        """Ordinary qrels: each document's highest grade over the query's subtopics."""
        best = (self.frame.group_by(["query_id", "doc_id"], maintain_order=True)
                .agg(pl.col("grade").max()))
        return Qrels(best.select("query_id", "doc_id", "grade"), source=self.source)


def as_subtopic_qrels(obj: Any) -> SubtopicQrels:
    """Accept subtopic qrels as a :class:`SubtopicQrels`, a path, a DataFrame or a nested dict.

    A DataFrame needs a ``subtopic_id`` column (``subtopic`` and ``iteration``
    are accepted too).
    """
    if isinstance(obj, SubtopicQrels):
        return obj
    if isinstance(obj, str | os.PathLike):
        return SubtopicQrels.read(obj)
    if isinstance(obj, Qrels):
        raise InputError("intent-aware measures need subtopic qrels (topic subtopic document "
                         "grade); these qrels have no subtopics: read them with "
                         "rankscope.SubtopicQrels.read or pass the file's path")
    if isinstance(obj, pl.DataFrame):
        renamed = obj.rename({c: "subtopic_id" for c in ("subtopic", "iteration")
                              if c in obj.columns and "subtopic_id" not in obj.columns})
        return SubtopicQrels(renamed, source="<DataFrame>")
    if isinstance(obj, Mapping):
        return SubtopicQrels.from_dict(obj)
    raise InputError(f"cannot use a {type(obj).__name__} as subtopic qrels")
