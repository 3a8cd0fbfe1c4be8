"""The demo tells a story from the first minute: a baseline graded by the shipped
judgments, the tuned endpoint at depth 20 with holes to grade, and an evaluation
ready for a second grader."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.reference import order_run
from rankscope.services import (
    assignment,
    comparison,
    dashboards,
    exchange,
    grading_progress,
    sessions,
)
from rankscope.services.app_demo import ASSESSOR, setup_demo
from trec_eval.generate import as_dicts

README = Path(__file__).resolve().parents[2] / "src" / "rankscope" / "demo_data" / "README.md"


def _precision_at_5(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]
                    ) -> float:
    """P@5 by its definition, one query at a time: relevant (grade >= 1) documents among the
    five best scores (ties by document id, descending), over every judged query."""
    per_query = []
    for q, judged in qrels.items():
        top = order_run(run.get(q, {}), ties="trec")[:5]
        per_query.append(sum(judged.get(d, 0) >= 1 for d in top) / 5)
    return sum(per_query) / len(per_query)


def _readme_p5() -> dict[str, float]:
    """P@5 of each endpoint in the collection README's table."""
    rows = re.findall(r"^\| (demo-\w+) \| [0-9.]+ \| ([0-9.]+) \|", README.read_text(), re.M)
    return {name: float(p5) for name, p5 in rows}


@pytest.mark.slow
def test_the_demo_story(tmp_path, capsys):
    """Every number is derived here from the shipped qrels and the exported runs.
    Mutations: a README table number changed (0.5108 -> 0.5109), a hole dropped from the
    coverage report: this fails."""
    from rankscope.app.server import open_app_store

    store = open_app_store(str(tmp_path / "demo.sqlite"))
    try:
        from rankscope.services.boundary import Boundary

        login = setup_demo(store, tmp_path / "demo", boundary=Boundary(files_dir=tmp_path))
        admin = sessions.authenticate(store, "admin", login.admin_password)
        judge = sessions.authenticate(store, "judge", login.judge_password)
        qrels = (tmp_path / "demo" / "qrels.txt").read_text().split("\n")
        graded = {(q, d) for q, _, d, _ in (ln.split() for ln in qrels if ln.strip())}

        base = grading_progress.progress(store, admin, login.baseline_id)
        assert base["complete"] == base["results"] > 0  # every top-10 result was judged
        # P@5 by its definition from the shipped qrels and each evaluation's exported run;
        # it does not depend on depth, so the collection README's table (depth-100 runs)
        # shows the same numbers to its four decimals
        shipped = (tmp_path / "demo" / "qrels.txt").read_text()
        runs = {ev_id: as_dicts(shipped, exchange.export(store, admin, ev_id, "run.txt")[0]
                                .decode()) for ev_id in (login.baseline_id, login.tuned_id)}
        p5 = {ev_id: _precision_at_5(judged, run) for ev_id, (judged, run) in runs.items()}
        for ev_id, expected in p5.items():
            mean = dashboards.metrics_report(store, admin, ev_id)["mean"]
            assert mean["P@5"] == pytest.approx(expected, abs=1e-12)
        assert _readme_p5() == {"demo-baseline": round(p5[login.baseline_id], 4),
                                "demo-tuned": round(p5[login.tuned_id], 4)}

        # nDCG@10 of the baseline: rankscope evaluate on the shipped qrels (all 981 grades,
        # not only the evaluation's) and the evaluation's exported run
        import json

        from rankscope.cli.main import main

        run = tmp_path / "run.txt"
        run.write_bytes(exchange.export(store, admin, login.baseline_id, "run.txt")[0])
        capsys.readouterr()
        assert main(["evaluate", str(tmp_path / "demo" / "qrels.txt"), str(run), "-m",
                     "nDCG@10", "--unjudged", "null", "-f", "json"]) == 0
        printed = json.loads(capsys.readouterr().out)["mean"]["nDCG@10"]
        shown = dashboards.metrics_report(store, admin, login.baseline_id)["mean"]["nDCG@10"]
        assert shown == pytest.approx(printed, abs=1e-12)

        # the tuned endpoint at depth 20: what the shipped judgments miss is to grade
        # (the exported run: the snapshot's top 20 of each query; ranked, as every metric,
        # by score with ties by document id descending)
        tuned = grading_progress.progress(store, admin, login.tuned_id)
        holes = tuned["results"] - tuned["complete"]
        assert 0 < holes == grading_progress.progress(store, judge, login.tuned_id)["left_for_me"]
        report = dashboards.coverage_report(store, admin, login.tuned_id)
        shown = [(q, rank, d) for q, scores in runs[login.tuned_id][1].items()
                 for rank, d in enumerate(order_run(scores, ties="trec")[:20], start=1)]
        missing = {(q, rank, d) for q, rank, d in shown if (q, d) not in graded}
        assert (report["k"], report["positions"], report["graded"]) == (
            20, len(shown), len(shown) - len(missing))
        assert report["coverage"] == pytest.approx(1 - len(missing) / len(shown))
        assert {(h["query_id"], h["rank"], h["doc_id"]) for h in report["holes"]} == missing
        assert len(missing) == holes
        task = assignment.next_task(store, judge, login.tuned_id)
        assert (task.query_id, task.doc_id) not in graded

        # the comparison with the baseline and the baseline endpoint's history
        compared = comparison.compare_with_baseline(store, admin, login.tuned_id)
        row = next(m for m in compared["metrics"] if m["metric"] == "P@5")
        assert row["delta"] == pytest.approx(p5[login.tuned_id] - p5[login.baseline_id],
                                             abs=1e-12)
        assert row["p_adjusted"] >= row["p_value"]  # corrected over the metrics
        assert len(compared["per_query"]) == 65
        history = comparison.history(store, admin, login.evaluation_id)
        assert [h["evaluation_id"] for h in history] == [login.baseline_id, login.evaluation_id]

        # the evaluation ready to grade: each result has the assessor's grade, wants two
        ready = grading_progress.progress(store, judge, login.evaluation_id)
        assert ready["filled"] == ready["results"] == ready["left_for_me"]
        assert ready["slots"] == 2 * ready["results"]
        shown = assignment.task_view(store, judge, assignment.next_task(
            store, judge, login.evaluation_id).task_id)
        assert ASSESSOR not in repr(shown)  # a grader never sees the others' grades
    finally:
        store.close()
