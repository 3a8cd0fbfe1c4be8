"""Whatever scores a snapshot scores the engine's order (issue 24, section 1).

The reproduction: an engine that gives every hit the same score (a
constant-score filter, a rescorer returning ranks). The baseline returns
doc1..doc5, the candidate doc5..doc1; doc1 is the only relevant document, on
12 queries. In the engine's order P@1 falls from 1.0 to 0.0 on every query
(by the definition of P@1: the first result is relevant or not). Scored in
trec_eval's tie order (document id descending) both runs would rank doc5
first and score 0.0 -> 0.0.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import warnings

import pytest

import rankscope
from rankscope.cli.main import main
from rankscope.errors import RankscopeWarning
from search.engine_server import EngineServer, Reply

DOCS = ["doc1", "doc2", "doc3", "doc4", "doc5"]
QUERIES = [f"q{i:02d}" for i in range(1, 13)]


def es_body(order: list[str], score: float | None = 1.0) -> bytes:
    hits = [{"_index": "i", "_id": d, "_score": score, "_source": {"title": d}} for d in order]
    return json.dumps({"timed_out": False, "hits": {"total": {"value": len(order),
                                                              "relation": "eq"},
                                                    "hits": hits}}).encode()


@pytest.fixture
def world(tmp_path):
    """Two endpoints with equal scores and opposite orders, 12 queries, doc1 relevant."""
    server = EngineServer()
    server.route("POST", "/base/_search", Reply(es_body(DOCS)))
    server.route("POST", "/cand/_search", Reply(es_body(DOCS[::-1])))
    for name in ("base", "cand"):
        (tmp_path / f"{name}.toml").write_text(
            f'kind = "elasticsearch"\nname = "{name}"\nurl = "{server.url}"\nindex = "{name}"\n')
    (tmp_path / "queries.tsv").write_text("".join(f"{q}\tquery {q}\n" for q in QUERIES))
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 doc1 1\n" for q in QUERIES))
    try:
        yield tmp_path
    finally:
        server.close()


def run_cli(argv, capsys):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def snapshot(world, name, capsys, *extra):
    code, _, err = run_cli(["snapshot", world / f"{name}.toml", world / "queries.tsv",
                            "-o", world / f"{name}.txt", *extra], capsys)
    assert code == 0, err
    return world / f"{name}.txt"


def test_check_fails_when_the_engine_order_drops_p_at_1(world, capsys):
    base = snapshot(world, "base", capsys)
    cand = snapshot(world, "cand", capsys)
    code, out, err = run_cli(["check", world / "qrels.txt", cand, "--baseline", base,
                              "-m", "P@1", "-f", "json"], capsys)
    assert code == 1, (out, err)
    (metric,) = json.loads(out)["metrics"]
    assert (metric["mean_baseline"], metric["mean_run"], metric["delta"]) == (1.0, 0.0, -1.0)
    assert metric["regression"] is True


def test_a_run_from_a_snapshot_has_strictly_decreasing_scores_in_engine_order(world, capsys):
    cand = snapshot(world, "cand", capsys)
    lines = [line.split() for line in cand.read_text().splitlines()]
    for q in QUERIES:
        mine = [(doc, int(rank), float(score)) for qid, _, doc, rank, score, _ in lines
                if qid == q]
        assert [doc for doc, _, _ in mine] == DOCS[::-1]
        assert [rank for _, rank, _ in mine] == [1, 2, 3, 4, 5]
        scores = [score for _, _, score in mine]
        assert all(a > b for a, b in itertools.pairwise(scores))
    # every other tool orders by score: the engine's first document is ranked first
    assert rankscope.evaluate(str(world / "qrels.txt"), str(cand), "P@1")["P@1"] == 0.0


def test_engine_scores_on_request_warn_when_they_tie(world, capsys):
    code, _, err = run_cli(["snapshot", world / "cand.toml", world / "queries.tsv", "-o",
                            world / "engine.txt", "--run-scores", "engine"], capsys)
    assert code == 0, err
    assert "warning: run scores from the engine: 12 queries have tied engine scores" in err
    scores = {line.split()[4] for line in (world / "engine.txt").read_text().splitlines()}
    assert scores == {"1.0"}  # the engine's own scores, as asked


def test_snapshots_diff_scores_the_engine_order(world, capsys):
    db = world / "s.sqlite"
    snapshot(world, "base", capsys, "--store", db)
    snapshot(world, "cand", capsys, "--store", db)
    code, out, err = run_cli(["snapshots", "diff", "base", "cand", "--store", db, "--qrels",
                              world / "qrels.txt", "-m", "P@1", "-f", "json"], capsys)
    assert code == 0, err
    metrics = json.loads(out)["metrics"]
    assert {name: run["mean"]["P@1"] for name, run in metrics["runs"].items()} == {
        "#1 base": 1.0, "#2 cand": 0.0}
    (comparison,) = metrics["comparisons"]
    assert (comparison["delta"], comparison["losses"]) == (-1.0, 12)


def test_export_then_evaluate_scores_the_engine_order(world, capsys):
    db = world / "s.sqlite"
    snapshot(world, "base", capsys, "--store", db)
    snapshot(world, "cand", capsys, "--store", db)
    for name, expected in (("base", 1.0), ("cand", 0.0)):
        out_file = world / f"{name}-export.txt"
        code, _, err = run_cli(["snapshots", "export", name, "--store", db, "-o", out_file],
                               capsys)
        assert code == 0, err
        assert rankscope.evaluate(str(world / "qrels.txt"), str(out_file), "P@1")["P@1"] \
            == expected


def test_check_reads_snapshots_from_the_store(world, capsys):
    db = world / "s.sqlite"
    snapshot(world, "base", capsys, "--store", db)
    snapshot(world, "cand", capsys, "--store", db)
    code, out, err = run_cli(["check", world / "qrels.txt", "cand", "--baseline", "#1",
                              "--store", db, "-m", "P@1", "-f", "json"], capsys)
    assert code == 1, (out, err)
    (metric,) = json.loads(out)["metrics"]
    assert (metric["mean_baseline"], metric["mean_run"]) == (1.0, 0.0)
    code, _, err = run_cli(["check", world / "qrels.txt", "cand", "--baseline", "#1",
                            "-m", "P@1"], capsys)
    assert code == 2 and "give --store DB" in err


def test_the_apps_run_of_a_snapshot_scores_the_engine_order(world):
    """The dashboards evaluate :func:`run_lines_of` (what the app's run.txt export holds)."""
    from rankscope.search.config import load_endpoint, open_endpoint
    from rankscope.search.queries import read_queries
    from rankscope.services.snapshot_hits import run_from_lines, run_lines_of
    from rankscope.services.snapshots import take_snapshot
    from rankscope.store.db import open_store

    store = open_store(world / "s.sqlite")
    try:
        async def go():
            endpoint = open_endpoint(load_endpoint(world / "base.toml"))
            try:
                return await take_snapshot(endpoint, read_queries(world / "queries.tsv"),
                                           store=store, depth=5)
            finally:
                await endpoint.aclose()

        outcome = asyncio.run(go())
        with store.read() as session:
            lines, _ = run_lines_of(session, outcome.snapshot_id, "base")
    finally:
        store.close()
    run = run_from_lines(lines, "base")
    qrels = {q: {"doc1": 1} for q in QUERIES}  # the engine's first: P@1 = 1 by definition
    assert rankscope.evaluate(qrels, run, "P@1")["P@1"] == 1.0
    qrels = {q: {"doc5": 1} for q in QUERIES}  # the engine's last: RR = 1/5
    assert rankscope.evaluate(qrels, run, "RR")["RR"] == pytest.approx(1 / 5)


def test_check_ties_option_orders_equal_scores_as_asked(tmp_path, capsys):
    """A run file with equal scores: --ties input scores the file's order."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 doc1 1\n" for q in QUERIES))
    base, cand = tmp_path / "base.txt", tmp_path / "cand.txt"
    base.write_text("".join(f"{q} Q0 {d} {r} 1.0 b\n" for q in QUERIES
                            for r, d in enumerate(DOCS, 1)))
    cand.write_text("".join(f"{q} Q0 {d} {r} 1.0 c\n" for q in QUERIES
                            for r, d in enumerate(DOCS[::-1], 1)))
    code, out, _ = run_cli(["check", qrels, cand, "--baseline", base, "-m", "P@1"], capsys)
    assert code == 0  # trec ties: doc5 first in both, 0.0 -> 0.0
    code, out, _ = run_cli(["check", qrels, cand, "--baseline", base, "-m", "P@1",
                            "--ties", "input"], capsys)
    assert code == 1 and "REGRESSION" in out


def test_check_allow_no_overlap(tmp_path, capsys):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("Q1 0 d 1\nQ2 0 d 1\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d 1 1.0 r\nq2 Q0 d 1 1.0 r\n")
    code, _, err = run_cli(["check", qrels, run, "--baseline", run, "-m", "P@1"], capsys)
    assert code == 2 and "--allow-no-overlap" in err
    code, out, err = run_cli(["check", qrels, run, "--baseline", run, "-m", "P@1",
                              "--allow-no-overlap"], capsys)
    assert code == 0, err
    assert "PASS" in out


def test_run_scores_rank_is_the_default_and_engine_scores_fall_back():
    from rankscope.services.snapshots import trec_lines

    ranked = [("q1", [("a", 3.0), ("b", 3.0)]), ("q2", [("a", None), ("b", 1.0)]),
              ("q3", [("a", 2.0), ("b", 1.0)])]
    assert [line.split()[4] for line in trec_lines(ranked, 10, "t")] == [
        "10.0", "9.0", "10.0", "9.0", "10.0", "9.0"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lines = trec_lines(ranked, 10, "t", scores="engine")
    assert [line.split()[4] for line in lines] == ["3.0", "3.0", "10.0", "9.0", "2.0", "1.0"]
    (warned,) = [w for w in caught if issubclass(w.category, RankscopeWarning)]
    assert "1 query has tied engine scores" in str(warned.message)
    assert "1 query written with rank scores" in str(warned.message)


def test_check_writes_junit_and_prints_the_interval(world, capsys):
    import xml.etree.ElementTree as ET

    base = snapshot(world, "base", capsys)
    cand = snapshot(world, "cand", capsys)
    report = world / "check.xml"
    code, out, err = run_cli(["check", world / "qrels.txt", cand, "--baseline", base,
                              "-m", "P@1", "-m", "P@5", "--junit", report], capsys)
    assert code == 1, err
    assert "90% interval" in out and "[-1.0000, -1.0000]" in out  # no variance: a point
    cases = {c.get("name"): c for c in ET.parse(report).getroot().iter("testcase")}
    assert cases["P@1"].find("failure") is not None  # 1.0 -> 0.0
    assert cases["P@5"].find("failure") is None  # doc1 is in both top 5: 0.2 -> 0.2
    code, _, err = run_cli(["check", world / "qrels.txt", cand, "--baseline", base,
                            "-m", "P@1", "--junit", world / "no" / "dir.xml"], capsys)
    assert code != 0 and "Traceback" not in err
