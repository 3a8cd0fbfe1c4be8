"""Runs measured one after another, the next one ranked on a thread meanwhile."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from functools import partial
from typing import Any

from rankscope.engine.conventions import resolve_plan
from rankscope.engine.evaluate import RankedRun, measure_ranked, rank_run
from rankscope.engine.options import EvalOptions
from rankscope.metrics.conventions import Resolved
from rankscope.result import EvaluationResult
from rankscope.workers import submit

__all__ = ["AHEAD_ROWS", "RankingAhead"]

AHEAD_ROWS = 1 << 20
"""Rows up to which a run is ranked ahead. A larger run is ranked and measured before the
next is taken (the ranking's arrays are a few times the run's own: at 10^7 lines a third run
in memory would be gigabytes), as one run after another."""


class RankingAhead:
    """Each run measured in order, the next one ranked on a kept thread meanwhile.

    :func:`~rankscope.engine.evaluate.rank_run` (the ranking: most of a run's time, most of
    it in polars and numpy, which release the interpreter) of run ``i + 1`` runs beside
    :func:`~rankscope.engine.evaluate.measure_ranked` of run ``i`` on the calling thread,
    so the two cores share a run's work where the calling thread would do it all. Every
    check, warning and error is still raised in the runs' order, by the measuring; at most
    one run is ranked ahead, and only one of at most :data:`AHEAD_ROWS` rows. Raters'
    judgments (``judged``) are measured one at a time.
    """

    def __init__(self, judged: Callable[..., EvaluationResult] | None, qrels: Any,
                 plan: Any, options: EvalOptions, allow_no_overlap: bool) -> None:
        self._judged, self._qrels, self._options = judged, qrels, options
        self._allow = allow_no_overlap
        self._plan = None if judged is not None else resolve_plan(plan, options)
        self._ahead: Future[RankedRun] | None = None

    def measure(self, tables: Iterable[Any], names: Sequence[str] | None,
                seen: Callable[[Any], None]) -> Iterator[EvaluationResult]:
        """Each table's result, in order.

        ``names``: the runs' names when known beforehand (else each run's own); ``seen`` is
        called with each table as it comes, before it is ranked.
        """
        reading = iter(tables)
        i = 0
        while True:
            try:
                table = next(reading)
            except StopIteration:
                break
            except Exception:
                # a run that cannot be read is reported after the runs before it
                yield from self._rest()
                raise
            seen(table)
            name = None if names is None else names[i]
            i += 1
            if self._judged is not None:
                yield self._judged(table, options=self._options, run_name=name,
                                   allow_no_overlap=self._allow)
                continue
            large = len(table) > AHEAD_ROWS
            # one run ranked at a time (its failure raised before the next starts): the
            # rankings share the qrels' kept parts
            ranked = self._ranked()
            # (each ranked run let go of before its result is handed out: not held while
            # this generator waits)
            if large:  # the run before measured first: two runs in memory, not three
                if ranked is not None:
                    result = self._measure(ranked)
                    ranked = None
                    yield result
                ranked = rank_run(self._qrels, table, self._ranking_plan(), self._options,
                                  run_name=name)
            else:
                self._ahead = submit(partial(rank_run, self._qrels, table,
                                             self._ranking_plan(), self._options,
                                             run_name=name))
            del table
            if ranked is not None:
                result = self._measure(ranked)
                ranked = None
                yield result
        yield from self._rest()

    def _ranked(self) -> RankedRun | None:
        """The run ranked ahead, once its ranking is done (None if there is none)."""
        before, self._ahead = self._ahead, None
        return None if before is None else before.result()

    def _ranking_plan(self) -> list[Resolved]:
        if self._plan is None:
            raise RuntimeError("no plan to rank by")  # (made with every plain comparison)
        return self._plan

    def _rest(self) -> Iterator[EvaluationResult]:
        """The last run ranked ahead, measured."""
        ranked = self._ranked()
        if ranked is not None:
            result = self._measure(ranked)
            del ranked
            yield result

    def _measure(self, ranked: RankedRun) -> EvaluationResult:
        return measure_ranked(ranked, allow_no_overlap=self._allow)

    def __enter__(self) -> RankingAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        from concurrent.futures import wait

        if self._ahead is not None:  # a run failed: nothing of this comparison left running
            wait([self._ahead])
            self._ahead = None
