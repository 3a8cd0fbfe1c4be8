"""Runs measured one after another, the next one ranked on a thread meanwhile."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from typing import Any

from rankscope.engine.conventions import resolve_plan
from rankscope.engine.evaluate import RankedRun, measure_ranked, rank_run
from rankscope.engine.options import EvalOptions
from rankscope.result import EvaluationResult

__all__ = ["RankingAhead"]


class RankingAhead:
    """Each run measured in order, the next one ranked on a kept thread meanwhile.

    :func:`~rankscope.engine.evaluate.rank_run` (the ranking: most of a run's time, most of
    it in polars and numpy, which release the interpreter) of run ``i + 1`` runs beside
    :func:`~rankscope.engine.evaluate.measure_ranked` of run ``i`` on the calling thread,
    so the two cores share a run's work where the calling thread would do it all. Every
    check, warning and error is still raised in the runs' order, by the measuring; at most
    one run is ranked ahead. Raters' judgments (``judged``) are measured one at a time.
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
            before = self._push(table, None if names is None else names[i])
            del table
            i += 1
            if before is not None:
                yield before
        yield from self._rest()

    def _push(self, table: Any, name: str | None) -> EvaluationResult | None:
        """Start on ``table``; the run before it measured, if there is one."""
        if self._judged is not None:
            return self._judged(table, options=self._options, run_name=name,
                                allow_no_overlap=self._allow)
        from functools import partial

        from rankscope.workers import submit

        if self._plan is None:
            raise RuntimeError("no plan to rank by")  # (made with every plain comparison)
        before, self._ahead = self._ahead, None
        # one run ranked at a time (its failure raised before the next starts): the rankings
        # share the qrels' kept parts, and memory holds the run read ahead, the one ranked
        # and the one measured
        ranked = None if before is None else before.result()
        del before
        self._ahead = submit(partial(rank_run, self._qrels, table, self._plan, self._options,
                                     run_name=name))
        del table
        return None if ranked is None else self._measure(ranked)

    def _rest(self) -> Iterator[EvaluationResult]:
        """The last run, measured."""
        last, self._ahead = self._ahead, None
        if last is not None:
            yield self._measure(last.result())

    def _measure(self, ranked: RankedRun) -> EvaluationResult:
        return measure_ranked(ranked, allow_no_overlap=self._allow)

    def __enter__(self) -> RankingAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        from concurrent.futures import wait

        if self._ahead is not None:  # a run failed: nothing of this comparison left running
            wait([self._ahead])
            self._ahead = None
