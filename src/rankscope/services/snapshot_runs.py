"""Writing a snapshot as a TREC run: in the engine's order, whatever its scores say
(through the one TREC run writer, :mod:`rankscope.data.trec_writer`).

A run's score column decides the order every evaluation tool scores (each
sorts by score and breaks ties its own way), so by default it holds
``depth - rank + 1``, strictly decreasing down the engine's list; the
engine's own scores stay in the store and in JSONL exports, and
``scores="engine"`` writes them instead (with a warning counting the
queries where they tie).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import polars as pl

from rankscope.data._io import write_bytes
from rankscope.data.trec_writer import (
    RUN_SCORES,
    check_trec_ids,
    format_engine_run,
    format_trec_run,
    run_scores,
)
from rankscope.search.types import SearchResponse

__all__ = ["RUN_SCORES", "engine_run_frame", "frame_lines", "run_lines", "run_scores",
           "trec_lines", "write_lines", "write_run"]

_RUN_SCHEMA = {"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64}


def trec_lines(ranked: Iterable[tuple[str, Sequence[tuple[str, float | None]]]], depth: int,
               tag: str, *, scores: str = "rank") -> list[str]:
    """TREC run lines from ``(query_id, [(doc_id, engine score), ...])`` in rank order.

    The lines of the one TREC run writer (:func:`rankscope.data.trec_writer.format_engine_run`,
    which says what ``scores`` does and warns about tied engine scores).
    """
    data = format_engine_run(ranked, depth, tag, scores=scores)
    return data.decode("utf-8").splitlines(keepends=True)


def engine_run_frame(hits: pl.DataFrame, depth: int) -> pl.DataFrame:
    """The run :func:`trec_lines` writes (rank scores), as a frame, without the text.

    ``hits`` holds ``query_id`` and ``doc_id`` in the engine's order (each
    query's hits together, best first). Returns ``query_id, doc_id, score``
    in that order, the score of each hit :func:`run_scores`'s for its
    position in its query: exactly the run read back from :func:`trec_lines`'s
    lines, ties and order included, for the stores' own pages to evaluate
    without writing and parsing the text; :func:`frame_lines` writes it.
    """
    if hits.height == 0:
        return pl.DataFrame(schema=_RUN_SCHEMA)
    at = hits.select(pl.int_range(0, pl.len(), dtype=pl.Int64).over("query_id")).to_series()
    # the rank score of a position does not depend on how many hits follow it
    by_position = pl.Series(run_scores([None] * (int(at.max()) + 1), depth),  # type: ignore[arg-type]
                            dtype=pl.Float64)
    return pl.DataFrame({"query_id": hits.get_column("query_id"),
                         "doc_id": hits.get_column("doc_id"),
                         "score": by_position.gather(at)}).cast(_RUN_SCHEMA)  # type: ignore[arg-type]


def frame_lines(run: pl.DataFrame, tag: str) -> list[str]:
    """The TREC lines of a run frame of :func:`engine_run_frame`, as :func:`trec_lines`
    writes them (ids a TREC file cannot hold refused the same way)."""
    check_trec_ids(run)
    return format_trec_run(run, tag, order="given").decode("utf-8").splitlines(keepends=True)


def run_lines(responses: Sequence[SearchResponse], depth: int, tag: str, *,
              scores: str = "rank") -> list[str]:
    """TREC run lines, queries in order, hits in the engine's order (rank from 1).

    The score is ``depth - rank + 1`` (strictly decreasing in the engine's
    order), or with ``scores="engine"`` the engine's own (see :func:`trec_lines`).
    """
    return trec_lines(((r.query.query_id, [(h.doc_id, h.score) for h in r.hits])
                       for r in responses), depth, tag, scores=scores)


def write_run(path: str | Path, responses: Sequence[SearchResponse], depth: int,
              tag: str, *, scores: str = "rank") -> int:
    """Write a TREC run of the answers atomically; the number of lines written."""
    return write_lines(path, run_lines(responses, depth, tag, scores=scores))


def write_lines(path: str | Path, lines: Sequence[str]) -> int:
    """Write TREC run lines (of :func:`trec_lines`) atomically; the number of lines written.

    Raises
    ------
    OutputWriteError
        The file cannot be written (:func:`rankscope.data._io.write_bytes`).
    """
    write_bytes(path, "".join(lines).encode("utf-8"))
    return len(lines)
