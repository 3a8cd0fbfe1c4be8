"""Dashboards: metrics equal `rankscope evaluate` on the exports, seed 004's null rules by
hand, agreement by hand, coverage and holes, adjudication, history, baseline comparison."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from sqlalchemy import func, select

from rankscope.cli.main import main
from rankscope.services import (
    adjudication,
    assignment,
    campaign_runs,
    campaigns,
    comparison,
    dashboards,
    exchange,
    grading,
    grading_progress,
    task_views,
)
from rankscope.services.grading import GradeInput
from rankscope.store.models_app import Grade
from rankscope.store.snapshots import snapshot_hits

from .conftest import make_world


def _grade_everything(store, w, evaluation_id, seed=7, cant_tell=0.1):
    """Every judge grades every task they are offered, with seeded grades."""
    rng = random.Random(seed)
    for judge in (w.judge, w.judge2, w.judge3):
        for t in assignment.next_tasks(store, judge, evaluation_id, n=500):
            values = t.scale["values"]
            if rng.random() < cant_tell:
                given = GradeInput(t.task_id, None, "cannot tell")
            else:
                given = GradeInput(t.task_id, rng.choice(values))
            grading.submit_grade(store, judge, given)


def _cli(capsys, tmp_path, store, w, evaluation_id, *extra_runs):
    """What `rankscope evaluate` prints (JSON) on the evaluation's exported grades and run."""
    ev = campaigns.get_evaluation(store, w.curator, evaluation_id)
    grades = tmp_path / f"grades{evaluation_id}.csv"
    run = tmp_path / f"run{evaluation_id}.txt"
    grades.write_bytes(exchange.export(store, w.curator, evaluation_id, "grades.csv")[0])
    run.write_bytes(exchange.export(store, w.curator, evaluation_id, "run.txt")[0])
    argv = ["evaluate", str(grades), str(run), *map(str, extra_runs), "--format", "json", "-q",
            "--scale", ev.scale, "--strategy", f"{ev.scale}={ev.strategy}",
            "--unjudged", "null" if ev.null_rules else "nonrelevant"]
    for metric in ev.metrics:
        argv += ["-m", metric]
    capsys.readouterr()
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("null_rules", [True, False])
def test_the_numbers_equal_rankscope_evaluate_on_the_exports(store, collection, capsys,
                                                             tmp_path, null_rules):
    w = make_world(store, collection, null_rules=null_rules, metrics=(
        "nDCG@5", "P@5", "RR@5", "AP@5", "DCG@3"))
    _grade_everything(store, w, w.evaluation.id)
    report = dashboards.metrics_report(store, w.curator, w.evaluation.id)
    printed = _cli(capsys, tmp_path, store, w, w.evaluation.id)
    assert report["mean"].keys() == printed["mean"].keys()
    for metric, value in printed["mean"].items():
        assert report["mean"][metric] == pytest.approx(value, abs=1e-12), metric
    for qid, values in printed["per_query"].items():
        for metric, value in values.items():
            assert report["per_query"][qid][metric] == pytest.approx(value, abs=1e-12, nan_ok=True)


def test_seed_004_null_rules_worked_by_hand(store, collection):
    """Binary, three grades wanted, majority with tie = null (seed 004).

    q01's top 3 graded (1, 1, 0) -> 1, (1, 0, can't tell) -> tie -> null, (0, 0) -> 0:
    P@3 = relevant graded / graded = 1 / 2, RR@3 = 1; other queries have nothing graded,
    so no value, and the means are over q01 alone.
    """
    w = make_world(store, collection, scale="binary", grades_wanted=3, metrics=("P@3", "RR@3"),
                   depth=3)
    grades = {1: (1, 1, 0), 2: (1, 0, None), 3: (0, 0)}
    for rank, values in grades.items():
        task = next(t for t in task_views.query_results(store, w.curator, w.evaluation.id, "q01")
                    if t.position == rank)
        for judge, value in zip((w.judge, w.judge2, w.judge3), values, strict=False):
            grading.submit_grade(store, judge, GradeInput(task.task_id, value, "unsure"))
    report = dashboards.metrics_report(store, w.curator, w.evaluation.id)
    assert report["per_query"]["q01"] == {"P@3": 0.5, "RR@3": 1.0}
    assert report["mean"] == {"P@3": 0.5, "RR@3": 1.0}
    assert all(v is None for q, row in report["per_query"].items() if q != "q01"
               for v in row.values())


def test_agreement_by_hand(store, collection):
    """Two graders, binary, four results: A = 1 1 0 0, B = 1 0 0 0.

    Cohen's kappa = (p_o - p_e) / (1 - p_e) with p_o = 3/4 and
    p_e = 1/2 * 1/4 + 1/2 * 3/4 = 1/2, so 1/2. The majority consensus drops the tie
    (1 vs 0) and keeps 1, 0, 0, which both graders match: kappa 1 each.
    """
    w = make_world(store, collection, scale="binary", grades_wanted=2, metrics=("P@5",))
    tasks = task_views.query_results(store, w.curator, w.evaluation.id, "q01")[:4]
    for task, a, b in zip(tasks, (1, 1, 0, 0), (1, 0, 0, 0), strict=True):
        grading.submit_grade(store, w.judge, GradeInput(task.task_id, a))
        grading.submit_grade(store, w.judge2, GradeInput(task.task_id, b))
    report = adjudication.agreement_report(store, w.curator, w.evaluation.id)
    assert report["n_items"] == 4 and report["n_raters"] == 2
    assert report["cohen_kappa_pairs"][0]["kappa"] == pytest.approx(0.5)
    assert report["percent_agreement"] == pytest.approx(0.75)
    assert {r["rater"]: (r["n_items"], r["kappa"]) for r in report["vs_consensus"]} == {
        "jay": (3, pytest.approx(1.0)), "kim": (3, pytest.approx(1.0))}


def test_coverage_and_holes(store, world):
    hits = [h for h in snapshot_hits(store, world.run["snapshot_id"]) if h["query_id"] == "q01"]
    tasks = task_views.query_results(store, world.curator, world.evaluation.id, "q01")
    for task in tasks[:2]:
        grading.submit_grade(store, world.judge, GradeInput(task.task_id, 2))
    grading.submit_grade(store, world.judge2, GradeInput(tasks[0].task_id, 3))
    report = dashboards.coverage_report(store, world.curator, world.evaluation.id)
    q01 = report["per_query"]["q01"]
    assert (q01["positions"], q01["graded"], q01["complete"]) == (len(hits), 2, 1)
    holes = {h["doc_id"] for h in report["holes"] if h["query_id"] == "q01"}
    assert holes == {h["doc_id"] for h in hits} - {t.doc_id for t in tasks[:2]}
    total = sum(1 for _ in snapshot_hits(store, world.run["snapshot_id"]))
    assert report["coverage"] == pytest.approx(2 / total)


def test_a_curator_settles_a_disagreement_and_history_is_kept(store, world):
    task = assignment.next_task(store, world.judge, world.evaluation.id)
    grading.submit_grade(store, world.judge, GradeInput(task.task_id, 0))
    grading.submit_grade(store, world.judge2, GradeInput(task.task_id, 3))
    queue = adjudication.disagreements(store, world.curator, world.evaluation.id)
    assert [(d["query_id"], d["doc_id"], d["spread"]) for d in queue] == [
        (task.query_id, task.doc_id, 3.0)]
    adjudication.adjudicate(store, world.curator, world.evaluation.id, task.query_id,
                          task.doc_id, 2, "the module page, not the function")
    assert adjudication.disagreements(store, world.curator, world.evaluation.id) == []
    drill = dashboards.drill_down(store, world.curator, world.evaluation.id, task.query_id)
    assert next(h for h in drill["hits"] if h["doc_id"] == task.doc_id)["grade"] == 2.0
    with store.read() as s:
        assert s.scalar(select(func.count(Grade.id))) == 3  # two superseded, one standing
    offered = assignment.next_tasks(store, world.judge3, world.evaluation.id, n=500)
    assert task.task_id not in {t.task_id for t in offered}


def test_history_and_the_baseline_comparison(store, world, capsys, tmp_path):
    from scipy import stats

    spec = campaigns.EvaluationSpec(
        name="tuned", query_set_id=world.query_set.id, endpoint_id=world.endpoint.id,
        grades_wanted=2, depth=5, metrics=["nDCG@5", "P@5", "RR@5"], annotation="v2",
        baseline_id=world.evaluation.id)
    second = campaigns.create_evaluation(store, world.curator, world.project.id, spec)
    campaign_runs.run_evaluation(store, world.curator, second.id, boundary=world.boundary)
    _grade_everything(store, world, world.evaluation.id, seed=1, cant_tell=0)
    rows = comparison.history(store, world.curator, second.id)
    assert [(r["evaluation_id"], r["annotation"]) for r in rows] == [
        (world.evaluation.id, "v1"), (second.id, "v2")]
    assert rows[0]["mean"] == dashboards.metrics_report(store, world.curator,
                                                        world.evaluation.id)["mean"]
    # a tuned endpoint as the other side of the comparison
    tuned = campaigns.create_evaluation(store, world.curator, world.project.id,
                                          campaigns.EvaluationSpec(
                                              name="t2", query_set_id=world.query_set.id,
                                              endpoint_id=world.tuned.id, depth=5,
                                              metrics=["nDCG@5", "P@5", "RR@5"],
                                              baseline_id=world.evaluation.id))
    campaign_runs.run_evaluation(store, world.curator, tuned.id, boundary=world.boundary)
    _grade_everything(store, world, tuned.id, seed=2, cant_tell=0)
    report = comparison.compare_with_baseline(store, world.curator, tuned.id)
    base_run = tmp_path / "base.txt"
    base_run.write_bytes(exchange.export(store, world.curator, world.evaluation.id,
                                         "run.txt")[0])
    # the tuned evaluation's grades (shared items included) evaluate both runs
    printed = _cli(capsys, tmp_path, store, world, tuned.id, base_run)
    runs = printed["runs"]
    mine, base = runs["t2"], runs["first"]
    p_values = []
    for row in report["metrics"]:
        metric = row["metric"]
        qids = [q for q in mine["per_query"] if q in base["per_query"]
                and mine["per_query"][q][metric] is not None
                and base["per_query"][q][metric] is not None]
        x = np.array([mine["per_query"][q][metric] for q in qids])
        y = np.array([base["per_query"][q][metric] for q in qids])
        assert row["n_queries"] == len(qids)
        assert row["delta"] == pytest.approx(x.mean() - y.mean())
        expected_p = stats.ttest_rel(x, y).pvalue if np.any(x != y) else 1.0
        assert row["p_value"] == pytest.approx(expected_p, nan_ok=True)
        p_values.append(row["p_value"])
    # Holm by its definition: the i-th smallest p times (m - i + 1), running maximum, capped
    order = np.argsort(p_values)
    m, running, holm = len(p_values), 0.0, [0.0] * len(p_values)
    for i, j in enumerate(order):
        running = max(running, min(1.0, (m - i) * p_values[j]))
        holm[j] = running
    assert [r["p_adjusted"] for r in report["metrics"]] == pytest.approx(holm)
    # RBO (p = 0.9) per query, extrapolated (Webber et al. 2010, eq. 32), for equal lists
    hits_a = _lists(store, world.run["snapshot_id"])
    tuned_snapshot = campaigns.get_evaluation(store, world.curator, tuned.id).snapshot_id
    hits_b = _lists(store, tuned_snapshot)
    checked = 0
    for qid, a in hits_a.items():
        b = hits_b.get(qid, [])
        if len(a) == len(b) == 5:
            assert report["per_query_rbo"][qid] == pytest.approx(_rbo_ext(a, b, 0.9))
            checked += 1
    assert checked >= 3


def _lists(store, snapshot_id):
    out: dict[str, list[str]] = {}
    for h in snapshot_hits(store, snapshot_id):
        out.setdefault(h["query_id"], []).append(h["doc_id"])
    return out


def _rbo_ext(a, b, p):
    k = len(a)
    overlap = [len(set(a[:d]) & set(b[:d])) for d in range(1, k + 1)]
    tail = sum(overlap[d - 1] / d * p ** d for d in range(1, k + 1))
    return overlap[-1] / k * p ** k + (1 - p) / p * tail


@pytest.mark.parametrize("transforms", [{}, {"graded->binary": "0..1=0,2..3=1"}])
def test_each_exported_qrels_file_reproduces_the_metrics_it_claims(store, collection, capsys,
                                                                   tmp_path, transforms):
    """Each qrels file the metrics page offers, run with the command it gives, prints the
    dashboard's numbers (binary metrics of a graded evaluation: qrels-binary.txt)."""
    import shlex

    w = make_world(store, collection, metrics=("nDCG@5", "P@5", "RR@5", "AP@5"))
    ev = w.evaluation.id
    if transforms:
        made = campaigns.create_evaluation(store, w.curator, w.project.id,
                                             campaigns.EvaluationSpec(
            name="transformed", query_set_id=w.query_set.id, endpoint_id=w.endpoint.id,
            grades_wanted=2, metrics=["nDCG@5", "P@5", "RR@5", "AP@5"], depth=5,
            transforms=transforms))
        campaign_runs.run_evaluation(store, w.curator, made.id, boundary=w.boundary)
        ev = made.id
    _grade_everything(store, w, ev)
    report = dashboards.metrics_report(store, w.curator, ev)
    claimed: set[str] = set()
    (tmp_path / "run.txt").write_bytes(exchange.export(store, w.curator, ev, "run.txt")[0])
    for entry in report["qrels"]:
        path = tmp_path / entry["name"]
        path.write_bytes(exchange.export(store, w.curator, ev, entry["name"])[0])
        if entry["command"] is None:
            continue
        words = shlex.split(entry["command"])
        assert words[:4] == ["rankscope", "evaluate", entry["name"], "run.txt"]
        argv = ["evaluate", str(path), str(tmp_path / "run.txt"), *words[4:], "-f", "json"]
        capsys.readouterr()
        assert main(argv) == 0
        printed = json.loads(capsys.readouterr().out)["mean"]
        for metric, value in printed.items():
            assert report["mean"][metric] == pytest.approx(value, abs=1e-12), (entry, metric)
            claimed.add(metric)
    assert claimed == set(report["mean"])  # every metric is reproduced by one file


def test_two_runs_at_once_creating_the_same_items_both_succeed(store, world):
    """Two evaluations of the same (new) results run at the same time: the items they both
    create are made once, and neither run fails (insert ... on conflict do nothing)."""
    import threading

    made = [campaigns.create_evaluation(store, world.curator, world.project.id,
                                          campaigns.EvaluationSpec(
        name=f"race {i}", query_set_id=world.query_set.id, endpoint_id=world.tuned.id,
        depth=5)) for i in range(2)]
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def run(ev_id: int) -> None:
        try:
            barrier.wait(timeout=30)
            campaign_runs.run_evaluation(store, world.curator, ev_id, boundary=world.boundary)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(e.id,)) for e in made]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    a, b = (grading_progress.progress(store, world.curator, e.id)["results"] for e in made)
    assert a == b > 0
    from rankscope.store.models_app import Item

    with store.read() as session:
        pairs = session.execute(select(Item.query_key, Item.doc_id)
                                .where(Item.project_id == world.project.id)).all()
    assert len(pairs) == len(set(pairs))  # each result made once


def test_a_comparison_of_different_depths_says_so_and_compares_the_common_depth(store, world):
    """Issue 24: a depth-3 evaluation against a depth-5 baseline of the same endpoint.

    Both snapshots list the same first three results, so compared at depth 3 nothing
    changed: RBO 1 and a delta of 0 on every query. Compared as they are, the baseline's
    two extra results made every query look changed.
    """
    from fastapi.testclient import TestClient

    from rankscope.app.factory import create_app

    from .conftest import PASSWORD

    short = campaigns.create_evaluation(
        store, world.curator, world.project.id, campaigns.EvaluationSpec(
            name="short", query_set_id=world.query_set.id, endpoint_id=world.endpoint.id,
            depth=3, metrics=["P@5", "RR@5"], baseline_id=world.evaluation.id))
    campaign_runs.run_evaluation(store, world.curator, short.id, boundary=world.boundary)
    _grade_everything(store, world, world.evaluation.id, seed=3, cant_tell=0)
    report = comparison.compare_with_baseline(store, world.curator, short.id)
    assert report["warnings"][0] == f"#{short.id} short has depth 3, #{world.evaluation.id} " \
                                    "first depth 5"
    assert report["similarity"]["k"] == 3 and report["similarity"]["queries_changed"] == 0
    assert all(v is None or v == pytest.approx(1.0) for v in report["per_query_rbo"].values())
    for row in report["metrics"]:
        assert row["delta"] == pytest.approx(0.0) and row["wins"] == row["losses"] == 0
    app = create_app(store, world.data)
    client = TestClient(app, follow_redirects=False)
    assert client.post("/login", data={"name": world.curator.name,
                                       "password": PASSWORD}).status_code == 303
    page = client.get(f"/evaluations/{short.id}/compare")
    assert page.status_code == 200
    assert "short has depth 3" in page.text and 'class="notice"' in page.text
