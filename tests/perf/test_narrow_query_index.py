"""Every run row's query index is 4 bytes while the queries fit (issue 30 section 5).

At 10^7 rows the index of every row was 80 MB of 64-bit integers, held by the
matching's thread at a shuffled file's peak (the wait for the matching). As
32-bit integers it is 40 MB; its counts are taken a slice at a time (numpy's
``bincount`` would first copy it to 64 bits). Values are checked against
definitions written out here.
"""

from __future__ import annotations

import tracemalloc
import weakref
from collections import Counter
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl
import pytest

from rankscope.data import run_queries
from rankscope.engine.ranking_match import doc_keys


def _column(ids: list[str], kind: str) -> pl.Series:
    column = pl.Series(ids)
    if kind == "categorical":
        return column.cast(pl.Categorical())
    if kind == "enum":
        return column.cast(pl.Enum(["zz-unused", *sorted(set(ids), reverse=True)]))
    return column


@pytest.mark.parametrize("kind", ["categorical", "enum", "string"])
@pytest.mark.parametrize("order", ["grouped", "shuffled"])
def test_every_rows_query_index_is_32_bit(kind: str, order: str,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(7)
    ids = [f"q{q}" for q in np.repeat(np.arange(50), 40)]
    if order == "shuffled":
        ids = [ids[i] for i in rng.permutation(len(ids))]
    monkeypatch.setattr(run_queries, "_SLICE", 64)
    monkeypatch.setattr(run_queries, "_DIRECT_FROM", 0)
    wanted = [*sorted(set(ids))[::3], "not in the run"]
    evaluated, found = run_queries.run_queries(_column(ids, kind), lambda names: wanted)
    assert evaluated == wanted
    assert found.qidx.dtype == np.int32
    assert found.qidx.tolist() == [wanted.index(q) if q in wanted else -1 for q in ids]


def test_query_counts_are_bincounts_taken_a_slice_at_a_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    qidx = rng.integers(0, 37, 1000).astype(np.int32)
    monkeypatch.setattr(run_queries, "_COUNTED_AT_ONCE", 64)
    expected = Counter(qidx.tolist())
    for minlength in (0, 37, 50):
        counts = run_queries.query_counts(qidx, minlength)
        assert counts.dtype == np.int64
        assert counts.tolist() == [expected.get(q, 0) for q in range(max(minlength, 37))]
    assert run_queries.query_counts(np.zeros(0, np.int32), 3).tolist() == [0, 0, 0]


def test_query_counts_make_no_copy_of_every_row() -> None:
    qidx = np.arange(1 << 22, dtype=np.int32) % 1000  # 16 MB; a 64-bit copy: 32 MB
    tracemalloc.start()
    try:
        counts = run_queries.query_counts(qidx, 1000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert counts.tolist() == [(1 << 22) // 1000 + (q < (1 << 22) % 1000) for q in range(1000)]
    assert peak < 12 << 20


def test_32_bit_indices_key_rows_as_64_bit_ones() -> None:
    # a row's key mixes its query index into its document's hash: -1 (a query not
    # evaluated) and every other index the same at either width
    qidx = np.array([-1, 0, 5, 2**31 - 1, -1, 3], dtype=np.int64)
    docs = pl.Series(["d1", "d2", "d3", "d4", "d5", "d6"])
    np.testing.assert_array_equal(doc_keys(qidx.astype(np.int32), docs), doc_keys(qidx, docs))


@pytest.mark.parametrize("evaluated", ["every query", "some queries"])
def test_the_judgments_8_byte_query_index_is_let_go_before_they_are_keyed(
        evaluated: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # the judgments' query index comes in 8 bytes a line (index_of); kept beside the
    # keys' making (with a copy of it) it was 114 MB at 7 M judgments: seen through
    # the calls, the index index_of made is gone when the keys are made, and the
    # keys are those of the 8-byte index
    from rankscope.data.tables import Qrels
    from rankscope.engine import qrels_index as qi
    from rankscope.engine import ranking_match

    rng = np.random.default_rng(11)
    queries = rng.integers(0, 30, 3000)
    frame = pl.DataFrame({"query_id": [f"q{q}" for q in queries],
                          "doc_id": [f"d{i}" for i in range(queries.size)],
                          "grade": rng.integers(0, 3, queries.size).astype(np.float64)})
    index = qi.qrels_index(Qrels(frame))
    wanted = index.query_ids if evaluated == "every query" else index.query_ids[::2]
    made: list[weakref.ref[npt.NDArray[np.int64]]] = []
    when_keyed: list[tuple[bool, str]] = []  # the 8-byte index alive, the index keyed
    real_index_of, real_doc_keys = run_queries.index_of, ranking_match.doc_keys

    def index_of(ids: pl.Series, names: list[str]) -> npt.NDArray[np.int64]:
        found = real_index_of(ids, names)
        assert found.dtype == np.int64
        made.append(weakref.ref(found))
        return found

    def keyed(qidx: npt.NDArray[np.signedinteger[Any]],
              docs: pl.Series) -> npt.NDArray[np.uint64]:
        when_keyed.append((made[-1]() is not None, str(qidx.dtype)))
        return real_doc_keys(qidx, docs)

    monkeypatch.setattr(qi, "index_of", index_of)
    monkeypatch.setattr(ranking_match, "doc_keys", keyed)
    judged = index.judged(wanted)
    assert when_keyed == [(False, "int32")]
    # each line of an evaluated query, its position in the list, as the definition says
    lines = [i for i, q in enumerate(queries) if f"q{q}" in wanted]
    positions = [wanted.index(f"q{queries[i]}") for i in lines]
    assert judged.query.tolist() == positions
    assert judged.docs.to_list() == [f"d{i}" for i in lines]
    expected = real_doc_keys(np.array(positions, dtype=np.int64),
                             pl.Series([f"d{i}" for i in lines]))
    np.testing.assert_array_equal(judged.keys, expected)
