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
    # 11-byte ids (two words) differing in 3 places, a prefix and a longer one: 5 places
    ids = [f"cw-{a}-{b}-en0{c}" for a in "09" for b in "12" for c in "0123"]
    ids += ["cw-0-1-en0", "cw-0-1-en01x"]
    _agrees_with_bytes(ids)


@pytest.mark.parametrize("seed", range(6))
def test_nine_to_fourteen_varying_bytes_code_as_a_rank_and_the_rest(seed: int) -> None:
    # ids of 12 to 15 bytes with a section and a number: 9 to 14 positions differ; the
    # first eight are ranked densely (ties among them decided by the rest)
    rng = random.Random(seed)
    digits = rng.randint(8, 10)
    ids = [f"s{rng.randint(10, 12)}/p{rng.randrange(10 ** digits):0{digits}d}"
           for _ in range(120)]
    last = ids[0][-1]  # the same first eight varying bytes as ids[0], another last digit
    ids += [ids[0][:-1] + ("1" if last == "0" else "0"), ids[1], ids[2][:-1]]
    raw = [d.encode() for d in ids]
    width = max(map(len, raw))
    padded = [r.ljust(width, b"\0") for r in raw]
    assert 9 <= sum(len({p[i] for p in padded}) > 1 for i in range(width)) <= 14
    _agrees_with_bytes(ids)


def test_fourteen_varying_bytes_fill_all_64_bits() -> None:
    # 14 digits, every one varying: a 16-bit rank of the first eight and 48 bits of the rest
    rng = random.Random(14)
    ids = [f"{rng.randrange(10 ** 14):014d}" for _ in range(200)]
    ids += [ids[0][:8] + ids[1][8:], ids[1][:8] + ids[0][8:], "9" * 14, "0" * 14]
    _agrees_with_bytes(ids)


@pytest.mark.parametrize("ids", [
    pytest.param(["d1", "d1\x00", "d"], id="a NUL byte"),
    pytest.param(["x" * 17, "x"], id="longer than 16 bytes"),
    pytest.param(["x", "y" * 12, "x" * 17], id="longer than 16 bytes, not first"),
    pytest.param(["abcdefghijklmno", "bcdefghijklmnop"], id="fifteen varying bytes"),
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
