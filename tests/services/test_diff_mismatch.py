"""Comparisons say when they compare different things (issue 24, section 3).

The reproduction: the same engine snapshotted at depth 3 and at depth 10.
Its rankings are identical as far as both go, yet a diff at k = 10 counted
Jaccard 3/10 = 0.300 and 7 documents "entered" per query. Snapshots of
different query sets likewise counted every query as changed.
"""

from __future__ import annotations

import json

import pytest

from search.engine_server import EngineServer, Reply

from .conftest import run_cli

DOCS = [f"d{i:02d}" for i in range(1, 11)]


def es_body(ids):
    return json.dumps({"hits": {"total": {"value": len(ids), "relation": "eq"},
                                "hits": [{"_id": d, "_score": 10.0 - i}
                                         for i, d in enumerate(ids)]}}).encode()




@pytest.fixture
def engine(tmp_path):
    server = EngineServer()
    server.route("POST", "/products/_search", Reply(es_body(DOCS)))
    (tmp_path / "shop.toml").write_text(
        f'kind = "elasticsearch"\nname = "shop"\nurl = "{server.url}"\nindex = "products"\n')
    try:
        yield server
    finally:
        server.close()


def snapshot(tmp_path, queries, *extra):
    qfile = tmp_path / "queries.tsv"
    qfile.write_text("".join(f"{q}\t{text}\n" for q, text in queries))
    code, _, err = run_cli(["snapshot", tmp_path / "shop.toml", qfile, "--store",
                            tmp_path / "s.sqlite", "--quiet", *extra])
    assert code == 0, err


QUERIES = [(f"q{i}", f"query {i}") for i in range(1, 5)]


def test_a_depth_3_and_a_depth_10_snapshot_are_not_compared_as_if_alike(engine, tmp_path):
    snapshot(tmp_path, QUERIES, "--depth", "3")
    snapshot(tmp_path, QUERIES, "--depth", "10")
    db = tmp_path / "s.sqlite"
    code, _, err = run_cli(["snapshots", "diff", "1", "2", "--store", db, "-f", "json"])
    assert code == 2
    assert "#2 shop has depth 10, #1 shop depth 3" in err and "--allow-mismatch" in err
    code, out, err = run_cli(["snapshots", "diff", "1", "2", "--store", db, "-f", "json",
                              "--allow-mismatch"])
    assert code == 0, err
    assert "warning: compared at depth 3 on 4 queries" in err
    (d,) = json.loads(out)["diffs"]
    # cut at depth 3 both list d01, d02, d03: nothing changed
    assert (d["jaccard"], d["entered"], d["left"], d["queries_changed"]) == (1.0, 0, 0, 0)
    assert d["rbo"] == pytest.approx(1.0)


def test_snapshots_of_different_query_sets_are_refused_or_compared_on_shared_queries(
        engine, tmp_path):
    snapshot(tmp_path, QUERIES)
    snapshot(tmp_path, [*QUERIES[2:], ("q5", "query 5"), ("q6", "query 6")])
    db = tmp_path / "s.sqlite"
    code, _, err = run_cli(["snapshots", "diff", "1", "2", "--store", db])
    assert code == 2
    assert "answer different queries (2 only in #1 shop, 2 only in #2 shop)" in err
    code, out, err = run_cli(["snapshots", "diff", "1", "2", "--store", db, "-f", "json",
                              "--allow-mismatch"])
    assert code == 0, err
    (d,) = json.loads(out)["diffs"]
    assert sorted(d["per_query"]) == ["q3", "q4"] and d["queries_changed"] == 0
    assert "compared at depth 10 on 2 queries (4 left out)" in err


def test_the_same_ids_with_other_texts_are_another_query_set(engine, tmp_path):
    snapshot(tmp_path, QUERIES)
    snapshot(tmp_path, [(q, text + " changed") for q, text in QUERIES])
    code, _, err = run_cli(["snapshots", "diff", "1", "2", "--store", tmp_path / "s.sqlite"])
    assert code == 2 and "different query sets (the same ids with other texts" in err


def test_alike_snapshots_compare_without_a_warning(engine, tmp_path):
    snapshot(tmp_path, QUERIES)
    snapshot(tmp_path, QUERIES)
    code, out, err = run_cli(["snapshots", "diff", "1", "2", "--store", tmp_path / "s.sqlite",
                              "-f", "json"])
    assert code == 0 and "warning" not in err
    assert json.loads(out)["warnings"] == []


def test_run_files_missing_a_query_are_not_a_mismatch_but_disjoint_ones_are(tmp_path):
    a, b, c = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "c.txt"
    a.write_text("q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\nq2 Q0 d1 1 1.0 a\n")
    b.write_text("q1 Q0 d2 1 2.0 b\nq1 Q0 d1 2 1.0 b\n")  # q2 returned nothing
    c.write_text("x1 Q0 d1 1 2.0 c\nx1 Q0 d2 2 1.0 c\n")
    code, out, err = run_cli(["snapshots", "diff", a, b, "-f", "json"])
    assert code == 0, err
    (d,) = json.loads(out)["diffs"]
    assert d["per_query"]["q2"]["left"] == 1  # an empty ranking there: d1 left
    code, _, err = run_cli(["snapshots", "diff", a, c])
    assert code == 2 and "share no query" in err


def test_mean_move_is_over_the_documents_that_moved():
    import polars as pl

    from rankscope.services.snapshot_diff import Ranking, diff_rankings

    def ranking(label, docs):
        frame = pl.DataFrame({"query_id": ["q"] * len(docs), "doc_id": docs,
                              "rank": list(range(1, len(docs) + 1)),
                              "score": [float(-r) for r in range(1, len(docs) + 1)]})
        return Ranking(label=label, frame=frame, query_ids=["q"])

    # a and b swap (moves of 1 and 1), c moves 3 places down; d, e stay
    (d,) = diff_rankings([ranking("A", ["a", "b", "c", "d", "e", "f"]),
                          ranking("B", ["b", "a", "f", "d", "e", "c"])], k=6)
    row = d.per_query.row(0, named=True)
    assert row["moved"] == 4  # a, b, c, f
    assert row["mean_abs_move"] == pytest.approx((1 + 1 + 3 + 3) / 4)
