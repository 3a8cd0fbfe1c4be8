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

from rankscope.data._io import write_bytes
from rankscope.data.trec_writer import RUN_SCORES, format_engine_run, run_scores
from rankscope.search.types import SearchResponse

__all__ = ["RUN_SCORES", "run_lines", "run_scores", "trec_lines", "write_lines", "write_run"]


def trec_lines(ranked: Iterable[tuple[str, Sequence[tuple[str, float | None]]]], depth: int,
               tag: str, *, scores: str = "rank") -> list[str]:
    """TREC run lines from ``(query_id, [(doc_id, engine score), ...])`` in rank order.

    The lines of the one TREC run writer (:func:`rankscope.data.trec_writer.format_engine_run`,
    which says what ``scores`` does and warns about tied engine scores).
    """
    data = format_engine_run(ranked, depth, tag, scores=scores)
    return data.decode("utf-8").splitlines(keepends=True)


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
