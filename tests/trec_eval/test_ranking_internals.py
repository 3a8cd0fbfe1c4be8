"""The bulk helpers behind trec_eval's rankings, against plain Python on small inputs."""

from __future__ import annotations

import random

import numpy as np
import polars as pl

from rankscope.trec_eval.ranking import MIX, distinct_within, doc_keys


def test_distinct_within_matches_sets_per_group():
    rng = random.Random(3)
    for _ in range(400):
        counts = [rng.choice([0, 1, 2, 3, 5, 8, 9, 16, 17]) for _ in range(rng.randint(1, 12))]
        keys = [rng.choice([0, 1, 2, 3, 2**64 - 1, 2**63, rng.getrandbits(64)])
                for _ in range(sum(counts))]
        expected = True
        at = 0
        for c in counts:
            group = keys[at:at + c]
            expected &= len(set(group)) == len(group)
            at += c
        got = distinct_within(np.array(keys, dtype=np.uint64), np.array(counts, dtype=np.int64))
        assert got == expected, (counts, keys)


def test_distinct_within_handles_many_groups_in_chunks():
    # equal lengths take the reshape path, several chunks of rows
    keys = np.arange(3 * (1 << 22), dtype=np.uint64)
    counts = np.full(3 * (1 << 22) // 6, 6, dtype=np.int64)
    assert distinct_within(keys, counts)
    keys[-1] = keys[-6]  # a repeat in the last group only
    assert not distinct_within(keys, counts)


def test_doc_keys_mix_the_query_into_the_document_hash():
    qidx = np.array([0, 1, 2, 3, 2**40] * 300_000, dtype=np.int64)  # several blocks
    docs = pl.Series([f"d{i % 7}" for i in range(qidx.size)])
    hashed = docs.hash(seed=0x5EED).to_numpy()
    expected = [((q * MIX) % 2**64) ^ h for q, h in zip(qidx.tolist()[:20], hashed.tolist()[:20],
                                                        strict=True)]
    keys = doc_keys(qidx, docs)
    assert keys[:20].tolist() == expected
    # one key per distinct (query, document): the same document in two queries gets two
    assert len(set(zip(qidx.tolist(), docs.to_list(), strict=True))) == len(set(keys.tolist()))
