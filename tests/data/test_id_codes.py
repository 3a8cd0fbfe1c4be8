"""Integer codes of document ids in their byte order (data/id_codes.py, issue 30 §4).

The reference is Python's comparison of the ids' UTF-8 bytes, pair by pair.
"""

from __future__ import annotations

import random

import polars as pl
import pytest

from rankscope.data.id_codes import CODED_UP_TO, byte_order_codes


def _sign(a: object, b: object) -> int:
    return (a > b) - (a < b)  # type: ignore[operator]


def _agrees_with_bytes(ids: list[str]) -> None:
    codes = byte_order_codes(pl.Series(ids, dtype=pl.String))
    assert codes is not None
    raw = [d.encode() for d in ids]
    for i in range(len(ids)):
        for j in range(len(ids)):
            assert _sign(int(codes[i]), int(codes[j])) == _sign(raw[i], raw[j]), (ids[i], ids[j])


@pytest.mark.parametrize("seed", range(8))
def test_codes_order_ids_as_their_bytes(seed: int) -> None:
    # ids of one pattern with a varying number inside, of different lengths (d9 beside
    # d10: byte order is not numeric order), repeated ids, a non-ASCII character
    rng = random.Random(seed)
    stem = rng.choice(["d", "doc-", "msmarco_", "", "é"])
    ids = [f"{stem}{rng.randint(0, 10 ** rng.randint(1, 4))}" for _ in range(80)]
    ids += ids[:5]
    _agrees_with_bytes(ids)


def test_a_prefix_goes_before_the_longer_id() -> None:
    _agrees_with_bytes(["", "a", "ab", "abc", "a\x01", "b", "\x01", "ab\x7f", "abé", "\x7f",
                        "a", ""])


def test_ids_longer_than_a_word_code_their_varying_bytes() -> None:
    # 20-byte ids differing in 3 places (two words, one varying byte in each and the length)
    ids = [f"clueweb-{a}-{b}-en000{c}" for a in "09" for b in "12" for c in "0123"]
    ids += ["clueweb-0-1-en000", "clueweb-0-1-en0001x"]
    _agrees_with_bytes(ids)


@pytest.mark.parametrize("seed", range(6))
def test_nine_to_fourteen_varying_bytes_code_as_a_rank_and_the_rest(seed: int) -> None:
    # URLs with a section and a page number: 9 to 14 positions differ; the first eight
    # are ranked densely (ties among them decided by the rest)
    rng = random.Random(seed)
    digits = rng.randint(8, 12)
    ids = [f"https://www.example.org/s-{rng.randint(10, 12)}/p-"
           f"{rng.randrange(10 ** digits):0{digits}d}.html" for _ in range(120)]
    last = ids[0][-6]  # the same first eight varying bytes as ids[0], another last digit
    ids += [ids[0][:-6] + ("1" if last == "0" else "0") + ".html", ids[1], ids[2][:-1]]
    raw = [d.encode() for d in ids]
    width = max(map(len, raw))
    padded = [r.ljust(width, b"\0") for r in raw]
    assert 9 <= sum(len({p[i] for p in padded}) > 1 for i in range(width)) <= 14
    _agrees_with_bytes(ids)


@pytest.mark.parametrize("ids", [
    pytest.param(["d1", "d1\x00", "d"], id="a NUL byte"),
    pytest.param(["x" * 33, "y"], id="33 varying bytes"),
    pytest.param(["abcdefghijklmno", "bcdefghijklmnop"], id="fifteen varying bytes"),
    pytest.param(["d" * 300_000] * 8, id="a matrix over 2 MB"),
    pytest.param(["a", None], id="a null"),
    pytest.param([], id="none"),
])
def test_ids_that_do_not_fit_have_no_codes(ids: list[str | None]) -> None:
    # the caller then compares the strings themselves
    assert byte_order_codes(pl.Series(ids, dtype=pl.String)) is None


def test_too_many_ids_have_no_codes() -> None:
    many = pl.Series([f"d{n % 10}" for n in range(CODED_UP_TO + 1)], dtype=pl.String)
    assert byte_order_codes(many) is None
    assert byte_order_codes(many.head(CODED_UP_TO)) is not None
