"""The pieces small runs take (a validation set evaluated every epoch) against their definitions.

The judgments' hash table against a dict, the dict lookup of a few query ids
against the vectorized replacement, the runs of equal query ids found by
comparing neighbours, and metric names read once per process. Whole
evaluations on both paths are checked against the reference in
tests/core (``both_ranking_paths``).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import polars._utils.getitem as polars_getitem
import pytest

from rankscope import evaluate
from rankscope.data import run_queries
from rankscope.data.gather import at_rows
from rankscope.data.run_queries import _segments, index_of
from rankscope.engine.conventions import resolve_plan
from rankscope.engine.key_table import KeyTable
from rankscope.engine.options import EvalOptions

from .conftest import make_case
from .test_streaming import PARTIAL_OVERLAP

U64_MAX = np.iinfo(np.uint64).max


def _expected(keys: np.ndarray, needles: np.ndarray) -> np.ndarray:
    where = {int(k): i for i, k in enumerate(keys.tolist())}
    return np.array([where.get(int(k), -1) for k in needles.tolist()], dtype=np.int64)


@pytest.mark.parametrize("seed", range(20))
def test_the_key_table_finds_what_a_dict_finds(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(0, 3000)) if seed % 4 else int(rng.integers(0, 5))
    keys = np.unique(rng.integers(0, U64_MAX, m, dtype=np.uint64, endpoint=True))
    if seed % 3 == 0:  # the extreme keys, and 0 (the key of an empty slot)
        keys = np.unique(np.concatenate([keys, np.array([0, 1, U64_MAX], dtype=np.uint64)]))
    if seed % 5 == 0:  # keys that share their first slot: long probe sequences
        top = rng.integers(0, 4, keys.size).astype(np.uint64) << np.uint64(60)
        keys = np.unique(top | (keys & np.uint64(0xFFFF)))
    rng.shuffle(keys)
    absent = rng.integers(0, U64_MAX, int(rng.integers(0, 2000)), dtype=np.uint64,
                          endpoint=True)
    needles = np.concatenate([keys, keys[: keys.size // 2], absent,
                              np.array([0, U64_MAX], dtype=np.uint64)])
    rng.shuffle(needles)
    table = KeyTable(keys)
    assert table.find(needles).tolist() == _expected(keys, needles).tolist()
    assert table.find(needles[:0]).size == 0


def test_the_key_table_holds_a_4_byte_position_a_slot_beside_the_keys() -> None:
    # a small call probes the table out of the caches: its slots hold positions only, the
    # keys are read from the array given (16 bytes a slot before: a key and an 8-byte
    # position); at most an eighth full, so 2^16 slots for 7,061 keys (the URL cell's)
    keys = np.unique(np.random.default_rng(7).integers(0, U64_MAX, 7061, dtype=np.uint64))
    table = KeyTable(keys)
    assert table.nbytes == 4 * (1 << 16)
    assert table.find(keys[::-1]).tolist() == list(range(keys.size))[::-1]


@pytest.mark.parametrize("seed", range(12))
def test_a_few_ids_are_looked_up_as_many_are(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(seed)
    pool = ["q1", "q10", "q2", "Q3", "7", "qé", "", "q 1"]
    ids = pl.Series([pool[i] for i in rng.integers(0, len(pool), int(rng.integers(0, 60)))],
                    dtype=pl.String)
    evaluated = sorted(set(rng.choice(pool, int(rng.integers(0, len(pool)))).tolist()))
    listed = index_of(ids, evaluated)
    monkeypatch.setattr(run_queries, "LISTED_UP_TO", -1)  # every lookup vectorized
    assert listed.tolist() == index_of(ids, evaluated).tolist()
    assert listed.tolist() == [evaluated.index(q) if q in evaluated else -1
                               for q in ids.to_list()]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("slice_rows", [3, 64, 1 << 20])
def test_runs_of_equal_ids_from_neighbours(seed: int, slice_rows: int,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 200))
    ids = pl.Series([f"q{x}" for x in np.cumsum(rng.random(n) < 0.1)], dtype=pl.String)
    if seed % 2:
        ids = pl.concat([ids.slice(0, n // 3), ids.slice(n // 3)], rechunk=False)
    monkeypatch.setattr(run_queries, "_SLICE", slice_rows)
    monkeypatch.setattr(run_queries, "_DIRECT_FROM", 1 << 62)  # always listed
    found = _segments(ids)
    assert found is not None
    starts, names = found
    listed = ids.to_list()
    expected = [i for i in range(n) if i == 0 or listed[i] != listed[i - 1]]
    assert starts.tolist() == expected
    assert names.to_list() == [listed[i] for i in expected]


def test_metric_names_are_read_once_per_options() -> None:
    opts = EvalOptions(rel=2)
    first = resolve_plan(["nDCG@10", "AP"], opts)
    first.append(first[0])  # a caller may change the list it was given
    again = resolve_plan(["nDCG@10", "AP"], opts)
    assert [r.label for r in again] == ["nDCG@10", "AP"]
    assert again[1].metric.get("rel") == 2
    assert resolve_plan(["nDCG@10", "AP"], EvalOptions())[1].metric.get("rel") != 2


@pytest.mark.parametrize("seed", range(8))
def test_at_rows_is_a_gather(seed: int) -> None:
    rng = np.random.default_rng(seed)
    ids = pl.Series("d", [f"d{int(x)}" for x in rng.integers(0, 40, int(rng.integers(1, 300)))])
    if seed % 2:  # a column in chunks, as a file read in blocks gives it
        ids = pl.concat([ids.slice(0, ids.len() // 3), ids.slice(ids.len() // 3)], rechunk=False)
    dtype = [np.int64, np.int32, np.uint32, np.uint64][seed % 4]
    rows = rng.integers(0, ids.len(), int(rng.integers(0, 500))).astype(dtype)
    got = at_rows(ids, rows)
    assert got.name == "d"
    assert got.to_list() == [ids.to_list()[i] for i in rows.tolist()]


@pytest.mark.filterwarnings(PARTIAL_OVERLAP)
def test_a_small_evaluation_hands_polars_no_array_to_index_with(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # a numpy array as a Series' index is checked and copied in polars' Python code, a
    # fixed cost a gather (five or more a small call: the ties, the strings confirmed,
    # the runs' query ids); each is handed a Series of polars' index type instead
    qrels, run = make_case(3, n_queries=20, depth=30)
    run = run.with_columns(pl.col("score").round(1))  # ties: the tie step gathers ids
    expected = evaluate(qrels, run, ["map", "ndcg", "bpref", "P@10"]).means
    converted = []
    real = polars_getitem._convert_np_ndarray_to_indices

    def spy(arr: np.ndarray, size: int) -> pl.Series:
        converted.append(arr.size)
        return real(arr, size)

    monkeypatch.setattr(polars_getitem, "_convert_np_ndarray_to_indices", spy)
    result = evaluate(qrels, run, ["map", "ndcg", "bpref", "P@10"])
    assert converted == []
    assert result.means == expected
