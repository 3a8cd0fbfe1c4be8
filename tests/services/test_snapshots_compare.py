"""rankscope snapshots compare: two rankings side by side, moves and grades checked by hand."""

from __future__ import annotations

import json
import re

import pytest

from .conftest import run_cli

# A hand-made pair (scores decrease down each list: the file order is the rank order).
#   q1  A: d1 d2 d3 d4      B: d3 d1 d9 d2
#       d3: A rank 3 -> B rank 1 = up 2;  d1: 1 -> 2 = down 1;  d9: not in A = new;
#       d2: 2 -> 4 = down 2;  d4: not in B = gone
#   q2  A: d5 d6            B: d5 d6        (nothing moves)
A_RUN = {"q1": ["d1", "d2", "d3", "d4"], "q2": ["d5", "d6"]}
B_RUN = {"q1": ["d3", "d1", "d9", "d2"], "q2": ["d5", "d6"]}
# grades: q1 d1 2, d3 1, d2 0 (judged, not relevant); q2 d5 1; d4, d6 and d9 unjudged
QRELS = "q1 0 d1 2\nq1 0 d3 1\nq1 0 d2 0\nq2 0 d5 1\n"
# P@2 by hand: q1 A {d1, d2}: 1 relevant = 0.5;  B {d3, d1}: 2 = 1.0  (+0.5)
#              q2 A = B {d5, d6}: 1 relevant = 0.5 (+0);  means A 0.5, B 0.75


def _run(path, ranked, tag):
    path.write_text("".join(f"{q} Q0 {d} {i} {10 - i} {tag}\n"
                            for q, docs in ranked.items() for i, d in enumerate(docs, 1)))
    return path


@pytest.fixture
def pair(tmp_path):
    a = _run(tmp_path / "a.run", A_RUN, "a")
    b = _run(tmp_path / "b.run", B_RUN, "b")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(QRELS)
    return a, b, qrels


def test_the_moves_grades_and_metrics_of_a_hand_made_pair(pair):
    a, b, qrels = pair
    code, out, err = run_cli(["snapshots", "compare", a, b, "--qrels", qrels, "-m", "P@2",
                              "-f", "json"])
    assert code == 0, err
    found = json.loads(out)
    assert (found["mean_a"], found["mean_b"]) == (0.5, 0.75)
    # sorted by how much the metric changed: q1 (+0.5) before q2 (0)
    assert [q["query_id"] for q in found["queries"]] == ["q1", "q2"]
    q1, q2 = found["queries"]
    assert (q1["a"], q1["b"], q1["delta"]) == (0.5, 1.0, 0.5)
    side_b = [(r["b"]["doc_id"], r["b"]["move"], r["b"]["grade"]) for r in q1["rows"]]
    assert side_b == [("d3", "up 2", 1), ("d1", "down 1", 2), ("d9", "new", None),
                      ("d2", "down 2", 0)]
    side_a = [(r["a"]["doc_id"], r["a"]["move"]) for r in q1["rows"]]
    assert side_a == [("d1", None), ("d2", None), ("d3", None), ("d4", "gone")]
    assert (q1["new"], q1["gone"], q1["moved"], q1["unjudged_b"]) == (1, 1, 3, 1)
    assert [r["b"]["move"] for r in q2["rows"]] == ["same", "same"]
    assert (q2["delta"], q2["new"], q2["gone"], q2["moved"]) == (0.0, 0, 0, 0)


def test_the_table_prints_both_lists_with_unjudged_and_moves(pair):
    a, b, qrels = pair
    code, out, err = run_cli(["snapshots", "compare", a, b, "--qrels", qrels, "-m", "P@2",
                              "--query", "q1"])
    assert code == 0, err
    assert "q2" not in out
    assert "q1: P@2 0.5000 -> 1.0000 (+0.5000); 1 new, 1 gone, 3 moved, 1 unjudged in B" in out
    lines = [re.split(r"\s{2,}", line.strip()) for line in out.splitlines()
             if re.match(r"\s+\d", line)]
    assert lines == [["1", "d1", "2", "d3", "1", "up 2"],
                     ["2", "d2", "0", "d1", "2", "down 1"],
                     ["3", "d3", "1", "d9", "unjudged", "new"],
                     ["4", "d4", "unjudged", "gone", "d2", "0", "down 2"]]


def test_without_judgments_the_most_changed_list_comes_first(pair):
    a, b, _ = pair
    # q2's lists are the same (RBO 1), q1's are not: q1 first even though it sorts after
    code, out, err = run_cli(["snapshots", "compare", b, a, "-f", "json"])
    assert code == 0, err
    found = json.loads(out)
    assert [q["query_id"] for q in found["queries"]] == ["q1", "q2"]
    assert found["queries"][1]["rbo"] == pytest.approx(1.0)
    # B as the baseline: the moves turn round
    moves = [(r["b"]["doc_id"], r["b"]["move"]) for r in found["queries"][0]["rows"]]
    assert moves == [("d1", "up 1"), ("d2", "up 2"), ("d3", "down 2"), ("d4", "new")]


def test_q_is_a_deprecated_spelling_of_query(pair):
    # -q means --per-query in every other command: here it is --query's old spelling,
    # which still works (the same output) and says so in one line
    a, b, _ = pair
    code, new, err = run_cli(["snapshots", "compare", a, b, "--query", "q1"])
    assert code == 0 and "deprecated" not in err
    code, old, err = run_cli(["snapshots", "compare", a, b, "-q", "q1"])
    assert code == 0 and old == new and "q2" not in old
    assert err.strip() == ("rankscope snapshots compare: warning: -q is deprecated here, "
                           "use --query")


def test_mismatches_and_bad_input_are_refused_as_diff_refuses_them(pair, tmp_path):
    a, b, qrels = pair
    short = _run(tmp_path / "short.run", {"q1": ["d3", "d1"], "q2": ["d5"]}, "s")
    code, _, err = run_cli(["snapshots", "compare", a, short])
    assert code == 2 and "depth 2" in err and "--allow-mismatch" in err
    code, out, err = run_cli(["snapshots", "compare", a, short, "--allow-mismatch", "-f",
                              "json"])
    assert code == 0 and "compared at depth 2" in err
    q1 = next(q for q in json.loads(out)["queries"] if q["query_id"] == "q1")
    assert [r["a"]["doc_id"] for r in q1["rows"]] == ["d1", "d2"]
    code, _, err = run_cli(["snapshots", "compare", a, b, "--query", "q9"])
    assert code == 2 and "'q9'" in err
    code, _, err = run_cli(["snapshots", "compare", a, b, "-m", "P@2"])
    assert code == 2 and "--qrels" in err
    code, _, err = run_cli(["snapshots", "compare", a, b, "--qrels", qrels, "-m", "nDGC@10"])
    assert code == 2 and "nDGC@10" in err and "Traceback" not in err


def test_two_snapshots_of_the_store_by_name(demo, tmp_path):
    store = tmp_path / "s.sqlite"
    for endpoint in (demo / "endpoint.toml", demo / "endpoint_tuned.toml"):
        assert run_cli(["snapshot", endpoint, demo / "queries.tsv", "--store", store,
                        "--quiet"])[0] == 0
    runs = {}
    for name in ("demo-baseline", "demo-tuned"):
        path = tmp_path / f"{name}.run"
        assert run_cli(["snapshots", "export", name, "--store", store, "-o", path])[0] == 0
        runs[name] = {}
        for line in path.read_text().splitlines():
            q, _, d, _, _, _ = line.split()
            runs[name].setdefault(q, []).append(d)
    code, out, err = run_cli(["snapshots", "compare", "demo-baseline", "demo-tuned",
                              "--store", store, "-f", "json"])
    assert code == 0, err
    views = json.loads(out)["queries"]
    assert any(view["moved"] or view["new"] for view in views)  # the weights change something
    for view in views:
        base, other = runs["demo-baseline"][view["query_id"]], runs["demo-tuned"][
            view["query_id"]]
        for i, row in enumerate(view["rows"], start=1):
            doc = other[i - 1]
            # the move by hand: its rank in the baseline's list against its rank here
            want = ("new" if doc not in base else "same" if base.index(doc) + 1 == i
                    else f"up {base.index(doc) + 1 - i}" if base.index(doc) + 1 > i
                    else f"down {i - base.index(doc) - 1}")
            assert (row["b"]["doc_id"], row["b"]["move"]) == (doc, want)
            assert row["a"]["move"] == ("gone" if base[i - 1] not in other else None)


def test_the_help_has_an_example():
    import contextlib
    import io

    from rankscope.cli.main import main

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.suppress(SystemExit):
        main(["snapshots", "compare", "--help"])
    assert "rankscope snapshots compare 1 2 --store demo/store.sqlite" in buffer.getvalue()
