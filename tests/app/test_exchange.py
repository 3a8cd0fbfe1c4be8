"""Imports and exports: round trips, other tools' formats, all or nothing, sizes."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select

from rankscope.errors import InputError, ParseError, ScaleError
from rankscope.services import (
    campaign_runs,
    campaigns,
    catalog,
    dashboards,
    exchange,
    grading,
    projects,
    task_views,
)
from rankscope.services.grading import GradeInput
from rankscope.store.models_app import Grade

from .test_dashboards import _grade_everything


def _grades(store) -> int:
    with store.read() as s:
        return int(s.scalar(select(func.count(Grade.id))))


def _new_project(store, w, name="copy"):
    """Another project with the same queries and endpoint, and a run evaluation."""
    p = projects.create_project(store, w.curator, name)
    qs = catalog.import_query_set(store, w.curator, p.id, "queries",
                                  (w.data / "queries.tsv").read_text())
    ep = catalog.save_endpoint(store, w.curator, p.id, (w.data / "baseline.toml").read_text(),
                               boundary=w.boundary)
    ev = campaigns.create_evaluation(store, w.curator, p.id, campaigns.EvaluationSpec(
        name="copy", query_set_id=qs.id, endpoint_id=ep.id, grades_wanted=2, depth=5,
        metrics=["nDCG@5", "P@5", "RR@5"]))
    campaign_runs.run_evaluation(store, w.curator, ev.id, boundary=w.boundary)
    return ev


@pytest.mark.parametrize("name", ["grades.csv", "grades.tsv", "grades.jsonl"])
def test_exported_grades_imported_elsewhere_give_the_same_metrics(store, world, name):
    _grade_everything(store, world, world.evaluation.id, seed=3)
    data, _ = exchange.export(store, world.curator, world.evaluation.id, name)
    if name == "grades.jsonl":
        first = json.loads(data.splitlines()[0])
        assert first["scale"] == "graded" and first["rule"] == "mean"  # the rule travels
    else:
        assert data.startswith(b"# rankscope evaluation")
    ev = _new_project(store, world)
    summary = exchange.import_grades(store, world.curator, ev.id, data, filename=name)
    assert summary["imported"] == len(data.splitlines()) - (0 if name.endswith("l") else 2)
    before = dashboards.metrics_report(store, world.curator, world.evaluation.id)
    after = dashboards.metrics_report(store, world.curator, ev.id)
    assert after["mean"] == before["mean"] and after["per_query"] == before["per_query"]


def test_trec_quepid_and_rre_round_trips(store, world):
    for judge in (world.judge, world.judge2):
        for t in task_views.query_results(store, world.curator, world.evaluation.id, "q01"):
            grading.submit_grade(store, judge, GradeInput(t.task_id, t.position % 4))
    aggregated = {(t.query_id, t.doc_id): float(t.position % 4)
                  for t in task_views.query_results(store, world.curator, world.evaluation.id,
                                                 "q01")}
    qrels, _ = exchange.export(store, world.curator, world.evaluation.id, "qrels.txt")
    lines = [line.split() for line in qrels.decode().splitlines() if not line.startswith("#")]
    assert {(q, d): float(g) for q, _, d, g in lines} == aggregated
    quepid, _ = exchange.export(store, world.curator, world.evaluation.id, "quepid.csv")
    assert quepid.splitlines()[0] == b"query,docid,rating"
    rre, _ = exchange.export(store, world.curator, world.evaluation.id, "rre.json")
    assert json.loads(rre)["rankscope"]["rule"] == "mean"
    for fmt, data in (("trec", qrels), ("quepid", quepid), ("rre", rre)):
        ev = _new_project(store, world, name=fmt)
        summary = exchange.import_grades(store, world.curator, ev.id, data,
                                         filename=f"x.{fmt}", fmt=fmt, rater="old")
        assert summary["imported"] == len(aggregated), fmt
        report = dashboards.drill_down(store, world.curator, ev.id, "q01")
        got = {("q01", h["doc_id"]): h["grade"] for h in report["hits"]}
        assert got == aggregated, fmt


def test_a_bad_line_names_its_number_and_nothing_is_imported(store, world):
    before = _grades(store)
    bad = b"query_id,doc_id,rater,grade\nq01,a,ann,1\nq01,b,ann,2\nq02,c,ann,7\n"
    with pytest.raises(ScaleError, match=r"bad\.csv, line 4: grade outside the graded"):
        exchange.import_grades(store, world.curator, world.evaluation.id, bad,
                               filename="bad.csv")
    unknown = b"query_id,doc_id,rater,grade\nq01,a,ann,1\nnope,b,ann,2\n"
    with pytest.raises(InputError, match="'nope' is not in the evaluation's query set"):
        exchange.import_grades(store, world.curator, world.evaluation.id, unknown,
                               filename="u.csv")
    quepid = b"query,docid,rating\ncopy a directory tree,a,1\ncopy a directory tree,b,x\n"
    with pytest.raises(ParseError, match=r"q\.csv, line 3: rating is not a number"):
        exchange.import_grades(store, world.curator, world.evaluation.id, quepid,
                               filename="q.csv", fmt="quepid")
    with pytest.raises(ParseError, match="line 2"):
        exchange.import_grades(store, world.curator, world.evaluation.id,
                               b"q01 0 a 1\nq01 0 b\n", filename="q.txt", fmt="trec")
    big = b"x" * (exchange.MAX_UPLOAD + 1)
    with pytest.raises(InputError, match="larger than"):
        exchange.import_grades(store, world.curator, world.evaluation.id, big,
                               filename="big.csv")
    assert _grades(store) == before


def test_queries_without_grades_and_the_run(store, world):
    task = task_views.query_results(store, world.curator, world.evaluation.id, "q02")[0]
    grading.submit_grade(store, world.judge, GradeInput(task.task_id, 3))
    data, _ = exchange.export(store, world.curator, world.evaluation.id, "queries.tsv")
    ids = [line.split("\t")[0] for line in data.decode().splitlines()[1:]]
    every = [q["query_id"] for q in catalog.query_set_queries(store, world.curator,
                                                              world.query_set.id)]
    assert ids == [q for q in every if q != "q02"]
    run, _ = exchange.export(store, world.curator, world.evaluation.id, "run.txt")
    assert all(len(line.split()) == 6 for line in run.decode().splitlines())


def test_implicit_judgments_import_as_a_rater(store, world, tmp_path):
    # judgments from clicks (rankscope judgments implicit) are a raters' grades file: the
    # app imports them under their rater, on the evaluation's graded scale
    import polars as pl

    from rankscope.judgments.clicks import ClickLog, implicit_judgments

    docs = ["shutil.copytree", "shutil.copy", "shutil.copyfile", "os.walk"]
    rows = [(f"s{s}", "q01", d, p, int(p == 1 + s % 2))
            for s in range(4) for p, d in enumerate(docs[s % 2:] + docs[:s % 2], start=1)]
    log = ClickLog(pl.DataFrame(rows, schema=["session_id", "query_id", "doc_id", "position",
                                              "clicked"], orient="row"))
    judged = implicit_judgments(log, "ctr", min_impressions=1)  # quartiles: grades 0-3
    path = tmp_path / "implicit.csv"
    judged.write(path)
    summary = exchange.import_grades(store, world.curator, world.evaluation.id,
                                     path.read_bytes(), filename="implicit.csv")
    assert summary["imported"] == judged.frame.height == 4
    assert summary["raters"] == ["implicit:ctr"]
