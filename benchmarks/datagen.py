"""Seeded synthetic TREC qrels and runs for the benchmarks.

A run has ``queries x depth`` lines written in rank order. Query ids are
unpadded numbers ("1", "2", ... so byte order differs from numeric order),
document ids look like ``D1234567``. Scores are rounded to a grid so about a
quarter of neighbouring documents tie and the tie-breaking rule matters.
About 40 judgments a query (grades 0-3, skewed to 0), most on documents the
run ranks near the top, some on documents it never retrieves; a few judged
queries are absent from the run and a few run queries have no judgments.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

__all__ = ["ensure_data", "make_qrels", "make_run"]

JUDGED_PER_QUERY = 40
CORPUS_STRIDE = 50  # each ranked document is drawn from its own block of ids


def _query_ids(n: int) -> pl.Series:
    return pl.Series("query_id", np.arange(1, n + 1).astype(str))


def _doc_numbers(rng: np.random.Generator, n_queries: int, depth: int) -> np.ndarray:
    """Distinct document numbers within each query (one per block of ids)."""
    block = np.arange(depth, dtype=np.int64) * CORPUS_STRIDE
    offsets = rng.integers(0, CORPUS_STRIDE, size=(n_queries, depth), dtype=np.int64)
    # shuffle blocks per query so document ids are not monotone in rank
    perm = np.argsort(rng.random((n_queries, depth)), axis=1)
    return (block[perm] + offsets).astype(np.int64)


def make_run(n_queries: int, depth: int, seed: int) -> pl.DataFrame:
    """A run frame in file order: query, Q0, doc, rank, score, tag."""
    rng = np.random.default_rng(seed)
    docs = _doc_numbers(rng, n_queries, depth)
    # decreasing scores with noise, rounded so ties occur
    unit = 15.0 / depth
    base = np.linspace(20.0, 5.0, depth)[None, :]
    noise = rng.exponential(unit, size=(n_queries, depth))
    raw = np.sort(base - noise, axis=1)[:, ::-1]
    scores = np.round(np.round(raw / unit) * unit, 4)
    rank = np.tile(np.arange(1, depth + 1, dtype=np.int64), n_queries)
    qids = np.repeat(np.arange(1, n_queries + 1), depth)
    return pl.DataFrame(
        {
            "query_id": qids.astype(str),
            "q0": pl.Series(["Q0"]).extend_constant("Q0", qids.size - 1),
            "doc_id": pl.Series(docs.ravel()).cast(pl.String).str.pad_start(7, "0"),
            "rank": rank,
            "score": scores.ravel(),
            "tag": pl.Series(["bench"]).extend_constant("bench", qids.size - 1),
        }
    ).with_columns(("D" + pl.col("doc_id")).alias("doc_id"))


def make_qrels(n_queries: int, depth: int, seed: int) -> pl.DataFrame:
    """Qrels matching :func:`make_run` with the same arguments."""
    rng = np.random.default_rng(seed)
    docs = _doc_numbers(rng, n_queries, depth)
    per = JUDGED_PER_QUERY
    n_ret = min(per * 3 // 4, depth)
    # judged retrieved documents: biased to the top of each ranking
    pos = np.minimum((rng.random((n_queries, n_ret)) ** 2 * depth).astype(np.int64), depth - 1)
    pos = np.sort(pos, axis=1)
    keep = np.ones_like(pos, dtype=bool)
    keep[:, 1:] = pos[:, 1:] != pos[:, :-1]
    ret_docs = np.take_along_axis(docs, pos, axis=1)
    # never-retrieved judged documents: ids past every block
    extra = depth * CORPUS_STRIDE + rng.choice(10 * per, size=(n_queries, per - n_ret))
    extra = np.sort(extra, axis=1)
    keep_extra = np.ones_like(extra, dtype=bool)
    keep_extra[:, 1:] = extra[:, 1:] != extra[:, :-1]
    qid = np.arange(1, n_queries + 1)
    q_all = np.concatenate([np.repeat(qid, n_ret)[keep.ravel()],
                            np.repeat(qid, per - n_ret)[keep_extra.ravel()]])
    d_all = np.concatenate([ret_docs.ravel()[keep.ravel()], extra.ravel()[keep_extra.ravel()]])
    grades = rng.choice(4, size=q_all.size, p=[0.55, 0.25, 0.13, 0.07])
    frame = pl.DataFrame({"q": q_all, "doc": d_all, "grade": grades}).sort(["q", "doc"])
    return frame.select(
        pl.col("q").cast(pl.String).alias("query_id"),
        pl.lit("0").alias("iteration"),
        ("D" + pl.col("doc").cast(pl.String).str.pad_start(7, "0")).alias("doc_id"),
        pl.col("grade"),
    )


def _write(frame: pl.DataFrame, path: Path) -> None:
    tmp = path.with_suffix(".tmp")
    frame.write_csv(tmp, separator=" ", include_header=False, quote_style="never")
    tmp.replace(path)


def ensure_data(root: Path, n_queries: int, depth: int, seed: int = 42) -> tuple[Path, Path]:
    """Write (once) and return the qrels and run paths for one size."""
    root.mkdir(parents=True, exist_ok=True)
    stem = f"{n_queries}x{depth}_s{seed}"
    qrels, run = root / f"qrels_{stem}.txt", root / f"run_{stem}.txt"
    if not qrels.exists():
        _write(make_qrels(n_queries, depth, seed), qrels)
    if not run.exists():
        _write(make_run(n_queries, depth, seed), run)
    return qrels, run
