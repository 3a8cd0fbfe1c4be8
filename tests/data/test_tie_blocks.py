"""Tied runs are ordered a block of runs at a time (``tie_order._tie_moves``).

With 90 % ties nearly every row of a 10^7-line run is tied: the ids of all of
them were gathered and sorted as strings at once. They are now taken in blocks
of whole runs of about ``_BLOCK_ROWS`` rows, each block's ids gathered (from a
slice of the file when its rows lie together) and coded on their own. The
expected orders are written from the definition (query, score descending,
then document id by its bytes: descending for trec_eval's rule, ascending for
``docid_asc``), and the same rows must come out in the same order whatever the
block size.
"""

from __future__ import annotations

import random
from itertools import pairwise
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import rankscope
from rankscope.data import tie_order
from rankscope.data.id_codes import byte_order_codes
from rankscope.data.ranking_order import base_order, find_ties, fix_ties, ranked
from rankscope.errors import RankscopeError

Row = tuple[str, str, float]


def _reference(rows: list[Row], ties: str) -> list[int]:
    """File positions in rank order, by the definition (Python's byte comparison)."""
    def key(i: int) -> tuple[bytes, float, bytes]:
        q, d, s = rows[i]
        raw = d.encode()
        # descending bytes: each byte inverted, and a prefix after the longer id
        return q.encode(), -s, (bytes(255 - b for b in raw) + b"\xff" if ties == "trec"
                                else raw)

    return sorted(range(len(rows)), key=key)


def _name(way: str) -> object:
    if way == "strings":  # longer than 16 bytes: never coded
        return lambda n: f"https://example.org/{n % 13}/page-{n:07d}"
    return lambda n: f"d{n}"  # unpadded: byte order is not numeric order


def _runs(way: str, seed: int, ties: str) -> list[Row]:
    """Queries of tied runs 1 to 60 rows long (most rows tied, as at 90 % ties), some
    runs already in the rule's order, some of one run longer than any small block."""
    rng = random.Random(seed)
    name = _name(way)
    rows: list[Row] = []
    for q in ("q2", "q10", "q1", "q3"):
        score = 1000.0
        for _ in range(30):
            score -= rng.choice([1.0, 0.5])
            ids = [name(n) for n in rng.sample(range(10**6),  # type: ignore[operator]
                                               rng.choice([1, 2, 2, 3, 5, 9, 14, 60]))]
            if rng.random() < 0.3:  # already in order: nothing to move
                ids.sort(reverse=ties == "trec")
            rows += [(q, d, score) for d in ids]
    return rows


def _frame(rows: list[Row]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema={"query_id": pl.String, "doc_id": pl.String,
                                      "score": pl.Float64}, orient="row")


@pytest.mark.parametrize("ties", ["trec", "docid_asc"])
@pytest.mark.parametrize("way", ["coded", "strings"])
@pytest.mark.parametrize("shuffled", [False, True])
@pytest.mark.parametrize("block", [1, 7, 64, None])
def test_runs_in_blocks_order_as_the_definition(ties: str, way: str, shuffled: bool,
                                                block: int | None,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # Blocks of 1 row (every run a block of its own), 7 and 64 rows (runs cut between
    # blocks, runs longer than a block), and the default (one block): the same order.
    if block is not None:
        monkeypatch.setattr(tie_order, "_BLOCK_ROWS", block)
    rows = _runs(way, 3 + len(ties), ties)
    if shuffled:  # not in rank order: ties are ordered on a sorted order, not the file's
        random.Random(5).shuffle(rows)
    want = [rows[i][:2] for i in _reference(rows, ties)]
    got = ranked(_frame(rows), ties)  # type: ignore[arg-type]
    assert list(zip(got.get_column("query_id"), got.get_column("doc_id"), strict=True)) == want


@pytest.mark.parametrize("ties", ["trec", "docid_asc"])
def test_more_tied_rows_than_are_coded_are_coded_block_by_block(
        ties: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # More tied rows than CODED_UP_TO were gathered at once and sorted as strings; each
    # block now holds at most CODED_UP_TO ids (runs shorter than half of it), and they
    # are coded, never more of them gathered at once.
    monkeypatch.setattr(tie_order, "CODED_UP_TO", 128)
    monkeypatch.setattr(tie_order, "_BLOCK_ROWS", 64)
    monkeypatch.setattr(tie_order, "_COUNTED_UP_TO", 4)  # sorted, not counted
    coded: list[tuple[int, bool]] = []
    gathered: list[int] = []

    def spy_codes(ids: pl.Series) -> object:
        found = byte_order_codes(ids)
        coded.append((ids.len(), found is not None))
        return found

    real_gather = tie_order.gather_many

    def spy_gather(column: pl.Series, rows: np.ndarray) -> pl.Series:  # type: ignore[type-arg]
        gathered.append(rows.size)
        return real_gather(column, rows)

    monkeypatch.setattr(tie_order, "byte_order_codes", spy_codes)
    monkeypatch.setattr(tie_order, "gather_many", spy_gather)
    rows = _runs("coded", 11, ties)  # runs of at most 60 rows: a block holds at most 123
    want = [rows[i][:2] for i in _reference(rows, ties)]
    got = ranked(_frame(rows), ties)  # type: ignore[arg-type]
    assert list(zip(got.get_column("query_id"), got.get_column("doc_id"), strict=True)) == want
    tied = sum(n for n, _ in coded)
    assert tied > 128  # more tied rows than are coded at once
    assert all(ok and n <= 128 for n, ok in coded)
    assert len(coded) > 2
    assert max(gathered) <= 128


def _multi_chunk(ids: list[str], cuts: list[int]) -> pl.Series:
    """``ids`` as a column of several chunks (a file read in chunks)."""
    bounds = [0, *cuts, len(ids)]
    return pl.concat([pl.Series("doc_id", ids[a:b], dtype=pl.String)
                      for a, b in pairwise(bounds)], rechunk=False)


@pytest.mark.parametrize("block", [3, 50, None])
@pytest.mark.parametrize("span", [0, 4, 1000])
@pytest.mark.parametrize("valued", [False, True])
def test_a_ranked_file_of_many_chunks_is_fixed_from_slices(
        block: int | None, span: int, valued: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # The evaluation's path: a ranked file (its order None, query blocks out of query
    # order), ids in several chunks; each block's ids are gathered from a slice of the
    # file's rows (span 4, 1000) or from the whole column (span 0). Every row's value, in
    # rank order, is the definition's, and so are the rows when every tie is ordered.
    if block is not None:
        monkeypatch.setattr(tie_order, "_BLOCK_ROWS", block)
    monkeypatch.setattr(tie_order, "_SPAN", span)
    rng = random.Random(block or 0)
    rows: list[tuple[int, float, str]] = []
    for q in (2, 0, -1, 1):  # -1: a query not evaluated
        score = 100.0
        for _ in range(25):
            score -= 1.0
            rows += [(q, score, f"d{rng.randrange(10**5)}") for _ in range(rng.choice([1, 2, 6,
                                                                                      17]))]
    seen: set[tuple[int, str]] = set()  # one document per row of a query
    rows = [r for r in rows if (r[0], r[2]) not in seen and not seen.add((r[0], r[2]))]
    qidx = np.array([r[0] for r in rows], dtype=np.int64)
    score = np.array([r[1] for r in rows])
    docs = _multi_chunk([r[2] for r in rows], [7, 100, 101, 250])
    assert docs.n_chunks() == 5
    values = np.array([rng.choice([-1, 0, 1, 2]) for _ in rows], dtype=np.int64)
    expected = sorted((i for i, r in enumerate(rows) if r[0] >= 0),
                      key=lambda i: (rows[i][0], -rows[i][1],
                                     [-b for b in rows[i][2].encode()] + [1]))
    base = base_order(qidx, score, 3, defer_blocks=True)
    assert base.order is None and base.blocks is not None
    fixed = fix_ties(base, find_ties(base, qidx, score), docs, values if valued else None)
    assert fixed.apply(values).tolist() == values[expected].tolist()
    if not valued:
        assert fixed.rows().tolist() == expected


@pytest.mark.parametrize("block", [2, 5, None])
def test_a_duplicate_inside_a_tied_run_is_the_same_error(
        block: int | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A document listed twice in one query (inside a run of tied rows) is refused with
    # the same message whatever the block size: the blocks change no check.
    if block is not None:
        monkeypatch.setattr(tie_order, "_BLOCK_ROWS", block)
    lines = [f"q1 Q0 d{n} {i + 1} 1.0 t" for i, n in enumerate([5, 3, 9, 3, 7, 1])]
    lines += [f"q2 Q0 d{n} {i + 1} {2.0 - i // 3} t" for i, n in enumerate(range(9))]
    run = tmp_path / "run.txt"
    run.write_text("\n".join(lines) + "\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d3 1\nq1 0 d7 2\nq2 0 d4 1\n")
    with pytest.raises(RankscopeError) as caught:
        rankscope.evaluate(str(qrels), str(run), ["map"])
    message = str(caught.value)
    assert "d3" in message and "q1" in message
    # and without the duplicate, the numbers are the definition's: q1 ranks d9 d7 d5 d3 d1
    # (ids descending), d7 at 2 and d3 at 4: AP (1/2 + 2/4) / 2 = 0.5; q2 ranks
    # d2 d1 d0 | d5 d4 d3 | d8 d7 d6: d4 at 5, AP 1/5; mean 0.35
    run.write_text("\n".join(line for line in lines if line != "q1 Q0 d3 4 1.0 t") + "\n")
    assert rankscope.evaluate(str(qrels), str(run), ["map"])["map"] == pytest.approx(0.35)


def _runs_by_definition(keys: list[tuple[int, float]]) -> list[tuple[int, int]]:
    """(first position, rows) of each run of equal neighbouring keys, one at a time."""
    runs: list[tuple[int, int]] = []
    at = 0
    while at < len(keys):
        end = at
        while end + 1 < len(keys) and keys[end + 1] == keys[at]:
            end += 1
        if end > at:
            runs.append((at, end - at + 1))
        at = end + 1
    return runs


@pytest.mark.parametrize("seed", range(8))
def test_tied_runs_and_the_runs_that_differ_in_value_are_the_definition(seed: int) -> None:
    # Ties are kept as each run's first position and size (not every tied pair): the runs
    # of equal (query, score) neighbours in rank order, sorted or in the file's order,
    # runs at the first and the last row included; and the runs kept when only those
    # whose values differ are ordered (NaN equal to NaN).
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 300))
    qidx = np.sort(rng.integers(0, 4, n)) if seed % 2 else rng.integers(0, 4, n)
    score = rng.integers(0, 3 if seed < 4 else 40, n).astype(np.float64)
    if seed % 4 == 1:  # a file in rank order (no sort: ties found on the file order)
        order = np.lexsort((-score, qidx))
        qidx, score = qidx[order], score[order]
    base = base_order(qidx, score, 4)
    rows = base.rows()
    keys = list(zip(qidx[rows].tolist(), score[rows].tolist(), strict=True))
    want = _runs_by_definition(keys)
    found = find_ties(base, qidx, score)
    if not want:
        assert found is None
        return
    assert found is not None
    assert list(zip(found.first.tolist(), found.size.tolist(), strict=True)) == want
    values = rng.choice([np.nan, 0.0, 1.0, 1.0, 2.0], n)
    ranked_values = values[rows]
    same = [all((ranked_values[f] == v) or (np.isnan(ranked_values[f]) and np.isnan(v))
                for v in ranked_values[f:f + k]) for f, k in want]
    kept = tie_order._valued_runs(found, ranked_values)
    assert list(zip(kept.first.tolist(), kept.size.tolist(), strict=True)) == \
        [run for run, alike in zip(want, same, strict=True) if not alike]


@pytest.mark.parametrize("shuffled", [False, True])
def test_moves_in_32_or_64_bits_give_the_same_ranking(shuffled: bool,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # The moves are 32-bit while the run's rows fit them and cut to those made; over
    # _INT32_ROWS (set to 0 here) they are 64-bit: the same rows in the same order.
    rows = _runs("coded", 17, "trec")
    if shuffled:
        random.Random(2).shuffle(rows)
    frame = _frame(rows)
    qidx = np.array([{"q1": 0, "q10": 1, "q2": 2, "q3": 3}[q] for q, _, _ in rows])
    score = frame.get_column("score").to_numpy()
    docs = frame.get_column("doc_id")
    want = _reference(rows, "trec")
    moves = {}
    for bits, limit in ((32, tie_order._INT32_ROWS), (64, 0)):
        monkeypatch.setattr(tie_order, "_INT32_ROWS", limit)
        base = base_order(qidx, score, 4)
        fixed = fix_ties(base, find_ties(base, qidx, score), docs)
        assert fixed.moves is not None
        assert {m.dtype for m in fixed.moves} == {np.dtype(f"int{bits}")}
        assert fixed.rows().tolist() == want
        values = np.arange(len(rows), dtype=np.float64)
        assert fixed.apply(values).tolist() == [float(i) for i in want]
        moves[bits] = fixed.moves
    for a, b in zip(moves[32], moves[64], strict=True):
        assert a.tolist() == b.tolist() and a.flags.owndata  # cut in place, not a view


@pytest.mark.parametrize("ties", ["trec", "docid_asc"])
def test_long_ids_are_ordered_without_views_or_a_filtered_copy(
        ties: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # ids past 16 bytes (URLs) are never coded: one id that long refuses the block without
    # reading its views, and the runs to sort are read from the block's ids by position,
    # not from a filtered copy of them (each a polars step of a small call: the URL cell)
    from rankscope.data import id_codes

    read: list[str] = []
    real_views, real_filter = id_codes.string_views, pl.Series.filter

    def views(ids: pl.Series) -> object:
        read.append("views")
        return real_views(ids)

    def filtered(self: pl.Series, *args: object, **kwargs: object) -> pl.Series:
        read.append("filter")
        return real_filter(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(id_codes, "string_views", views)
    monkeypatch.setattr(pl.Series, "filter", filtered)
    rows = _runs("strings", 11, ties)
    want = [rows[i][:2] for i in _reference(rows, ties)]
    got = ranked(_frame(rows), ties)  # type: ignore[arg-type]
    assert list(zip(got.get_column("query_id"), got.get_column("doc_id"), strict=True)) == want
    assert read == []


# ids that share long prefixes, differ past them in non-ASCII and in the highest code
# points (UTF-8 bytes 0xC3, 0xEF 0xBF 0xBF, 0xF4 0x8F 0xBF 0xBF), one a prefix of another
_PREFIX = "https://www.example.org/wiki/en/articles/section-1"
_TAILS = ["", "0", "00", "0/page", "é", "ÿ", "\uffff", "\U0010ffff", "a\x00", "a", "~", "Ω"]


def _counted_runs(seed: int) -> tuple[list[str], np.ndarray, np.ndarray]:  # type: ignore[type-arg]
    rng = np.random.default_rng(seed)
    lengths = rng.integers(2, 7, int(rng.integers(1, 9))).astype(np.int64)
    n = int(lengths.sum())
    ids = [_PREFIX * int(rng.integers(0, 2)) + "".join(
        _TAILS[t] for t in rng.integers(0, len(_TAILS), int(rng.integers(1, 3))))
        for _ in range(n)]
    if rng.random() < 0.3:
        ids[1] = ids[0]  # one id twice in the first run: its rows keep their file order
    rows = rng.permutation(10 * n)[:n].astype(np.int64)
    return ids, lengths, rows


def _runs_by_bytes(ids: list[str], lengths: np.ndarray, rows: np.ndarray,  # type: ignore[type-arg]
                   descending: bool) -> list[int]:
    """Each run's rows by their ids' bytes (Python's ``bytes`` order, a stable sort)."""
    out: list[int] = []
    lo = 0
    for k in lengths.tolist():
        # reverse=True keeps equal keys in their order too (Python's sort is stable)
        members = sorted(range(lo, lo + k), key=lambda i: ids[i].encode(), reverse=descending)
        out += [int(rows[i]) for i in members]
        lo += k
    return out


@pytest.mark.parametrize("descending", [True, False])
@pytest.mark.parametrize("seed", range(40))
def test_counted_runs_are_the_byte_order_of_their_ids(seed: int, descending: bool) -> None:
    ids, lengths, rows = _counted_runs(seed)
    got = tie_order._runs_sorted(pl.Series(ids, dtype=pl.String), None, lengths, rows,
                                 descending, coded=False)
    assert got.tolist() == _runs_by_bytes(ids, lengths, rows, descending)


def test_counted_runs_compare_each_pair_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # the rows of a run were compared both ways (k (k - 1) gathered pairs a run of k rows);
    # one comparison of each pair gives both answers: k (k - 1) / 2
    ids, lengths, rows = _counted_runs(3)
    gathered: list[int] = []
    real_gather = tie_order.gather_many

    def spy_gather(column: pl.Series, at: np.ndarray) -> pl.Series:  # type: ignore[type-arg]
        gathered.append(at.size)
        return real_gather(column, at)

    monkeypatch.setattr(tie_order, "gather_many", spy_gather)
    got = tie_order._runs_sorted(pl.Series(ids, dtype=pl.String), None, lengths, rows, True,
                                 coded=False)
    assert got.tolist() == _runs_by_bytes(ids, lengths, rows, True)
    pairs = sum(k * (k - 1) // 2 for k in lengths.tolist())
    assert gathered == [pairs, pairs]
