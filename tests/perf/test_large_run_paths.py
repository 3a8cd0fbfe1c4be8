"""Paths the ranking takes only on large runs, forced on small ones and checked
against the slow reference: shuffled files (no list of query runs), columns in
many chunks (gathered after a rechunk), ties found from the sort's own scores."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from rankscope.data import gather, ranking_order, run_queries
from rankscope.data.ranking_order import Ranking, base_order, find_ties, gather_many
from rankscope.data.tables import Qrels, Run
from rankscope.engine.ranking import rank

from .conftest import make_case
from .test_fast_ranking import layout, slow_rank

pytestmark = pytest.mark.usefixtures("both_ranking_paths")


def _chunked(frame: pl.DataFrame, pieces: int) -> pl.DataFrame:
    """The same rows in ``pieces`` chunks, as a file read in blocks gives them."""
    step = max(1, frame.height // pieces)
    parts = [frame.slice(i, step) for i in range(0, frame.height, step)]
    return pl.concat(parts, rechunk=False)


def _assert_matches_reference(qrels: pl.DataFrame, run: pl.DataFrame, ties: str) -> None:
    got = layout(rank(Qrels(qrels), Run(run), ties=ties))  # type: ignore[arg-type]
    expected = slow_rank(qrels, run, ties)
    assert list(got) == list(expected)
    for q in expected:
        np.testing.assert_array_equal(got[q], expected[q])


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("ties", ["trec", "input", "docid_asc"])
def test_a_shuffled_run_indexes_its_rows_directly(seed: int, ties: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    qrels, run = make_case(seed)
    run = run.sample(fraction=1.0, shuffle=True, seed=seed)
    monkeypatch.setattr(run_queries, "_SLICE", 64)  # the first slice decides, as at 10^6 rows
    monkeypatch.setattr(run_queries, "_DIRECT_FROM", 0)
    assert run_queries._segments(run.get_column("query_id")) is None  # the path under test
    _assert_matches_reference(qrels, run, ties)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_grouped_run_still_lists_its_query_runs(seed: int,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    qrels, run = make_case(seed)  # each query's lines together
    monkeypatch.setattr(run_queries, "_SLICE", 64)
    monkeypatch.setattr(run_queries, "_DIRECT_FROM", 0)
    found = run_queries._segments(run.get_column("query_id"))
    assert found is not None
    starts, names = found
    ids = run.get_column("query_id").to_list()
    assert starts.tolist() == [i for i in range(len(ids)) if i == 0 or ids[i] != ids[i - 1]]
    assert names.to_list() == [ids[i] for i in starts.tolist()]
    _assert_matches_reference(qrels, run, "trec")


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("regather", [1 << 30, 1])
def test_ids_in_many_chunks_rank_as_in_one(seed: int, shuffle: bool, regather: int,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    qrels, run = make_case(seed)
    if shuffle:
        run = run.sample(fraction=1.0, shuffle=True, seed=seed)
    run, qrels = _chunked(run, 17), _chunked(qrels, 5)
    assert run.get_column("doc_id").n_chunks() > 1
    # 1 << 30: every gather rechunks first; 1: none does (gathers across the chunks)
    monkeypatch.setattr(gather, "_REGATHER", regather)
    for ties in ("trec", "docid_asc"):
        _assert_matches_reference(qrels, run, ties)


@pytest.mark.parametrize("seed", range(8))
def test_gather_many_is_a_gather(seed: int) -> None:
    rng = np.random.default_rng(seed)
    column = _chunked(pl.DataFrame({"d": [f"d{int(x)}" for x in rng.integers(0, 50, 300)]}),
                      int(rng.integers(1, 40))).get_column("d")
    rows = rng.integers(0, column.len(), int(rng.integers(0, 400))).astype(np.int64)
    expected = [column.to_list()[i] for i in rows.tolist()]
    assert gather_many(column, rows).to_list() == expected


@pytest.mark.parametrize("seed", range(30))
def test_ties_from_the_sorted_scores_are_the_ties_of_the_order(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 12))
    lengths = rng.integers(0, 40, n) if seed % 2 else np.full(n, int(rng.integers(1, 30)))
    qidx = np.repeat(np.arange(n), lengths).astype(np.int64)
    rng.shuffle(qidx)
    if seed % 3 == 0:
        qidx[rng.random(qidx.size) < 0.2] = -1  # rows of queries not evaluated
    score = rng.integers(0, 6, qidx.size).astype(np.float64)
    score[rng.random(qidx.size) < 0.05] = -np.inf
    score[rng.random(qidx.size) < 0.05] = np.inf
    base = base_order(qidx, score, n)
    if base.order is None:  # nothing to sort in this draw
        return
    assert base.tie_flags is not None
    kept = base.order
    # the sort's tie flags by their definition: neighbours in rank order of one query and
    # one score (NaN ties with nothing), False at both ends
    q_sorted, s_sorted = qidx[kept], score[kept]
    definition = np.concatenate(([False], (q_sorted[1:] == q_sorted[:-1])
                                 & (s_sorted[1:] == s_sorted[:-1]), [False]))
    np.testing.assert_array_equal(base.tie_flags, definition)
    # rank order: by query, then score descending
    assert np.all(np.diff(qidx[kept]) >= 0)
    assert np.all(qidx[kept] >= 0)
    same = qidx[kept][1:] == qidx[kept][:-1]
    assert np.all(score[kept][1:][same] <= score[kept][:-1][same])
    fast = find_ties(base, qidx, score)
    slow = find_ties(Ranking(base.order, None, base.counts), qidx, score)  # gathered
    if slow is None:
        assert fast is None
        return
    assert fast is not None
    np.testing.assert_array_equal(fast.first, slow.first)
    np.testing.assert_array_equal(fast.size, slow.size)


def test_a_small_shuffled_run_keeps_its_runs_of_equal_ids() -> None:
    # below _DIRECT_FROM rows the runs are listed whatever the order (today's small path)
    _, run = make_case(1)
    shuffled = run.sample(fraction=1.0, shuffle=True, seed=1).get_column("query_id")
    assert shuffled.len() < run_queries._DIRECT_FROM
    assert run_queries._segments(shuffled) is not None


def _in_rank_order_out_of_query_order(seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """make_case's data with each query's lines by descending score, the query blocks in
    the file's order ("1", "2", ..., "10": not byte order), as a ranked file at 10^7 lines."""
    qrels, run = make_case(seed)
    run = run.with_row_index("at").with_columns(
        pl.col("at").min().over("query_id").alias("block")).sort(
        ["block", "score"], descending=[False, True], maintain_order=True).drop("at", "block")
    return qrels, run


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
@pytest.mark.parametrize("ties", ["trec", "input", "docid_asc"])
@pytest.mark.parametrize("depth", [1, 2, 4])
def test_a_cut_ranked_file_out_of_query_order_makes_no_index_of_every_row(
        seed: int, ties: str, depth: int, monkeypatch: pytest.MonkeyPatch) -> None:
    qrels, run = _in_rank_order_out_of_query_order(seed)
    counts = run.filter(pl.col("query_id").is_in(qrels.get_column("query_id").implode())) \
        .group_by("query_id").len().get_column("len")
    assert 2 * counts.clip(upper_bound=depth).sum() <= counts.sum()  # few rows stay: this path
    blocks = base_order(*_qidx_and_score(run), defer_blocks=True).blocks
    assert blocks is not None  # the blocks are out of query order

    def whole_index(self: ranking_order.Blocks) -> np.ndarray:
        raise AssertionError("an index of every row was made for a cut ranking")

    # before: the cut path listed every file row in rank order (80 MB at 10^7 rows)
    monkeypatch.setattr(ranking_order.Blocks, "index", whole_index)
    got = layout(rank(Qrels(qrels), Run(run), ties=ties, depth=depth))  # type: ignore[arg-type]
    expected = slow_rank(qrels, run, ties)  # the whole ranking, by definition, then cut
    assert list(got) == list(expected)
    for q in expected:
        np.testing.assert_array_equal(got[q], expected[q][:depth])


def _qidx_and_score(run: pl.DataFrame) -> tuple[np.ndarray, np.ndarray, int]:
    names = sorted(set(run.get_column("query_id").to_list()))
    at = {q: i for i, q in enumerate(names)}
    qidx = np.array([at[q] for q in run.get_column("query_id").to_list()], dtype=np.int64)
    return qidx, run.get_column("score").to_numpy(), len(names)


@pytest.mark.parametrize("seed", [1, 2])
def test_blocks_find_the_file_rows_of_any_positions(seed: int) -> None:
    rng = np.random.default_rng(seed)
    take = rng.integers(0, 6, 40)
    first = np.cumsum(np.r_[0, rng.permutation(take)[:-1]])[rng.permutation(40)]
    blocks = ranking_order.Blocks(first.astype(np.int64), take.astype(np.int64))
    # by definition: the rows of block 0, then block 1, ...
    listed = [int(f) + k for f, t in zip(first, take, strict=True) for k in range(int(t))]
    positions = rng.permutation(len(listed))[: len(listed) // 2]
    assert blocks.at(positions.astype(np.int64)).tolist() == [listed[p] for p in positions]


@pytest.mark.parametrize("rows", [1, 5, 33])
def test_keys_hashed_block_by_block_are_the_whole_columns_keys(
        rows: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from rankscope.engine import ranking_match

    docs = pl.Series([f"d{i % 7}" for i in range(70)])
    qidx = np.arange(70, dtype=np.int64) % 3
    # the key's definition: the frame's row hash of the whole column, mixed with the query
    hashed = docs.to_frame().hash_rows(seed=0x5EED).to_numpy()
    with np.errstate(over="ignore"):
        expected = hashed ^ (qidx.astype(np.uint64) * np.uint64(ranking_match.MIX))
    monkeypatch.setattr(ranking_match, "_KEYED_BLOCK", rows)
    np.testing.assert_array_equal(ranking_match.doc_keys(qidx, docs), expected)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("block", [1, 7, 1 << 22])
def test_the_proof_of_distinct_rows_block_by_block_is_a_search_for_repeats(
        seed: int, block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from rankscope.engine import ranking_duplicates

    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 9, 25).astype(np.int64)
    docs = [f"d{int(x)}" for x in rng.integers(0, 60, int(lengths.sum()))]
    # by definition: some segment lists a document twice (rare by chance: seeds 0-2
    # have their repeats taken out, seeds 3-5 one put in a late segment)
    segments, at = [], 0
    for n in lengths.tolist():
        segments.append(list(dict.fromkeys(docs[at:at + n])) if seed < 3 else docs[at:at + n])
        at += n
    if seed >= 3:
        segments[-3] = segments[-3] + [segments[-3][0]]
    lengths = np.array([len(s) for s in segments], dtype=np.int64)
    flat = pl.Series([d for s in segments for d in s])
    repeats = any(len(set(s)) < len(s) for s in segments)
    monkeypatch.setattr(ranking_duplicates, "_PROVED_BLOCK", block)
    proved = ranking_duplicates.proof_of_distinct_rows(flat, lengths, lambda: pl.Series([0]))
    assert proved is (not repeats)


@pytest.mark.parametrize("repeat", [None, (2, 9), (0, 24), (11, 12)])
@pytest.mark.parametrize("block", [1, 5, 1 << 22])
def test_the_proof_for_a_shuffled_run_sorts_pair_hashes_asked_for_block_by_block(
        repeat: tuple[int, int] | None, block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from rankscope.data.tables import pair_hashes
    from rankscope.engine import ranking_duplicates

    # a run whose queries are not together (no segment lengths): 25 rows, pairs distinct
    # by construction unless row j repeats row i's (query, document); the proof must find
    # the repeat whichever blocks i and j fall in, and ask for hashes a block at a time
    queries = [f"q{i % 4}" for i in range(25)]
    docs = [f"d{i}" for i in range(25)]
    if repeat is not None:
        i, j = repeat
        queries[j], docs[j] = queries[i], docs[i]
    frame = pl.DataFrame({"query_id": queries, "doc_id": docs})
    asked: list[tuple[int, int]] = []

    def pairs(start: int, length: int) -> pl.Series:
        asked.append((start, length))
        return pair_hashes(frame.slice(start, length))

    monkeypatch.setattr(ranking_duplicates, "_PROVED_BLOCK", block)
    proved = ranking_duplicates.proof_of_distinct_rows(frame.get_column("doc_id"), None, pairs)
    assert proved is (repeat is None)
    # every row asked for once, in pieces of at most a block
    assert [s for s, _ in asked] == list(range(0, 25, block))
    assert sum(n for _, n in asked) == 25 and max(n for _, n in asked) <= block


@pytest.mark.parametrize("layout", [
    [0, 0, 1, 1, 2, 2],          # ranked, one block a query
    [2, 2, 0, 0, 1, 1],          # ranked, blocks out of query order
    [0, 1, 0, 1, 2, 2],          # 4 blocks for 3 queries: split, sorted
    [0, 0, 1, 0, 2, 2],          # 4 blocks for 3 queries: one query split once
    [0, 1, 2, 0, 1, 2],          # 6 blocks (shuffled)
    [0, 0, -1, 1, 1, -1, 0],     # unevaluated rows between blocks, query 0 split
    [0, 0, -1, 0, 1, 1],         # one query around an unevaluated row
    [1, 1, 3, 3],                # fewer blocks than queries (0 and 2 absent)
])
@pytest.mark.parametrize("rising", [False, True])
def test_base_order_of_split_and_whole_query_blocks_is_the_stable_sort(
        layout: list[int], rising: bool) -> None:
    # the definition: every evaluated row (index >= 0) by query index, then score
    # descending, ties in file order; a file whose queries are split (more blocks than
    # queries) is sorted without looking at its blocks, one in rank order is not sorted
    qidx = np.array(layout, dtype=np.int64)
    score = np.arange(qidx.size, 0, -1, dtype=np.float64)  # falling: each block ranked
    if rising:
        score[-1] = score[-2] + 1.0  # the last query's block no longer in rank order
    n = 4
    rows = np.arange(qidx.size)
    kept = rows[qidx >= 0]
    expected = kept[np.lexsort((kept, -score[kept], qidx[kept]))]
    for defer in (False, True):
        base = base_order(qidx, score, n, stable=True, defer_blocks=defer)
        np.testing.assert_array_equal(base.rows(), expected)
        np.testing.assert_array_equal(base.counts, np.bincount(qidx[kept], minlength=n))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("equal", [True, False])
@pytest.mark.parametrize("piece", [1, 7, 64])
def test_the_sort_within_queries_a_piece_at_a_time_is_the_whole_sort(
        seed: int, equal: bool, piece: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # shuffled rows of 30 queries (all as long, or of lengths 1-40), scores with ties and
    # a NaN; sorted a few scores at a time (pieces of 1, 7 or 64 scores, whole queries
    # each) they must come out as the definition has them and as one piece has them
    rng = np.random.default_rng(seed)
    lengths = np.full(30, 12) if equal else rng.integers(1, 41, 30)
    qidx = rng.permutation(np.repeat(np.arange(30), lengths)).astype(np.int64)
    score = rng.integers(0, 5, qidx.size).astype(np.float64)
    score[rng.integers(0, qidx.size)] = np.nan
    whole = {stable: ranking_order._sort_within_queries(qidx, score, stable)
             for stable in (True, False)}
    monkeypatch.setattr(ranking_order, "_SORTED_AT_ONCE", piece)
    rows = np.arange(qidx.size)
    for stable in (True, False):
        order, tie = ranking_order._sort_within_queries(qidx, score, stable)
        np.testing.assert_array_equal(order, whole[stable][0])
        np.testing.assert_array_equal(tie, whole[stable][1])
        # tie[p + 1]: rows p and p + 1 of the order share query and score (NaN: no tie)
        q, s = qidx[order], score[order]
        np.testing.assert_array_equal(
            tie, np.concatenate(([False], (q[1:] == q[:-1]) & (s[1:] == s[:-1]), [False])))
        # the definition: by query, score descending (NaN last), ties in file order
        key = np.where(np.isnan(score), np.inf, -score)
        expected = rows[np.lexsort((rows, key, qidx))]
        if stable:
            np.testing.assert_array_equal(order, expected)
        else:  # ties in any order: the same queries and scores in each place
            np.testing.assert_array_equal(qidx[order], qidx[expected])
            np.testing.assert_array_equal(key[order], key[expected])
            np.testing.assert_array_equal(np.sort(order), rows)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("piece", [1, 5, 64, 1 << 20])
@pytest.mark.parametrize("queries", [1, 30, 70_000])
def test_the_grouping_by_query_a_piece_at_a_time_is_a_stable_sort(
        seed: int, piece: int, queries: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # shuffled rows, some queries absent; grouped a few rows at a time (indices below
    # 2^16) or by the two-digit radix sort (70,000 queries): the definition is a stable
    # sort by query index (rows of one query in file order)
    rng = np.random.default_rng(seed)
    qidx = rng.integers(0, queries, 500).astype(np.int64)
    monkeypatch.setattr(ranking_order, "_GROUPED_AT_ONCE", piece)
    expected = np.argsort(qidx, kind="mergesort")
    np.testing.assert_array_equal(ranking_order._stable_by_query(qidx), expected)


@pytest.mark.parametrize("fits", [True, False])
def test_kept_rows_hold_the_order_as_32_bit_integers_and_give_the_rows(
        fits: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # order 4 0 3 1 2 (file rows), then the tie fixes put row 1 at position 2 and row 3
    # at position 3: rows 4 0 1 3 2, as 64-bit integers either way
    from rankscope.data import rankings

    if not fits:
        monkeypatch.setattr(rankings, "_INT32_ROWS", 4)  # 5 file rows do not fit
    order = np.array([4, 0, 3, 1, 2], dtype=np.int64)
    moves = (np.array([2, 3], dtype=np.int32), np.array([1, 3], dtype=np.int32))
    base = Ranking(order, moves, np.array([2, 3], dtype=np.int64))
    make, held = base.kept_rows(5)
    assert held is not None
    assert held.dtype == (np.int32 if fits else np.int64)
    np.testing.assert_array_equal(held, [4, 0, 3, 1, 2])
    rows = make()
    assert rows.dtype == np.int64
    np.testing.assert_array_equal(rows, [4, 0, 1, 3, 2])
    np.testing.assert_array_equal(base.rows(), [4, 0, 1, 3, 2])
    # no order (a file in rank order): nothing held, the rows as before
    plain = Ranking(None, None, np.array([3], dtype=np.int64))
    make, held = plain.kept_rows(3)
    assert held is None
    np.testing.assert_array_equal(make(), [0, 1, 2])


@pytest.mark.parametrize("seed", range(3))
def test_a_shuffled_runs_rows_on_the_large_path_are_the_definitions(seed: int) -> None:
    # every ranked row's file row, read after the ranking (the order then held as 32-bit
    # integers): the definition is query by query (byte order), score descending, ties
    # by document id descending (every tie ordered: ``exact_ties``). The fixture runs it on
    # both paths; the sort and the held order are the large path's
    rng = np.random.default_rng(seed)
    n = 300
    frame = pl.DataFrame({"query_id": [f"q{q}" for q in rng.integers(0, 7, n)],
                          "doc_id": [f"d{i}" for i in rng.permutation(n)],
                          "score": rng.integers(0, 4, n).astype(np.float64)})
    qrels = Qrels(pl.DataFrame({"query_id": [f"q{q}" for q in range(7)],
                                "doc_id": [f"d{q}" for q in range(7)], "grade": [1.0] * 7}))
    lists = rank(qrels, Run(frame), exact_ties=True)
    rows = frame.with_row_index("row").sort(
        ["query_id", "score", "doc_id"], descending=[False, True, True])["row"].to_numpy()
    np.testing.assert_array_equal(lists.run_rows, rows)


@pytest.mark.parametrize("fits", [True, False])
def test_the_sort_of_a_shuffled_run_in_pieces_makes_a_32_bit_order_kept_as_is(
        fits: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # the grouping by query a piece at a time (forced from 64 rows here, 2^17 at 10^7) is
    # the order the sort fills: 32-bit integers when the file's rows fit them (40 MB less
    # at 10^7 rows through the tie fixes), 64-bit otherwise; the ranking keeps that very
    # array past the ranking (no 32-bit copy). The definition of the order: by query,
    # score descending, ties in file order (a stable sort)
    from rankscope.data import rankings

    monkeypatch.setattr(ranking_order, "_GROUPED_AT_ONCE", 64)
    if not fits:
        monkeypatch.setattr(rankings, "_INT32_ROWS", 499)  # 500 file rows do not fit
    rng = np.random.default_rng(5)
    qidx = rng.integers(0, 9, 500).astype(np.int64)
    score = rng.integers(0, 6, 500).astype(np.float64)
    base = base_order(qidx, score, 9, stable=True)
    assert base.order is not None
    assert base.order.dtype == (np.int32 if fits else np.int64)
    rows = np.arange(500)
    np.testing.assert_array_equal(base.order, rows[np.lexsort((rows, -score, qidx))])
    _, held = base.kept_rows(500)
    assert held is not None
    if fits:
        assert held is base.order
    np.testing.assert_array_equal(base.rows(), base.order)
    assert base.rows().dtype == np.int64


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("ties", ["trec", "input", "docid_asc"])
@pytest.mark.parametrize("depth", [None, 3])
def test_a_shuffled_run_sorted_into_a_32_bit_order_ranks_as_the_reference(
        seed: int, ties: str, depth: int | None, monkeypatch: pytest.MonkeyPatch) -> None:
    # the 32-bit order through every path that reads it: the matching of every row, the
    # tie fixes, the rows kept for later, and (a depth of 3 keeps few rows) the rows at
    # the cut looked up in the order: the same rankings as the slow reference
    monkeypatch.setattr(ranking_order, "_GROUPED_AT_ONCE", 16)
    qrels, run = make_case(seed)
    shuffled = run.sample(fraction=1.0, shuffle=True, seed=seed)
    got = layout(rank(Qrels(qrels), Run(shuffled), ties=ties,  # type: ignore[arg-type]
                      depth=depth))
    expected = slow_rank(qrels, shuffled, ties)
    assert list(got) == list(expected)
    for q in expected:
        want = expected[q] if depth is None else expected[q][:depth]
        np.testing.assert_array_equal(got[q], want)


@pytest.mark.parametrize("regather", [1 << 30, 1])
def test_the_tie_fixes_hand_the_c_heaps_free_pages_back_before_rechunking_the_ids(
        regather: int, both_ranking_paths: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # a shuffled run whose ids come in many chunks, with many tied rows: the tie fixes copy
    # the ids into one chunk (1 << 30: whenever they gather; 1: never), and just before
    # that copy, only then, glibc's heap hands its free pages back (the copy's polars
    # memory and numpy's freed pieces no longer add up); the rankings are the reference's.
    # A small run ("inline") is made one chunk before it is ranked: no copy, no call
    from rankscope import c_heap

    calls: list[int] = []
    monkeypatch.setattr(c_heap, "hand_back_free_pages", lambda: calls.append(1))
    monkeypatch.setattr(gather, "_REGATHER", regather)
    qrels, run = make_case(3)
    run = run.with_columns(pl.col("score").round(0))  # many ties
    run = _chunked(run.sample(fraction=1.0, shuffle=True, seed=3), 17)
    assert run.get_column("doc_id").n_chunks() > 1
    _assert_matches_reference(qrels, run, "trec")
    assert len(calls) == (1 if regather > 1 and both_ranking_paths == "threaded" else 0)


def test_handing_the_c_heaps_free_pages_back_is_harmless() -> None:
    # glibc's malloc_trim(0) where there is one (this machine's), nothing elsewhere: no
    # error either way, and arrays made before and after read the same
    import ctypes
    import os

    from rankscope import c_heap

    before = np.arange(1 << 20, dtype=np.int64)
    c_heap.hand_back_free_pages()
    assert int(before.sum()) == (1 << 20) * ((1 << 20) - 1) // 2
    # glibc is reached where the C library says it is glibc (this machine), with its trim
    assert (c_heap.glibc() is not None) == bool(os.confstr("CS_GNU_LIBC_VERSION"))
    libc = c_heap.glibc()
    assert libc is None or hasattr(libc, "malloc_trim") == hasattr(ctypes.CDLL(None),
                                                                   "malloc_trim")
