"""``evaluate`` lets a run go once ranked when no measure reads it (issue 30 §5).

At 10^7 lines a run's frame (700 MB of document ids) was held through the
kernels beside their own arrays, though most measures read only grades and
ranks. A family says when its kernel reads the ranked documents' ids or the
run's scores (:attr:`Family.reads_run`); otherwise ``rankscope.evaluate``
drops the ranked lists' references to the run, and its own, before the
kernels, and the command line hands over its only reference to each run.
Here: nothing of the run alive at the kernels (and alive when a measure
reads it), every family that does not declare it giving the same bits with
the run let go, and the declared ones refusing to compute without it.
"""

from __future__ import annotations

import json
import weakref
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import rankscope
from rankscope.cli.main import main
from rankscope.data.tables import Qrels, Run
from rankscope.engine import evaluate as evaluate_module
from rankscope.engine.kernel_values import compute
from rankscope.engine.ranking import rank
from rankscope.errors import MetricError
from rankscope.metrics.base import FAMILIES, make_metric

from .test_kept_budget import _case
from .test_last_ranking import _alive_when_called, _files

_NOCUT = ["-m", "map", "-m", "recip_rank", "-m", "ndcg", "-m", "bpref"]


def _watch(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many of each run's objects (the run, its frame, each ranking's ids and
    scores) are alive when its kernels start, one count per evaluated run."""
    seen: list[int] = []
    refs: list[weakref.ref[Any]] = []
    ranking = evaluate_module.rank_plan

    def ranked(qrels: Any, run: Any, *args: Any, **kwargs: Any) -> Any:
        out = ranking(qrels, run, *args, **kwargs)
        refs[:] = [weakref.ref(run), weakref.ref(run.frame)]
        for _, lists in out.parts:
            # scores the ranking let go already (a run handed over) are none to watch
            refs.extend(weakref.ref(column) for column in (lists.run_docs, lists.run_scores)
                        if column is not None)
        return out

    monkeypatch.setattr(evaluate_module, "rank_plan", ranked)
    _alive_when_called(monkeypatch, evaluate_module, "compute_ranked", refs, seen)
    return seen


def test_evaluate_lets_each_run_go_before_its_kernels(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    q, runs = _files(tmp_path, [3, 4])
    seen = _watch(monkeypatch)
    assert main(["evaluate", q, *runs, *_NOCUT, "-f", "json", "--quiet", "--ci", "never"]) == 0
    assert seen == [0, 0]  # the run, its frame and the rankings' 2 columns: none alive
    out = capsys.readouterr().out
    # the same means as each run evaluated by a library caller holding it throughout
    together = json.loads(out)["runs"]
    for seed, path in zip([3, 4], runs, strict=True):
        run = Run.read(path)
        held = rankscope.evaluate(Qrels.read(q), run, ["map", "recip_rank", "ndcg", "bpref"])
        assert together[f"r{seed}"]["mean"] == pytest.approx(held.means, abs=0, rel=0)
        assert run.frame.height  # still the caller's


def test_a_measure_reading_the_run_keeps_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # scikit-learn's nDCG reads the scores (its tie groups): the rankings' ids and scores
    # stay for it (the run object and its frame need not: the rankings hold what is read)
    q, (path,) = _files(tmp_path, [5])
    seen = _watch(monkeypatch)
    assert main(["evaluate", q, path, "-m", "map", "-m", "sklearn_nDCG@5", "-f", "json",
                 "--quiet", "--ci", "never"]) == 0
    assert seen == [2]
    means = json.loads(capsys.readouterr().out)["mean"]
    # each measure computed alone on rankings that keep the run
    lists = rank(Qrels.read(q), Run.read(path))
    for label in ("map", "sklearn_nDCG@5"):
        _, metric = rankscope.parse_metrics(label)[0]
        alone = compute(lists, [metric], unjudged="nonrelevant")[:, 0]
        assert means[label] == float(np.mean(alone))


_NEEDS = {"iprec_at_recall": {"p": 0.5}, "trec9_iprec_at_recall": {"p": 0.5},
          "Rprec_mult": {"x": 0.5}}


def _outcome(lists: Any, metric: Any) -> object:
    try:
        return compute(lists, [metric], unjudged="nonrelevant").tobytes()
    except MetricError as error:  # not computed from qrels and one run, either way
        return str(error)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_a_family_reads_the_run_only_when_it_says_so(name: str) -> None:
    judged, ranked = _case(3)
    fam = FAMILIES[name]
    metric = make_metric(name, k=None if fam.cutoff == "none" else 5, **_NEEDS.get(name, {}))
    held = rank(Qrels.from_dict(judged), Run.from_dict(ranked))
    gone = rank(Qrels.from_dict(judged), Run.from_dict(ranked))
    gone.let_go_of_run()
    if not fam.reads_run:
        assert _outcome(gone, metric) == _outcome(held, metric)
    elif fam.group != "intent_aware":  # those need subtopic qrels before any reading
        with pytest.raises(RuntimeError, match="let go"):
            compute(gone, [metric], unjudged="nonrelevant")


@pytest.mark.parametrize("metrics", [["map", "ndcg"], ["P@5"]])  # every row matched; the top
def test_the_judged_lists_are_made_after_the_matching(
        monkeypatch: pytest.MonkeyPatch, metrics: list[str]) -> None:
    # the matching does not read them: not held beside it (57 MB at 7 M judgments)
    from rankscope.engine import qrels_index as qrels_index_module
    from rankscope.engine import ranking as ranking_module

    events: list[str] = []
    lists, rows = qrels_index_module.QrelsIndex.judged_lists, ranking_module.match_rows

    def made(*args: Any, **kwargs: Any) -> Any:
        events.append("lists")
        return lists(*args, **kwargs)

    def matched(*args: Any, **kwargs: Any) -> Any:
        events.append("match")
        return rows(*args, **kwargs)

    judged, ranked = _case(4)
    want = rankscope.evaluate(judged, ranked, metrics).per_query
    monkeypatch.setattr(qrels_index_module.QrelsIndex, "judged_lists", made)
    monkeypatch.setattr(ranking_module, "match_rows", matched)
    assert rankscope.evaluate(judged, ranked, metrics).per_query == want
    assert events == ["match", "lists"]
