"""The fast ranking and duplicate detection against slow, obviously correct references."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

import rankscope
from rankscope.data.tables import Qrels, Run
from rankscope.engine.ranking import rank, required_depth
from rankscope.errors import DuplicateDocumentError

from .conftest import METRICS, make_case

pytestmark = pytest.mark.usefixtures("both_ranking_paths")


def slow_rank(qrels: pl.DataFrame, run: pl.DataFrame, ties: str) -> dict[str, list[float]]:
    """Per evaluated query, grades in rank order: score desc, then the tie rule.

    ``trec``: doc id descending (bytes); ``docid_asc``: doc id ascending;
    ``input``: file order.
    """
    grades = {(q, d): g for q, d, g in qrels.iter_rows() if g is not None}
    judged_queries = {q for q, _ in grades}
    rows: dict[str, list[tuple[float, bytes, int]]] = {}
    for i, (q, d, s) in enumerate(run.iter_rows()):
        rows.setdefault(q, []).append((s, d.encode(), i))
    out: dict[str, list[float]] = {}
    for q in sorted(judged_queries):
        items = rows.get(q, [])
        if ties == "trec":
            items = sorted(items, key=lambda t: (t[0], t[1]), reverse=True)
        elif ties == "docid_asc":
            items = sorted(items, key=lambda t: (-t[0], t[1]))
        else:
            items = sorted(items, key=lambda t: (-t[0], t[2]))
        out[q] = [grades.get((q, d.decode()), math.nan) for _, d, _ in items]
    return out


def layout(lists: rankscope.engine.ranking.RankedLists) -> dict[str, list[float]]:
    return {
        q: lists.grades[lists.offsets[i]:lists.offsets[i + 1]].tolist()
        for i, q in enumerate(lists.query_ids)
    }


def _shuffled(run: pl.DataFrame, seed: int) -> pl.DataFrame:
    return run.sample(fraction=1.0, shuffle=True, seed=seed)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
@pytest.mark.parametrize("ties", ["trec", "input", "docid_asc"])
@pytest.mark.parametrize("shuffle", [False, True])
def test_rank_matches_the_slow_reference(seed: int, ties: str, shuffle: bool) -> None:
    qrels, run = make_case(seed)
    if shuffle:  # not grouped by query: the general sort path
        run = _shuffled(run, seed)
    lists = rank(Qrels(qrels), Run(run), ties=ties)  # type: ignore[arg-type]
    expected = slow_rank(qrels, run, ties)
    got = layout(lists)
    assert list(got) == list(expected)
    for q in expected:
        np.testing.assert_array_equal(got[q], expected[q])
    # the document ids follow the same order
    docs = lists.doc_ids.to_list()
    for i, q in enumerate(lists.query_ids):
        ranked = docs[lists.offsets[i]:lists.offsets[i + 1]]
        assert len(ranked) == len(expected[q])


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("depth", [0, 1, 3, 10])
@pytest.mark.parametrize("ties", ["trec", "input", "docid_asc"])
def test_depth_cut_is_the_prefix_of_the_full_ranking(seed: int, depth: int, ties: str) -> None:
    qrels, run = make_case(seed)
    for frame in (run, _shuffled(run, seed)):
        full = rank(Qrels(qrels), Run(frame), ties=ties)  # type: ignore[arg-type]
        cut = rank(Qrels(qrels), Run(frame), ties=ties, depth=depth)  # type: ignore[arg-type]
        full_rows = layout(full)
        for q, grades in layout(cut).items():
            np.testing.assert_array_equal(grades, full_rows[q][:depth])


def _slow_docs(run: pl.DataFrame, queries: list[str], ties: str) -> dict[str, list[str]]:
    """Per query, document ids in rank order by a plain Python sort."""
    rows: dict[str, list[tuple[float, bytes, int]]] = {}
    for i, (q, d, s) in enumerate(run.iter_rows()):
        rows.setdefault(q, []).append((s, d.encode(), i))
    out: dict[str, list[str]] = {}
    for q in queries:
        items = rows.get(q, [])
        if ties == "trec":  # score desc, doc id desc
            items = sorted(items, key=lambda t: (t[0], t[1]), reverse=True)
        elif ties == "docid_asc":  # score desc, doc id asc
            items = sorted(items, key=lambda t: (-t[0], t[1]))
        else:
            items = sorted(items, key=lambda t: (-t[0], t[2]))
        out[q] = [d.decode() for _, d, _ in items]
    return out


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("ties", ["docid_asc", "trec"])
@pytest.mark.parametrize("depth", [None, 1, 4])
def test_tied_documents_follow_the_tie_rule(seed: int, ties: str, depth: int | None) -> None:
    # exact_ties: every tied run ordered, also where the grades cannot tell (the default
    # orders only runs of differing grades: test_rank_matches_the_slow_reference)
    qrels, run = make_case(seed)
    for frame in (run, _shuffled(run, seed)):
        lists = rank(Qrels(qrels), Run(frame), ties=ties, depth=depth,  # type: ignore[arg-type]
                     exact_ties=True)
        expected = _slow_docs(frame, lists.query_ids, ties)
        docs = lists.doc_ids.to_list()
        for i, q in enumerate(lists.query_ids):
            want = expected[q] if depth is None else expected[q][:depth]
            assert docs[lists.offsets[i]:lists.offsets[i + 1]] == want, q


def test_docid_asc_decides_reciprocal_rank() -> None:
    # four documents tied at the top, "a" < "b" < "c" < "d"; only "a" is relevant:
    # first when ties go by id ascending, fourth by id descending
    run = {"q": {"d": 1.0, "c": 1.0, "b": 1.0, "a": 1.0, "z": 0.5}}
    qrels = {"q": {"a": 1}}
    asc = rankscope.evaluate(qrels, run, "RR@10", ties="docid_asc")  # type: ignore[arg-type]
    desc = rankscope.evaluate(qrels, run, "RR@10")
    assert asc["RR@10"] == 1.0
    assert desc["RR@10"] == 0.25


def test_long_tie_runs_across_the_cut() -> None:
    # 200 documents with one score: the cut at 5 must pick the 5 largest ids
    run = pl.DataFrame({"query_id": ["q"] * 200, "doc_id": [f"d{i:03d}" for i in range(200)],
                        "score": [1.0] * 200})
    qrels = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["d199", "d195", "d100"],
                          "grade": [1.0, 2.0, 3.0]})
    lists = rank(Qrels(qrels), Run(run), depth=5)
    assert lists.doc_ids.to_list() == ["d199", "d198", "d197", "d196", "d195"]
    np.testing.assert_array_equal(lists.grades, [1.0, np.nan, np.nan, np.nan, 2.0])


def test_required_depth() -> None:
    parse = rankscope.parse_metrics
    assert required_depth([m for _, m in parse("ndcg@10") + parse("P@5")]) == 10
    assert required_depth([m for _, m in parse("ndcg@10") + parse("AP")]) is None
    assert required_depth([m for _, m in parse("bpref")]) is None
    assert required_depth([m for _, m in parse("num_rel") + parse("P@3")]) == 3


@pytest.mark.parametrize("seed", [1, 2])
def test_cut_evaluation_equals_full_evaluation(seed: int) -> None:
    qrels, run = make_case(seed)
    metrics = [m for m in METRICS if "@" in m] + ["num_rel"]
    from rankscope.engine.evaluate import compute, resolve_metrics

    ms = [m for _, m in resolve_metrics(metrics)]
    full = compute(rank(Qrels(qrels), Run(run)), ms, unjudged="nonrelevant")
    cut = compute(rank(Qrels(qrels), Run(run), depth=required_depth(ms)), ms,
                  unjudged="nonrelevant")
    np.testing.assert_array_equal(full, cut)


# -- duplicates --------------------------------------------------------------------------------


def slow_first_duplicate(frame: pl.DataFrame) -> tuple[int, int] | None:
    """The file's first row taking part in a repeated pair, and that pair's second row."""
    rows = list(frame.select("query_id", "doc_id").iter_rows())
    counts: dict[tuple[str, str], list[int]] = {}
    for i, pair in enumerate(rows):
        counts.setdefault(pair, []).append(i)
    repeated = [v for v in counts.values() if len(v) > 1]
    if not repeated:
        return None
    first = min(v[0] for v in repeated)
    pair_rows = counts[rows[first]]
    return pair_rows[0], pair_rows[1]


def _with_duplicates(seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    n = 300
    return pl.DataFrame({
        "query_id": [f"q{x}" for x in rng.integers(0, 4, n)],
        "doc_id": [f"d{x}" for x in rng.integers(0, 60, n)],
        "score": rng.integers(0, 5, n).astype(float),
    })


@pytest.mark.parametrize("seed", range(6))
def test_duplicate_error_names_the_same_rows_as_the_reference(seed: int) -> None:
    frame = _with_duplicates(seed)
    expected = slow_first_duplicate(frame)
    assert expected is not None
    with pytest.raises(DuplicateDocumentError) as err:
        Run(frame, source="r")
    first, second = expected
    assert err.value.line == second + 1
    assert f"first at line {first + 1}" in str(err.value)
    assert err.value.value == frame.row(second)[1]


@pytest.mark.parametrize("seed", range(6))
def test_duplicate_policies_match_the_reference(seed: int) -> None:
    frame = _with_duplicates(seed)
    rows = list(frame.iter_rows())
    first_seen: dict[tuple[str, str], int] = {}
    best: dict[tuple[str, str], int] = {}
    for i, (q, d, s) in enumerate(rows):
        first_seen.setdefault((q, d), i)
        if (q, d) not in best or s > rows[best[(q, d)]][2]:
            best[(q, d)] = i
    keep_first = [rows[i] for i in sorted(first_seen.values())]
    keep_max = [rows[i] for i in sorted(best.values())]
    assert list(Run(frame, on_duplicate="first").frame.iter_rows()) == keep_first
    assert list(Run(frame, on_duplicate="max").frame.iter_rows()) == keep_max


def test_hash_collisions_alone_are_not_duplicates(monkeypatch: pytest.MonkeyPatch) -> None:
    from rankscope.data import tables

    # make every pair hash alike: only the exact comparison may decide
    monkeypatch.setattr(tables, "pair_hashes",
                        lambda f: pl.Series("pair", [7] * f.height, dtype=pl.UInt64))
    frame = pl.DataFrame({"query_id": ["a", "a", "b"], "doc_id": ["x", "y", "x"],
                          "score": [1.0, 2.0, 3.0]})
    assert Run(frame).frame.height == 3
    assert Run(frame, on_duplicate="first").frame.height == 3
    dup = pl.DataFrame({"query_id": ["a", "b", "a"], "doc_id": ["x", "x", "x"],
                        "score": [1.0, 2.0, 3.0]})
    with pytest.raises(DuplicateDocumentError) as err:
        Run(dup)
    assert err.value.line == 3


@pytest.mark.parametrize("seed", range(6))
def test_duplicates_in_a_run_grouped_by_query(seed: int) -> None:
    # each query's rows together: the duplicate proof sorts each query's hashes
    frame = _with_duplicates(seed).sort("query_id", maintain_order=True)
    expected = slow_first_duplicate(frame)
    assert expected is not None
    with pytest.raises(DuplicateDocumentError) as err:
        Run(frame, source="r")
    assert err.value.line == expected[1] + 1
    distinct = frame.unique(["query_id", "doc_id"], keep="first", maintain_order=True)
    assert Run(distinct).frame.height == distinct.height  # and none when there is none
