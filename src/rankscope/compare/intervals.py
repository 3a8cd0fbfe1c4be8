"""Every metric's bootstrap intervals in a comparison, worked out on threads beside the tests."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from rankscope.result import EvaluationResult
from rankscope.spread import ResampleCache, paired_bootstrap_intervals
from rankscope.workers import submit

__all__ = ["ThreadedIntervals"]

FloatArray = npt.NDArray[np.float64]

_TWO_AT_ONCE_BYTES = 64 << 20
"""Runs' resampled means of one metric up to which two metrics' intervals are worked out
at once."""


class ThreadedIntervals:
    """Every metric's bootstrap intervals (each run's mean and each compared difference,
    from the same resamples), worked out on two threads while the tests run.

    The resample counts are drawn on a thread as soon as the first run is
    measured (:meth:`predraw`: for as many queries as that run has values, the
    paired queries unless runs differ in which queries they have values for),
    while the other runs are read. The matrix products and quantiles release
    the interpreter, so on two cores the intervals of the next metrics are
    worked out while the current one is tested. Each metric's numbers are
    those of :func:`~rankscope.spread.paired_bootstrap_intervals` on that
    metric alone (the same counts, the same products).
    """

    def __init__(self, n_resamples: int, seed: int | None) -> None:
        from concurrent.futures import Future

        self._n_resamples, self._seed = n_resamples, seed
        self._cache = ResampleCache()  # the same queries and seed for every metric: drawn once
        self._futures: list[Future[Any]] = []
        self._started: list[Future[Any]] = []  # every one handed to a thread
        self._later: list[FloatArray] = []
        self._level = 0.0
        self._order: list[tuple[int, int]] = []

    def predraw(self, first: EvaluationResult) -> None:
        """Draw the counts for the number of queries ``first`` has values for, on a thread."""
        if self._seed is None:  # fresh randomness: nothing is kept
            return
        for n in sorted({int(c) for c in np.count_nonzero(~np.isnan(first.values), axis=0)}):
            if n >= 2:  # (a count too large to keep is not drawn here: batches is lazy then)
                self._futures.append(submit(self._cache.batches, n, self._n_resamples,
                                            self._seed))
                self._started.append(self._futures[-1])

    def start(self, pairs_of: list[FloatArray], order: list[tuple[int, int]],
              level: float) -> None:
        """Begin every metric's intervals (``pairs_of``: each metric's runs x paired queries;
        ``order``: the compared pairs of runs)."""
        self._futures, self._level, self._order = [], level, order
        # each metric holds its runs' resampled means (runs x resamples): on the threads
        # only while that stays small (--rounds goes up to 10 million), else one at a time
        largest = max((p.shape[0] for p in pairs_of), default=0) * self._n_resamples * 8
        if largest > _TWO_AT_ONCE_BYTES:
            self._later = pairs_of
            return
        from collections import deque
        from concurrent.futures import Future

        self._futures = [Future() for _ in pairs_of]
        todo = deque(zip(self._futures, pairs_of, strict=True))

        def lane() -> None:  # the metrics in order, two at a time (one a lane)
            while todo:
                try:
                    future, pairs = todo.popleft()
                except IndexError:  # the other lane took the last
                    return
                if not future.set_running_or_notify_cancel():
                    continue
                try:
                    future.set_result(paired_bootstrap_intervals(
                        pairs, order, confidence=level, n_resamples=self._n_resamples,
                        seed=self._seed, cache=self._cache))
                except BaseException as exc:  # raised by __call__, as a pool's future does
                    future.set_exception(exc)
                del future, pairs

        for _ in range(2):
            self._started.append(submit(lane))

    def __call__(self, m: int) -> tuple[FloatArray, FloatArray]:
        """Metric ``m``'s ends: its runs', then its compared differences' in ``order``."""
        if self._later:
            return paired_bootstrap_intervals(self._later[m], self._order,
                                              confidence=self._level,
                                              n_resamples=self._n_resamples, seed=self._seed,
                                              cache=self._cache)
        low, high = self._futures[m].result()
        return low, high

    def __enter__(self) -> ThreadedIntervals:
        return self

    def __exit__(self, *exc: object) -> None:
        from concurrent.futures import wait

        for future in self._futures:
            future.cancel()
        wait(self._started)  # nothing of this comparison left running
