"""The demo tells a story from the first minute: a baseline graded by the shipped
judgments, the tuned endpoint at depth 20 with holes to grade, and an evaluation
ready for a second grader."""

from __future__ import annotations

import pytest

from rankscope.services import accounts, assignment, comparison, dashboards
from rankscope.services.app_demo import ASSESSOR, setup_demo


@pytest.mark.slow
def test_the_demo_story(tmp_path, capsys):
    from rankscope.cli.serve import open_app_store

    store = open_app_store(str(tmp_path / "demo.sqlite"))
    try:
        from rankscope.services.boundary import Boundary

        login = setup_demo(store, tmp_path / "demo", boundary=Boundary(files_dir=tmp_path))
        admin = accounts.authenticate(store, "admin", login.admin_password)
        judge = accounts.authenticate(store, "judge", login.judge_password)
        qrels = (tmp_path / "demo" / "qrels.txt").read_text().split("\n")
        graded = {(q, d) for q, _, d, _ in (ln.split() for ln in qrels if ln.strip())}

        base = assignment.progress(store, admin, login.baseline_id)
        assert base["complete"] == base["results"] > 0  # every top-10 result was judged
        # P@5 does not depend on depth or on the ideal ranking: the collection README's
        # table (rankscope evaluate on the shipped qrels and depth-100 runs) gives it
        readme = {login.baseline_id: 0.5108, login.tuned_id: 0.5354}
        for ev_id, expected in readme.items():
            mean = dashboards.metrics_report(store, admin, ev_id)["mean"]
            assert mean["P@5"] == pytest.approx(expected, abs=5e-5)

        # nDCG@10 of the baseline: rankscope evaluate on the shipped qrels (all 981 grades,
        # not only the evaluation's) and the evaluation's exported run
        import json

        from rankscope.cli.main import main
        from rankscope.services import exchange

        run = tmp_path / "run.txt"
        run.write_bytes(exchange.export(store, admin, login.baseline_id, "run.txt")[0])
        capsys.readouterr()
        assert main(["evaluate", str(tmp_path / "demo" / "qrels.txt"), str(run), "-m",
                     "nDCG@10", "--unjudged", "null", "-f", "json"]) == 0
        printed = json.loads(capsys.readouterr().out)["mean"]["nDCG@10"]
        shown = dashboards.metrics_report(store, admin, login.baseline_id)["mean"]["nDCG@10"]
        assert shown == pytest.approx(printed, abs=1e-12)

        # the tuned endpoint at depth 20: what the shipped judgments miss is to grade
        tuned = assignment.progress(store, admin, login.tuned_id)
        holes = tuned["results"] - tuned["complete"]
        assert 0 < holes == assignment.progress(store, judge, login.tuned_id)["left_for_me"]
        report = dashboards.coverage_report(store, admin, login.tuned_id)
        assert report  # the coverage page has content
        task = assignment.next_task(store, judge, login.tuned_id)
        assert (task.query_id, task.doc_id) not in graded

        # the comparison with the baseline and the baseline endpoint's history
        compared = comparison.compare_with_baseline(store, admin, login.tuned_id)
        p5 = next(m for m in compared["metrics"] if m["metric"] == "P@5")
        assert p5["delta"] == pytest.approx(0.5354 - 0.5108, abs=1e-4)
        assert p5["p_adjusted"] >= p5["p_value"]  # corrected over the metrics
        assert len(compared["per_query"]) == 65
        history = comparison.history(store, admin, login.evaluation_id)
        assert [h["evaluation_id"] for h in history] == [login.baseline_id, login.evaluation_id]

        # the evaluation ready to grade: each result has the assessor's grade, wants two
        ready = assignment.progress(store, judge, login.evaluation_id)
        assert ready["filled"] == ready["results"] == ready["left_for_me"]
        assert ready["slots"] == 2 * ready["results"]
        shown = assignment.task_view(store, judge, assignment.next_task(
            store, judge, login.evaluation_id).task_id)
        assert ASSESSOR not in repr(shown)  # a grader never sees the others' grades
    finally:
        store.close()
