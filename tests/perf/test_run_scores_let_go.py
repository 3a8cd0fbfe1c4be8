"""A run handed over has its scores let go once its rows are ordered (issue 30 §5).

At 10^7 lines a run's scores are 76 MB of float64, read by the sort and the tie
search only, which end long before the matching of the judgments (the peak of
a ranked file's ``nocut`` evaluation). A run the caller hands over
(:meth:`Run.hand_over`: the command line's runs, a run ``rankscope.evaluate``
reads from a path) loses its score column once its rows are ordered when no
measure reads the scores and no other ranking of it follows; a run a caller
keeps is never changed. Here: the scores' buffer (a numpy array the frame
wraps without a copy) dead before the matching returns for a run handed over,
alive and unchanged for a caller's run, the command line handing its runs
over, and the same bits either way (a later reading of the run, a measure
reading the scores: they stay).
"""

from __future__ import annotations

import json
import time
import weakref
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import rankscope
from rankscope.cli.main import main
from rankscope.data.tables import Qrels, Run
from rankscope.engine import evaluate as evaluate_module
from rankscope.engine import ranking as ranking_module

from .test_last_ranking import _files

_NOCUT = ["map", "recip_rank", "ndcg", "bpref"]
_QUERIES, _DEPTH = 120, 700  # 76,000 rows: past the size ranked on two threads


def _case(seed: int) -> tuple[Qrels, pl.DataFrame, weakref.ref[np.ndarray[Any, Any]]]:
    """Qrels, a run's frame whose scores wrap a numpy array (no copy), and a weak
    reference to that array: alive as long as anything holds the scores."""
    rng = np.random.default_rng(seed)
    queries = np.repeat([f"q{i}" for i in range(_QUERIES)], _DEPTH)
    docs = [f"d{d}" for d in rng.integers(0, 5 * _DEPTH, _QUERIES * _DEPTH)]
    frame = pl.DataFrame({"query_id": queries, "doc_id": docs}).unique(
        ["query_id", "doc_id"], keep="first", maintain_order=True)
    assert frame.height >= ranking_module._THREADED_FROM  # the sort beside the matching
    scores = np.round(rng.random(frame.height), 2)  # tied scores among each query's rows
    watched = weakref.ref(scores)
    frame = frame.with_columns(pl.Series("score", scores))
    del scores
    judged = frame.filter(pl.col("doc_id").str.len_chars() % 3 == 0).select(
        "query_id", "doc_id",
        pl.Series("grade", rng.integers(0, 3, frame.height)).filter(
            frame.get_column("doc_id").str.len_chars() % 3 == 0).cast(pl.Float64))
    return Qrels(judged), frame, watched


def _watch_matching(monkeypatch: pytest.MonkeyPatch, watched: weakref.ref[Any],
                    wait: float) -> list[bool]:
    """Whether ``watched`` is alive when the matching returns, one entry a matching,
    waited for up to ``wait`` seconds (the ordering runs beside it on another thread)."""
    seen: list[bool] = []

    def wrap(name: str) -> None:
        called = getattr(ranking_module, name)

        def watching(*args: Any, **kwargs: Any) -> Any:
            out = called(*args, **kwargs)
            end = time.monotonic() + wait
            while watched() is not None and time.monotonic() < end:
                time.sleep(0.01)
            seen.append(watched() is not None)
            return out

        monkeypatch.setattr(ranking_module, name, watching)

    wrap("match_rows")
    wrap("match_codes")
    return seen


def test_a_run_handed_over_has_its_scores_let_go_before_the_matching_ends(
        monkeypatch: pytest.MonkeyPatch) -> None:
    qrels, frame, watched = _case(1)
    want = rankscope.evaluate(qrels, Run(frame), _NOCUT).per_query  # the caller's: kept
    run = Run(frame)
    del frame
    run.hand_over()
    seen = _watch_matching(monkeypatch, watched, wait=10.0)
    got = rankscope.evaluate(qrels, run, _NOCUT).per_query
    assert seen == [False]  # the scores' buffer freed while the matching ran
    assert got == want
    assert "score" not in run.held.columns


def test_a_callers_run_is_never_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    qrels, frame, watched = _case(2)
    before = frame.clone()
    run = Run(frame)
    seen = _watch_matching(monkeypatch, watched, wait=0.0)
    rankscope.evaluate(qrels, run, _NOCUT)
    assert seen == [True]
    assert not run.handed_over and run.let_go_of_scores() is False
    assert run.held.columns == ["query_id", "doc_id", "score"]
    assert run.frame.equals(before) and frame.equals(before)
    # a run evaluate builds from the caller's frame is its own: the frame stays whole
    rankscope.evaluate(qrels, frame, _NOCUT)
    assert frame.equals(before) and watched() is not None


def test_scores_read_later_stay(monkeypatch: pytest.MonkeyPatch) -> None:
    qrels, frame, _ = _case(3)
    for metrics, options in [
        # a second reading of the run (ids ascending for Judged, then map's 32-bit
        # scores): the first keeps them
        (["Judged", "map"], {"conventions": "ir_measures"}),
        # scikit-learn's nDCG reads the scores (its tie groups)
        (["map", "sklearn_nDCG@5"], {}),
    ]:
        want = rankscope.evaluate(qrels, Run(frame), metrics, **options).per_query
        run = Run(frame)
        run.hand_over()
        assert rankscope.evaluate(qrels, run, metrics, **options).per_query == want


def test_the_command_line_hands_its_runs_over(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    q, runs = _files(tmp_path, [3, 4])
    handed: list[bool] = []
    engine = evaluate_module.evaluate  # imported by the command when it runs

    def evaluating(qrels: Any, run: Any, *args: Any, **kwargs: Any) -> Any:
        handed.append(run.handed_over)
        return engine(qrels, run, *args, **kwargs)

    monkeypatch.setattr(evaluate_module, "evaluate", evaluating)
    flags = [f for m in _NOCUT for f in ("-m", m)]
    assert main(["evaluate", q, *runs, *flags, "-f", "json", "--quiet", "--ci", "never"]) == 0
    assert handed == [True, True]
    together = json.loads(capsys.readouterr().out)["runs"]
    for seed, path in zip([3, 4], runs, strict=True):
        held = rankscope.evaluate(Qrels.read(q), Run.read(path), _NOCUT)
        assert together[f"r{seed}"]["mean"] == held.means
