"""The threads a ranking (and a comparison) hands work to are started once and reused.

``Thread.start`` waits until the new thread runs: on a busy machine (and under a
real-time round robin, a time slice of 100 ms) the thread measuring a track's
worth of runs waited for the scheduler two times a run. Not timed here: what is
asserted is how many threads a call starts, and that the answers are the same.
"""

from __future__ import annotations

import os
import threading

import numpy as np
import polars as pl
import pytest

import rankscope
import rankscope.engine.ranking as ranking
from rankscope.data.tables import Qrels, Run


def _case(seed: int, n_queries: int = 80, depth: int = 1000) -> tuple[Qrels, Run]:
    rng = np.random.default_rng(seed)
    q = np.repeat(np.arange(n_queries), depth).astype(str)
    d = np.tile(np.arange(depth), n_queries).astype(str)
    run = pl.DataFrame({"query_id": q, "doc_id": d,
                        "score": rng.integers(0, 50, q.size).astype(np.float64)})
    judged = rng.random(q.size) < 0.05
    qrels = pl.DataFrame({"query_id": q[judged], "doc_id": d[judged],
                          "grade": rng.integers(0, 3, int(judged.sum()))})
    # a document twice is looked for beside the ranking, as for the files a command reads
    return Qrels(qrels), Run(run, name="r", _defer_duplicates="error")


def _counting_starts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    started: list[str] = []
    original = threading.Thread.start

    def start(self: threading.Thread) -> None:
        started.append(self.name)
        original(self)

    monkeypatch.setattr(threading.Thread, "start", start)
    return started


def test_a_second_large_ranking_starts_no_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two runs past the threaded ranking's size, one after the other (as `evaluate` and
    `compare` measure a track's runs): the second starts no thread (main's code started one
    for the matching of each, and one for each duplicate check); the measures are those of
    the ranking on the calling thread alone."""
    qrels, first = _case(1)
    _, second = _case(2)
    assert len(first) >= ranking._THREADED_FROM
    metrics = ["map", "P@10", "ndcg_cut_20", "bpref"]
    rankscope.evaluate(qrels, first, metrics)
    started = _counting_starts(monkeypatch)
    got = rankscope.evaluate(qrels, second, metrics, per_query=True)
    assert started == []
    monkeypatch.setattr(ranking, "_THREADED_FROM", 1 << 40)  # every run on this thread
    want = rankscope.evaluate(qrels, second, metrics, per_query=True)
    assert got.means == want.means
    assert got.values.tobytes() == want.values.tobytes()


def test_a_task_never_waits_behind_another() -> None:
    """A task that waits for a task it handed off gets it done (a pool that queued would
    wait for ever), on a thread that is not its own; one done leaves its thread idle, and
    the next task goes to an idle thread, not a new one."""
    from rankscope import workers

    def outer() -> int:
        inner = workers.submit(threading.get_ident)
        return inner.result(timeout=30)

    assert workers.submit(outer).result(timeout=30) != threading.get_ident()
    threads_before = threading.active_count()
    for _ in range(20):
        workers.submit(int, "7").result(timeout=30)
    assert threading.active_count() == threads_before


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_starts_its_own_threads() -> None:
    """The parent's threads are not in a forked child: its tasks still run there."""
    from rankscope import workers

    assert workers.submit(int, "1").result(timeout=30) == 1  # the parent has a pool
    pid = os.fork()
    if pid == 0:  # the child: a task done in time, or a non-zero status
        code = 1
        try:
            code = 0 if workers.submit(int, "2").result(timeout=20) == 2 else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
