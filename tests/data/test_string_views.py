"""A string Series' Arrow views read as bytes, and the id codes made from them
(data/string_views.py, data/id_codes.py; issue 30 §4).

The references are the strings' UTF-8 encodings and Python's sort of
(score descending, document id bytes descending).
"""

from __future__ import annotations

import random

import numpy as np
import polars as pl
import pytest
from polars.series.string import StringNameSpace
from tests.core.test_one_ordering import codes_tried

from rankscope.data import tie_order
from rankscope.data.id_codes import byte_order_codes
from rankscope.data.ranking_order import ranked
from rankscope.data.string_views import INLINE_BYTES, string_views

WORDS = ["", "a", "ab", "abc", "é", "aé", "d1", "d10", "d100", "€uro", "x" * 12, "y" * 13,
         "z" * 40, "\x01", "a\x7f"]


def _check_views(strings: pl.Series, expected: list[str]) -> None:
    views = string_views(strings)
    assert views is not None and views.shape == (len(expected), 16)
    for row, text in zip(views, expected, strict=True):
        raw = text.encode()
        assert int(row[:4].view(np.uint32)[0]) == len(raw)
        if len(raw) <= INLINE_BYTES:
            assert bytes(row[4:]) == raw.ljust(INLINE_BYTES, b"\0")
        else:
            assert bytes(row[4:8]) == raw[:4]  # the prefix; the rest lies elsewhere


def test_views_hold_each_length_and_short_string() -> None:
    _check_views(pl.Series(WORDS, dtype=pl.String), WORDS)


def test_views_of_a_slice_and_of_several_chunks() -> None:
    # a slice exports its offset into the views; several chunks, one array each
    whole = pl.Series(WORDS, dtype=pl.String)
    _check_views(whole.slice(3, 7), WORDS[3:10])
    chunked = pl.concat([whole, whole.slice(2), whole.head(0), whole.head(1)], rechunk=False)
    assert chunked.n_chunks() > 1
    _check_views(chunked, WORDS + WORDS[2:] + WORDS[:1])
    _check_views(pl.Series([], dtype=pl.String), [])


def _no_string_expressions(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_: object, **__: object) -> None:
        raise AssertionError("a polars string expression on the views' path")

    for name in ("len_bytes", "join"):
        monkeypatch.setattr(StringNameSpace, name, boom)


@pytest.mark.parametrize("seed", range(4))
def test_short_ids_are_coded_from_their_views(seed: int,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # ids of at most 12 bytes are coded from the views alone (no lengths or joined text
    # from polars), in their byte order: non-ASCII, a prefix beside the longer id, empty
    rng = random.Random(seed)
    ids = [f"{rng.choice(['d', 'é', '', 'ab'])}{rng.randint(0, 10 ** rng.randint(0, 6))}"
           for _ in range(300)] + ["", "d", "d1", "d10", "é", "ab"]
    _no_string_expressions(monkeypatch)
    codes = byte_order_codes(pl.Series(ids, dtype=pl.String))
    assert codes is not None
    raw = [d.encode() for d in ids]
    assert [raw[i] for i in np.argsort(codes, kind="stable")] == sorted(raw)
    for i in range(0, len(ids) - 1):  # equal ids, equal codes
        assert (codes[i] == codes[i + 1]) == (raw[i] == raw[i + 1])


def test_short_ids_with_a_nul_byte_have_no_codes(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_string_expressions(monkeypatch)
    assert byte_order_codes(pl.Series(["d1", "d1\x00", "d", "\x00"], dtype=pl.String)) is None


@pytest.mark.parametrize("seed", range(3))
def test_many_ties_rank_as_python_sorts_them(seed: int,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # more tied pairs than are counted: the tied runs are coded from the ids' views and
    # sorted; the reference sorts (query, score descending, id bytes descending)
    rng = random.Random(seed)
    coded = codes_tried(monkeypatch)
    _no_string_expressions(monkeypatch)
    stems = ["d", "doc", "é", "", "do", "€"]
    rows = []
    for q in ("q1", "q2"):
        for _ in range(1500):
            doc = f"{rng.choice(stems)}{rng.randrange(10 ** rng.randint(0, 5))}"
            if rng.random() < 0.05:
                doc = rng.choice(["", "d", "do", "doc"])  # prefixes of the others, the empty id
            rows.append((q, doc, float(rng.randint(0, 3))))
    seen: set[tuple[str, str]] = set()
    rows = [r for r in rows if (r[0], r[1]) not in seen and not seen.add((r[0], r[1]))]
    rng.shuffle(rows)
    frame = pl.DataFrame(rows, schema={"query_id": pl.String, "doc_id": pl.String,
                                       "score": pl.Float64}, orient="row")
    want = sorted(rows, key=lambda r: (r[0], -r[2], (*(-b for b in r[1].encode()), 1)))
    got = ranked(frame, "trec")
    assert list(zip(got.get_column("query_id"), got.get_column("doc_id"), strict=True)) == \
        [r[:2] for r in want]
    assert coded and all(coded)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("bits", ["few", "every"])
def test_runs_sort_by_code_within_each_run_equal_codes_in_order(seed: int, bits: str) -> None:
    # codes differing in a few bits (sorted with their run number in one integer) or in
    # all 64 (two sorts); equal codes inside a run keep their order; one run alone
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 30, size=int(rng.choice([1, 7, 300]))).astype(np.int64)
    n = int(lengths.sum())
    if bits == "few":
        key = (rng.integers(0, 50, n).astype(np.uint64) << np.uint64(20)) | np.uint64(0xF00)
    else:
        key = rng.integers(0, 2**63, n, dtype=np.uint64) * np.uint64(2) + np.uint64(seed % 2)
        key[rng.integers(0, n, n // 5)] = key[0]  # repeated codes
        key[0] = np.uint64(2**64 - 1)
    rows = rng.permutation(n).astype(np.int64)
    want: list[int] = []
    start = 0
    for length in lengths.tolist():
        run = range(start, start + length)
        want += [int(rows[i]) for i in sorted(run, key=lambda i: (int(key[i]), i))]
        start += length
    assert tie_order._runs_sorted_by_code(key, lengths, rows).tolist() == want
