"""The bulk helpers behind trec_eval's rankings, against plain Python on small inputs."""

from __future__ import annotations

import random

import numpy as np
import polars as pl

from rankscope.data.distinct import distinct_within
from rankscope.engine.ranking_match import MIX, doc_keys


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


def test_ties_between_equal_values_need_no_order():
    # Ordering only the tied runs whose rows differ in value yields the same
    # value at every rank as ordering every run (the measures see nothing else).
    from rankscope.data.ranking_order import base_order, find_ties, fix_ties, rank_order

    rng = np.random.default_rng(5)
    for _ in range(200):
        n_queries = int(rng.integers(1, 5))
        size = int(rng.integers(1, 60))
        qidx = np.sort(rng.integers(0, n_queries, size)) if rng.random() < 0.5 else \
            rng.integers(0, n_queries, size)
        score = rng.integers(0, 4, size).astype(np.float64)
        if rng.random() < 0.5:  # a file already in rank order
            order = np.lexsort((-score, qidx))
            qidx, score = qidx[order], score[order]
        # distinct ids (a query listing a document twice fails whatever its order)
        docs = pl.Series([f"d{int(x)}" for x in rng.permutation(size)])
        values = rng.choice([-1, -1, -1, 0, 1, 2], size).astype(np.int64)
        full = rank_order(qidx, score, docs, n_queries)
        base = base_order(qidx, score, n_queries)
        lean = fix_ties(base, find_ties(base, qidx, score), docs, values)
        assert full.apply(values).tolist() == lean.apply(values).tolist()
        assert full.counts.tolist() == lean.counts.tolist()


def test_a_cut_inside_a_tie_run_keeps_the_larger_ids(tmp_path):
    # c, b and a tie at score 5 below c at 9: trec_eval ranks c, c, b, a (ids
    # descending), so -M2 keeps c twice (a duplicate: exit 4) and -M1 does not.
    from .util import ours

    (tmp_path / "qrels").write_bytes(b"q 0 x 1\n")
    (tmp_path / "run").write_bytes(b"q Q0 c 1 9 r\nq Q0 a 2 5 r\nq Q0 b 3 5 r\nq Q0 c 4 5 r\n")
    cut2 = ours(["-M2", "-m", "num_ret", "qrels", "run"], cwd=tmp_path)
    assert cut2.status == 4
    assert cut2.stderr.startswith("trec_eval.form_res_qrels: duplicate docs c")
    assert ours(["-M1", "-m", "num_ret", "qrels", "run"], cwd=tmp_path).stdout == \
        "num_ret               \tall\t1\n"
    # b (relevant) ties with a and d at 5: ranked d, b, a, so b is third
    (tmp_path / "qrels").write_bytes(b"q 0 b 1\n")
    (tmp_path / "run").write_bytes(b"q Q0 c 1 9 r\nq Q0 a 2 5 r\nq Q0 b 3 5 r\nq Q0 d 4 5 r\n")
    out = ours(["-m", "P.2,3", "qrels", "run"], cwd=tmp_path).stdout
    assert out == "P_2                   \tall\t0.0000\nP_3                   \tall\t0.3333\n"


def test_a_ranked_file_with_blocks_out_of_query_order_ranks_like_a_sort():
    # A file in rank order whose query blocks are not in query order (ids 1, 2,
    # ..., 10 in byte order) keeps the file order until the end: ranked rows and
    # values must be those of a plain sort by (query, score desc, doc id desc).
    from rankscope.data.ranking_order import base_order, find_ties, fix_ties

    rng = random.Random(11)
    for _ in range(300):
        n_queries = rng.randint(1, 6)
        blocks = rng.sample(range(-1, n_queries), rng.randint(1, n_queries + 1))
        rows: list[tuple[int, float, str]] = []
        for q in blocks:
            scores = sorted((float(rng.randint(0, 3)) for _ in range(rng.randint(1, 6))),
                            reverse=True)
            rows += [(q, s, f"d{rng.randint(0, 30)}") for s in scores]
        # one document per row of a query (a repeat would be a duplicate)
        seen: set[tuple[int, str]] = set()
        rows = [r for r in rows if (r[0], r[2]) not in seen and not seen.add((r[0], r[2]))]
        qidx = np.array([r[0] for r in rows], dtype=np.int64)
        score = np.array([r[1] for r in rows])
        docs = pl.Series([r[2] for r in rows])
        values = np.array([rng.choice([-1, 0, 1, 2]) for _ in rows], dtype=np.int64)
        expected = sorted((i for i, r in enumerate(rows) if r[0] >= 0),
                          key=lambda i: (rows[i][0], -rows[i][1],
                                         [-b for b in rows[i][2].encode()] + [1]))
        base = base_order(qidx, score, n_queries, defer_blocks=True)
        every = fix_ties(base, find_ties(base, qidx, score), docs)
        assert every.rows().tolist() == expected
        assert every.apply(values).tolist() == values[expected].tolist()
        lean = fix_ties(base, find_ties(base, qidx, score), docs, values)
        assert lean.apply(values).tolist() == values[expected].tolist()
        assert values[lean.rows()].tolist() == values[expected].tolist()


def test_query_blocks_gather_like_their_rows_listed_one_by_one():
    # Blocks copies long blocks as slices and short ones through an index: both
    # must give the rows first[i] .. first[i] + take[i] - 1, block after block.
    from rankscope.data.ranking_order import Blocks

    rng = random.Random(5)
    for longest in (3, 400):  # mean block length below and above the slicing cut
        for _ in range(50):
            n_blocks = rng.randint(0, 8)
            takes = [rng.randint(1, longest) for _ in range(n_blocks)]
            starts = [0]
            for t in takes[:-1]:
                starts.append(starts[-1] + t + rng.randint(0, 3))  # gaps: rows left out
            starts = starts[:n_blocks]
            n_rows = (starts[-1] + takes[-1] + 2) if n_blocks else 4
            perm = rng.sample(range(n_blocks), n_blocks)
            first = np.array([starts[i] for i in perm], dtype=np.int64)
            take = np.array([takes[i] for i in perm], dtype=np.int64)
            expected = [r for f, t in zip(first.tolist(), take.tolist(), strict=True)
                        for r in range(f, f + t)]
            per_row = np.arange(n_rows, dtype=np.float64) * 10.0
            blocks = Blocks(first, take)
            assert blocks.index().tolist() == expected
            assert blocks.gather(per_row).tolist() == [10.0 * r for r in expected]
            assert blocks.last() == max(expected, default=-1)
