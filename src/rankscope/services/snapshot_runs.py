"""Writing a snapshot as a TREC run: in the engine's order, whatever its scores say.

A run's score column decides the order every evaluation tool scores (each
sorts by score and breaks ties its own way), so by default it holds
``depth - rank + 1``, strictly decreasing down the engine's list; the
engine's own scores stay in the store and in JSONL exports, and
``scores="engine"`` writes them instead (with a warning counting the
queries where they tie).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path

from rankscope.data._io import atomic_output
from rankscope.errors import ConfigError, RankscopeWarning
from rankscope.search.types import SearchResponse

__all__ = ["RUN_SCORES", "run_lines", "run_scores", "trec_lines", "write_lines", "write_run"]


RUN_SCORES = ("rank", "engine")
"""What the score column of a run written from a snapshot holds: ``rank`` (the default,
``depth - rank + 1``: strictly decreasing in the engine's order) or ``engine`` (the
engine's own scores, where every hit has one and they do not increase)."""


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


def trec_lines(ranked: Iterable[tuple[str, Sequence[tuple[str, float | None]]]], depth: int,
               tag: str, *, scores: str = "rank") -> list[str]:
    """TREC run lines from ``(query_id, [(doc_id, engine score), ...])`` in rank order.

    ``scores`` is ``rank`` (default: strictly decreasing in the engine's
    order) or ``engine`` (see :func:`run_scores`). With ``engine``, a
    :class:`~rankscope.errors.RankscopeWarning` counts the queries whose
    engine scores tie (other tools will order those hits their own way, not
    as the engine did) and those written with rank scores instead (a hit
    without a score, or scores that rise down the list).
    """
    tag = "_".join(tag.split()) or "rankscope"
    lines = []
    tied = fallback = 0
    for qid, hits in ranked:
        engine = [score for _, score in hits]
        written = run_scores(engine, depth, source=scores)
        if scores == "engine":
            if not _engine_scores_usable(engine):
                fallback += 1
            elif len(set(written)) < len(written):
                tied += 1
        for rank, ((doc_id, _), score) in enumerate(zip(hits, written, strict=True), start=1):
            lines.append(f"{qid} Q0 {doc_id} {rank} {score!r} {tag}\n")
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
    return lines


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
    """Write TREC run lines atomically (:func:`rankscope.data._io.atomic_output`, ``-`` =
    stdout); the number of lines written.

    A document id with white space cannot be written to a TREC file and is
    refused (:class:`~rankscope.errors.ConfigError` naming the query).
    """
    for line in lines:
        parts = line.split()
        if len(parts) != 6:
            raise ConfigError(f"query {parts[0] if parts else '?'}: a query or document id with "
                              "white space cannot go in a TREC run; export JSONL instead",
                              value=line.rstrip("\n"))
    with atomic_output(path) as out:
        out.write("".join(lines).encode("utf-8"))
    return len(lines)
