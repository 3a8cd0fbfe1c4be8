"""The matching's join parted by the keys' top bits (against many judgments): each part
joined alone, the same matches as one join and as the definition (a document's first
judgment line of its query), a forged key match still confirmed on the strings."""

from __future__ import annotations

import tracemalloc

import numpy as np
import polars as pl
import pytest

from rankscope.data.tables import Qrels, Run
from rankscope.engine import ranking_match
from rankscope.engine.ranking import rank
from rankscope.engine.ranking_match import Judged, doc_keys, lookup

from .conftest import make_case
from .test_fast_ranking import layout, slow_rank


def _case(seed: int) -> tuple[Judged, np.ndarray, pl.Series, dict[tuple[int, str], int]]:
    """Judgments of 40 queries and run rows (some judged, some not, some of no evaluated
    query: index -1), with the definition: (query index, document) -> its judgment line."""
    rng = np.random.default_rng(seed)
    jq = rng.integers(0, 40, 3000)
    jd = [f"d{int(x)}" for x in rng.integers(0, 400, 3000)]
    first: dict[tuple[int, str], int] = {}
    keep = []
    for line, (q, d) in enumerate(zip(jq.tolist(), jd, strict=True)):
        if (q, d) not in first:
            first[(q, d)] = len(keep)
            keep.append(line)
    query = jq[keep].astype(np.int64)
    docs = pl.Series([jd[i] for i in keep])
    judged = Judged(query, docs, rng.random(len(keep)), 40, find_duplicates=False)
    run_q = rng.integers(-1, 40, 5000).astype(np.int64)
    run_docs = pl.Series([f"d{int(x)}" for x in rng.integers(0, 500, 5000)])
    return judged, run_q, run_docs, first


def _matches(hit: np.ndarray, line: np.ndarray) -> dict[int, int]:
    assert hit.size == np.unique(hit).size  # each run row matched once at most
    return dict(zip(hit.tolist(), line.tolist(), strict=True))


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("at_once", [1, 300, 1 << 40])
def test_a_parted_join_finds_each_rows_first_judgment(seed: int, at_once: int,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    judged, run_q, run_docs, first = _case(seed)
    monkeypatch.setattr(ranking_match, "PROBED_BELOW", 0)  # the join, not the probes
    monkeypatch.setattr(ranking_match, "_JOINED_AT_ONCE", at_once, raising=False)
    hit, line = lookup(doc_keys(run_q, run_docs), run_q, run_docs, judged)
    # the definition: a row of an evaluated query whose document that query judged
    expected = {row: first[(q, d)] for row, (q, d) in
                enumerate(zip(run_q.tolist(), run_docs.to_list(), strict=True))
                if (q, d) in first}
    assert expected  # the case has matches (and rows without one)
    assert _matches(hit, line) == expected


@pytest.mark.parametrize("at_once", [1, 300])
def test_a_parted_join_confirms_a_key_match_on_the_strings(at_once: int,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    judged, run_q, run_docs, first = _case(7)
    monkeypatch.setattr(ranking_match, "PROBED_BELOW", 0)
    monkeypatch.setattr(ranking_match, "_JOINED_AT_ONCE", at_once, raising=False)
    keys = doc_keys(run_q, run_docs)
    # a forged collision: a row whose key is a judgment's key, its document another one
    keys[0], run_docs[0], run_q[0] = judged.keys[5], "not judged", judged.query[5]
    hit, line = lookup(keys, run_q, run_docs, judged)
    got = _matches(hit, line)
    assert 0 not in got
    expected = {row: first[(q, d)] for row, (q, d) in
                enumerate(zip(run_q.tolist(), run_docs.to_list(), strict=True))
                if (q, d) in first}
    assert got == expected


def test_a_join_against_many_judgments_holds_a_part_of_them_at_a_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    judged, run_q, run_docs, _ = _case(3)
    monkeypatch.setattr(ranking_match, "PROBED_BELOW", 0)
    monkeypatch.setattr(ranking_match, "_JOINED_AT_ONCE", 256, raising=False)
    heights: list[int] = []
    join = pl.DataFrame.join

    def spied(self: pl.DataFrame, other: pl.DataFrame, *args: object, **kwargs: object
              ) -> pl.DataFrame:
        heights.append(other.height)
        return join(self, other, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pl.DataFrame, "join", spied)
    lookup(doc_keys(run_q, run_docs), run_q, run_docs, judged)
    # about 2,600 judgments, at most a quarter of 256 a part on average: 64 parts (the
    # top 6 bits of a key), none near all of them
    assert len(heights) == 64 and sum(heights) == judged.keys.size
    assert max(heights) < 2 * 64


@pytest.mark.parametrize("judgments", [2**21 + 1, 3_000_000, 7_126_580, 2**23, 2**24 + 1])
def test_a_parted_join_holds_a_quarter_of_the_joined_at_once_a_part(judgments: int) -> None:
    # the parts' average size from the number of parts alone (the top bits of a key):
    # at most a quarter of _JOINED_AT_ONCE judgments, the fewest parts that give it
    bits = ranking_match._part_bits(judgments)
    part = ranking_match._JOINED_AT_ONCE // 4
    assert judgments / (1 << bits) <= part < judgments / (1 << (bits - 1))
    assert ranking_match._part_bits(ranking_match._JOINED_AT_ONCE) == 0


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("ties", ["trec", "docid_asc"])
def test_a_run_ranked_with_a_parted_join_ranks_as_the_reference(
        seed: int, ties: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from rankscope.engine import ranking

    qrels, run = make_case(seed)
    monkeypatch.setattr(ranking, "_THREADED_FROM", 0)
    monkeypatch.setattr(ranking_match, "PROBED_BELOW", 0)
    monkeypatch.setattr(ranking_match, "_JOINED_AT_ONCE", 8, raising=False)
    for depth in (None, 3):
        got = layout(rank(Qrels(qrels), Run(run), ties=ties, depth=depth))  # type: ignore[arg-type]
        expected = slow_rank(qrels, run, ties)
        if depth is not None:
            expected = {q: g[:depth] for q, g in expected.items()}
        assert list(got) == list(expected)
        for q in expected:
            np.testing.assert_array_equal(got[q], expected[q])


@pytest.mark.parametrize("parted", [False, True])
def test_key_matches_are_confirmed_a_block_of_rows_at_a_time(
        parted: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    judged, run_q, run_docs, first = _case(11)
    # the run's documents in many chunks, as a file read in pieces gives them
    run_docs = pl.concat([run_docs.slice(lo, 250) for lo in range(0, run_docs.len(), 250)],
                         rechunk=False)
    monkeypatch.setattr(ranking_match, "PROBED_BELOW", 0)
    monkeypatch.setattr(ranking_match, "_JOINED_AT_ONCE", 300 if parted else 1 << 40,
                        raising=False)
    monkeypatch.setattr(ranking_match, "_CONFIRMED_AT_ONCE", 64, raising=False)
    keys = doc_keys(run_q, run_docs)
    # forged collisions in the first and in a late block: a row keyed as a judgment whose
    # document is another one (confirmed on the strings, they must not match)
    for row, line in ((0, 5), (4000, 9)):
        keys[row], run_q[row] = judged.keys[line], judged.query[line]
        run_docs[row] = "not judged"
    gathered: list[int] = []
    gather = ranking_match.gather_many

    def spied(column: pl.Series, rows: np.ndarray) -> pl.Series:
        gathered.append(rows.size)
        return gather(column, rows)

    monkeypatch.setattr(ranking_match, "gather_many", spied)
    hit, line = lookup(keys, run_q, run_docs, judged)
    got = _matches(hit, line)
    expected = {row: first[(q, d)] for row, (q, d) in
                enumerate(zip(run_q.tolist(), run_docs.to_list(), strict=True))
                if (q, d) in first}
    assert 0 not in got and 4000 not in got
    assert got == expected
    # every key match (about 2,000 here) compared 64 at a time, never all of them at once
    assert sum(gathered) == 2 * (len(expected) + 2)
    assert max(gathered) <= 64


def test_keyed_judgments_hold_4_byte_query_indices_and_the_qrels_own_grades() -> None:
    # alive through the matching beside every run row's arrays: the query index in 4 bytes
    # a judgment, the grades the qrels frame's own values (no 8-byte copy of each)
    from rankscope.engine.qrels_index import qrels_index

    frame = pl.DataFrame({"query_id": ["q2", "q1", "q1", "q2"], "doc_id": ["a", "b", "c", "d"],
                          "grade": [1.0, 0.0, 2.0, 3.0]})
    qrels = Qrels(frame)
    index = qrels_index(qrels)
    judged = index.judged(index.query_ids)
    assert judged.query.dtype == np.int32
    assert judged.query.tolist() == [1, 0, 0, 1]  # q1 is query 0, q2 query 1
    assert np.shares_memory(judged.grades, qrels.held.get_column("grade").to_numpy())
    # each query's judged grades best first, as from the definition
    offsets, grades = index.judged_lists(index.query_ids, levels=False)
    assert offsets.tolist() == [0, 2, 4] and grades.tolist() == [2.0, 0.0, 3.0, 1.0]


@pytest.mark.parametrize("grades", ["whole", "fractional", "negative zero"])
def test_judged_lists_are_counted_a_block_of_judgments_at_a_time(
        grades: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from rankscope.engine import qrels_index as qi

    rng = np.random.default_rng(5)
    q = rng.integers(0, 30, 1000).astype(np.int32)
    g = rng.integers(-1, 4, 1000).astype(np.float64)
    if grades == "fractional":
        g[700] = 1.5  # in a late block: the grades are sorted instead
    elif grades == "negative zero":
        g[900] = -0.0
    monkeypatch.setattr(qi, "_COUNTED_AT_ONCE", 64, raising=False)
    counted: list[int] = []
    bincount = np.bincount

    def spied(x: np.ndarray, *args: object, **kwargs: object) -> np.ndarray:
        counted.append(x.size)
        return bincount(x, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(qi.np, "bincount", spied)
    got = qi._best_first(q, g, 30)
    # the definition: by query, then best grade first (-0.0 kept as it is, after 0.0's ties)
    expected = [g[i] for i in sorted(range(g.size), key=lambda i: (q[i], -g[i]))]
    assert got.tolist() == expected
    assert [np.signbit(x) for x in got] == [np.signbit(x) for x in expected]
    if grades == "whole":
        assert sum(counted) == g.size and max(counted) <= 64
    else:
        assert counted == []


def test_a_parted_joins_hits_are_put_back_in_run_order_without_a_sort_of_them_all(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # 200,000 judgments of 100 queries; the run ranks each once and as many unjudged rows
    rng = np.random.default_rng(4)
    jq = np.repeat(np.arange(100, dtype=np.int64), 2000)
    docs = pl.Series([f"d{i}" for i in range(jq.size)])
    judged = Judged(jq, docs, rng.random(jq.size), 100, find_duplicates=False)
    run_q = np.concatenate([jq, rng.integers(0, 100, jq.size)]).astype(np.int64)
    run_docs = pl.concat([docs, pl.Series([f"u{i}" for i in range(jq.size)])])
    hit, line, peak = _traced_lookup(judged, run_q, run_docs, 1 << 14, monkeypatch)
    # the definition: run row i < 200,000 is judgment line i, no other row is judged
    np.testing.assert_array_equal(hit, np.arange(jq.size))
    np.testing.assert_array_equal(line, np.arange(jq.size))
    assert hit.dtype == line.dtype == np.int64
    # 64 parts' hits merged: the parts' lists, their concatenation, a stable sort's order
    # and the sorted copies of every hit were 41.5 bytes a hit at once (traced); the line
    # written at each run row (4 bytes a run row) and read back in order: 33.1 (the
    # strings' confirmation of every hit is then the larger)
    assert peak < 36 * hit.size


def test_the_halves_matches_are_held_in_4_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    judged, run_q, run_docs, first = _case(5)
    monkeypatch.setattr(ranking_match, "PROBED_BELOW", 0)
    monkeypatch.setattr(ranking_match, "_HALVED_FROM", 1000, raising=False)
    found = ranking_match._lookups(run_q, run_docs, judged, None)
    # two halves, each half's run rows and judgment lines 32-bit while the other is matched
    assert len(found) == 2
    assert all(h.dtype == np.int32 and j.dtype == np.int32 for h, j in found)
    got = _matches(np.concatenate([h for h, _ in found]), np.concatenate([j for _, j in found]))
    expected = {row: first[(q, d)] for row, (q, d) in
                enumerate(zip(run_q.tolist(), run_docs.to_list(), strict=True))
                if (q, d) in first}
    assert got == expected
    # each row's grade as the definition's: its judgment's, NaN when it has none
    grades = ranking_match.match_rows(run_q, run_docs, judged)
    np.testing.assert_array_equal(
        grades, [judged.grades[expected[i]] if i in expected else np.nan
                 for i in range(run_q.size)])


def test_the_parts_are_read_from_the_keys_top_byte(monkeypatch: pytest.MonkeyPatch) -> None:
    # each key's part was its top bits shifted down in a copy of every key (57 MB of
    # 8-byte keys at 7.1 M judgments, the matching's peak): read from the top byte, the
    # numpy memory the lookup traces stays under half the judgments' keys, and the
    # matches are the definition's
    n = 200_000
    docs = pl.Series([f"d{i}" for i in range(n)])
    query = np.arange(n, dtype=np.int64) % 50
    judged = Judged(query, docs, np.ones(n), 50, find_duplicates=False)
    run_q = np.arange(4000, dtype=np.int64) % 50
    run_rows = np.arange(4000) * 37  # judgment lines, some of another query
    run_docs = pl.Series([f"d{i}" for i in run_rows])
    hit, line, peak = _traced_lookup(judged, run_q, run_docs, 1 << 12, monkeypatch)
    expected = {row: int(at) for row, at in enumerate(run_rows.tolist())
                if at % 50 == row % 50}
    assert expected and len(expected) < run_rows.size
    assert _matches(hit, line) == expected
    assert peak < judged.keys.nbytes // 2


def _traced_lookup(judged: Judged, run_q: np.ndarray, run_docs: pl.Series, at_once: int,
                   monkeypatch: pytest.MonkeyPatch) -> tuple[np.ndarray, np.ndarray, int]:
    """``lookup``'s join parted from ``at_once`` judgments, and the numpy memory it traced
    at its peak (the run's keys made before)."""
    monkeypatch.setattr(ranking_match, "PROBED_BELOW", 0)  # the join, not the probes
    monkeypatch.setattr(ranking_match, "_JOINED_AT_ONCE", at_once, raising=False)
    keys = doc_keys(run_q, run_docs)
    tracemalloc.start()
    try:
        hit, line = lookup(keys, run_q, run_docs, judged)
        return hit, line, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
