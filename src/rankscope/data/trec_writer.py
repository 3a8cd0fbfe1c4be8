"""Writing TREC qrels and run files (the reading side is :mod:`rankscope.data.trec`).

The one writer of a TREC run: :func:`format_trec_run` writes a run frame in
rank order, ranked by score and a tie rule as evaluation ranks it, or (``order="given"``)
in the order given, as a search engine returned it; :func:`format_engine_run` is
that second way for a snapshot's answers, with the score column chosen by
:func:`run_scores` so that every tool scores the engine's order.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Iterable, Sequence
from typing import Literal

import polars as pl

from rankscope.data.ranking_order import TieRule, ranked
from rankscope.errors import ConfigError, OutputError, RankscopeWarning

__all__ = ["RUN_SCORES", "check_trec_ids", "format_engine_run", "format_trec_qrels",
           "format_trec_run", "run_scores"]

RUN_SCORES = ("rank", "engine")
"""What the score column of a run written in an engine's order holds: ``rank`` (the
default, ``depth - rank + 1``: strictly decreasing in the engine's order) or ``engine``
(the engine's own scores, where every hit has one and they do not increase)."""

_SEPARATORS = "[ \t\n\r\x0b\x0c]"  # what splits fields or ends lines in a TREC file


def check_trec_ids(frame: pl.DataFrame, target: str | None = None) -> None:
    """Refuse ids a TREC file cannot hold: whitespace inside, empty, a query id starting '#'.

    Written anyway, such a line would be read back as other fields (or as a
    comment): the file would not be the data. CSV, TSV, JSON and JSONL hold
    any id.

    Raises
    ------
    OutputError
        Naming the first such id, its query, and the formats that can hold it.
    """
    for column in ("query_id", "doc_id"):
        ids = frame.get_column(column)
        bad = ids.str.contains(_SEPARATORS) | (ids.str.len_bytes() == 0)
        if column == "query_id":
            bad = bad | ids.str.starts_with("#")
        if bad.any():
            row = int(bad.arg_true()[0])
            what = f"query id {ids[row]!r}"
            if column == "doc_id":
                what = f"document id {ids[row]!r} (query {frame.get_column('query_id')[row]!r})"
            raise OutputError(
                f"cannot write the {what} to a TREC file (an id there cannot be empty, hold "
                "spaces, tabs or line breaks, or start a line with #); write CSV, TSV, JSON "
                "or JSONL instead",
                target=target,
            )


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


def run_tag(tag: str) -> str:
    """A run tag a TREC line can hold: white space runs become ``_``; empty: ``rankscope``."""
    return "_".join(tag.split()) or "rankscope"


def format_trec_run(frame: pl.DataFrame, tag: str, *, ties: TieRule = "trec",
                    order: Literal["score", "given"] = "score") -> bytes:
    """Render a run frame as TREC lines in rank order, ranks numbered as evaluated.

    ``ties`` orders equal scores (trec_eval's rule by default); trec_eval
    itself re-sorts a run by score and its own tie rule, whatever the ranks say.
    With ``order="given"`` the rows are written as they come (each query's rows
    already best first, as an engine returned them), ranks numbered from 1 in
    each query; the scores are written as given. The tag goes through :func:`run_tag`.
    """
    if order == "given":
        rows = frame.with_columns(
            pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over("query_id").alias("rank"))
    else:
        rows = ranked(frame, ties)
    out = rows.select(
        pl.col("query_id"),
        pl.lit("Q0").alias("q0"),
        pl.col("doc_id"),
        pl.col("rank"),
        pl.col("score").cast(pl.String).alias("score"),
        pl.lit(run_tag(tag)).alias("tag"),
    )
    return out.write_csv(separator=" ", include_header=False, quote_style="never").encode()


def run_scores(scores: Sequence[float | None], depth: int, *,
               source: str = "rank") -> list[float]:
    """The run-file scores of one query's hits, given the engine's scores in rank order.

    By default (``source="rank"``) ``depth - rank + 1``: strictly decreasing
    down the engine's list, so any tool that orders a run by score (and
    breaks ties its own way) scores exactly the order the engine returned.
    With ``source="engine"`` the engine's own scores when every hit has one
    and they do not increase down the list (equal scores are kept, and
    tools then break those ties their own way); otherwise the rank scores.

    Examples
    --------
    >>> run_scores([3.5, 2.0, 2.0], 10)
    [10.0, 9.0, 8.0]
    >>> run_scores([3.5, 2.0, 2.0], 10, source="engine")
    [3.5, 2.0, 2.0]
    >>> run_scores([1.0, None, 0.5], 10, source="engine")
    [10.0, 9.0, 8.0]
    >>> run_scores([1.0, 4.0], 5, source="engine")
    [5.0, 4.0]
    """
    if source not in RUN_SCORES:
        raise ConfigError(f"run scores are 'rank' or 'engine', not {source!r}")
    if source == "engine" and _engine_scores_usable(scores):
        return [float(s) for s in scores if s is not None]
    return [float(depth - rank + 1) for rank in range(1, len(scores) + 1)]


def _engine_scores_usable(scores: Sequence[float | None]) -> bool:
    """Every hit has a score and they do not increase down the list."""
    engine = [s for s in scores if s is not None]
    return len(engine) == len(scores) and all(a >= b for a, b in itertools.pairwise(engine))


def format_engine_run(ranked_hits: Iterable[tuple[str, Sequence[tuple[str, float | None]]]],
                      depth: int, tag: str, *, scores: str = "rank",
                      target: str | None = None) -> bytes:
    """TREC run lines from ``(query_id, [(doc_id, engine score), ...])`` in the engine's order.

    Queries are written in the order given, their hits in rank order. ``scores``
    is ``rank`` (default: strictly decreasing in the engine's order) or
    ``engine`` (see :func:`run_scores`). With ``engine``, a
    :class:`~rankscope.errors.RankscopeWarning` counts the queries whose
    engine scores tie (other tools will order those hits their own way, not
    as the engine did) and those written with rank scores instead (a hit
    without a score, or scores that rise down the list).

    Raises
    ------
    ConfigError
        ``scores`` is neither ``rank`` nor ``engine``.
    OutputError
        An id a TREC file cannot hold (:func:`check_trec_ids`; ``target`` names the file).
    """
    if scores not in RUN_SCORES:
        raise ConfigError(f"run scores are 'rank' or 'engine', not {scores!r}")
    query_ids: list[str] = []
    doc_ids: list[str] = []
    written: list[float] = []
    tied = fallback = 0
    for qid, hits in ranked_hits:
        engine = [score for _, score in hits]
        these = run_scores(engine, depth, source=scores)
        if scores == "engine":
            if not _engine_scores_usable(engine):
                fallback += 1
            elif len(set(these)) < len(these):
                tied += 1
        query_ids += [qid] * len(hits)
        doc_ids += [doc for doc, _ in hits]
        written += these
    if tied or fallback:
        parts = []
        if tied:
            parts.append(f"{tied} quer{'y has' if tied == 1 else 'ies have'} tied engine "
                         "scores: evaluation tools order those hits by their own tie rule "
                         "(trec_eval: document id), not as the engine returned them")
        if fallback:
            parts.append(f"{fallback} quer{'y' if fallback == 1 else 'ies'} written with rank "
                         "scores (a hit without a score, or scores rising down the list)")
        warnings.warn("run scores from the engine: " + "; ".join(parts), RankscopeWarning,
                      stacklevel=2)
    frame = pl.DataFrame({"query_id": query_ids, "doc_id": doc_ids, "score": written},
                         schema={"query_id": pl.String, "doc_id": pl.String,
                                 "score": pl.Float64})
    check_trec_ids(frame, target)
    return format_trec_run(frame, tag, order="given")
