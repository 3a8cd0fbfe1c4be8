"""Seeded synthetic TREC qrels and runs for the benchmarks, in several shapes.

A run has ``queries x depth`` lines. What varies (a :class:`Shape`):

* ``judged``: judgments per query (about; three quarters on retrieved
  documents biased to the top of the ranking, the rest on documents the run
  never retrieves), grades 0-3 skewed to 0;
* ``ids``: ``num`` (unpadded numbers, so byte order differs from numeric
  order), ``qd`` (``q123`` / ``d4567``), ``url`` (topic names and long
  URL-like document ids) or ``msmarco`` (random 6-7 digit query ids in no
  order, document ids below 8.8 million);
* ``ties``: the share of neighbouring ranked documents with equal scores
  (0, 25 or 90 per cent), so the tie-breaking rule matters;
* ``order``: ``ranked`` (grouped by query, by descending score, as retrieval
  systems write) or ``shuffled`` (lines in random order).

Files go under ``benchmarks/data/`` (git-ignored) and are written once per
(size, shape, seed); :func:`ensure_data` returns their paths.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

__all__ = ["BASE", "Shape", "ensure_data", "make_qrels", "make_run"]

MSMARCO_DOCS = 8_841_823


@dataclass(frozen=True)
class Shape:
    """How a generated data set looks (see the module docstring)."""

    judged: int = 100
    ids: str = "qd"
    ties: int = 25
    order: str = "ranked"

    @property
    def key(self) -> str:
        return f"j{self.judged}-{self.ids}-t{self.ties}-{self.order}"

    def differs(self) -> str:
        """What differs from :data:`BASE`, for tables ("base" when nothing)."""
        parts = []
        if self.judged != BASE.judged:
            parts.append(f"{self.judged} judged/q")
        if self.ids != BASE.ids:
            parts.append(f"ids {self.ids}")
        if self.ties != BASE.ties:
            parts.append(f"{self.ties}% ties")
        if self.order != BASE.order:
            parts.append(self.order)
        return ", ".join(parts) or "base"


BASE = Shape()
"""100 judgments a query, ``q123``/``d4567`` ids, 25 % ties, rank order."""


def _stride(depth: int, shape: Shape) -> int:
    return max(MSMARCO_DOCS // (depth + 1), 2) if shape.ids == "msmarco" else 50


def _doc_numbers(rng: np.random.Generator, n_queries: int, depth: int, stride: int) -> np.ndarray:
    """Distinct document numbers within each query (one per block of ids)."""
    block = np.arange(depth, dtype=np.int64) * stride
    offsets = rng.integers(0, stride, size=(n_queries, depth), dtype=np.int64)
    perm = np.argsort(rng.random((n_queries, depth)), axis=1)  # ids not monotone in rank
    out: np.ndarray = block[perm] + offsets
    return out


def _query_numbers(rng: np.random.Generator, n_queries: int, shape: Shape) -> np.ndarray:
    if shape.ids == "msmarco":  # distinct, random, in no particular order
        return rng.choice(np.arange(2, 1_200_000), size=n_queries, replace=False)
    return np.arange(1, n_queries + 1)


def _query_text(numbers: pl.Series, shape: Shape) -> pl.Expr:
    col = pl.lit(numbers).cast(pl.String)
    if shape.ids == "qd":
        return "q" + col
    if shape.ids == "url":
        return "topic-" + col.str.pad_start(6, "0")
    return col


def _doc_text(col: pl.Expr, shape: Shape) -> pl.Expr:
    col = col.cast(pl.String)
    if shape.ids == "qd":
        return "d" + col
    if shape.ids == "url":
        return ("https://www.example.org/wiki/en/articles/section-" + col.str.slice(0, 2)
                + "/page-" + col.str.pad_start(8, "0") + ".html")
    return col


def _scores(rng: np.random.Generator, n_queries: int, depth: int, ties: int) -> np.ndarray:
    """Descending scores per query; each neighbour ties with probability ``ties`` %."""
    steps = np.maximum(np.round(rng.exponential(15.0 / depth, (n_queries, depth)), 4), 1e-4)
    steps[:, 0] = 0.0
    steps[rng.random((n_queries, depth)) < ties / 100] = 0.0
    out: np.ndarray = np.round(25.0 - np.cumsum(steps, axis=1), 4)
    return out


def make_run(n_queries: int, depth: int, seed: int, shape: Shape = BASE) -> pl.DataFrame:
    """A run frame in file order: query, Q0, doc, rank, score, tag."""
    rng = np.random.default_rng(seed)
    docs = _doc_numbers(rng, n_queries, depth, _stride(depth, shape))
    qnums = _query_numbers(np.random.default_rng(seed + 1), n_queries, shape)
    scores = _scores(rng, n_queries, depth, shape.ties)
    n = n_queries * depth
    frame = pl.DataFrame({
        "qn": np.repeat(qnums, depth),
        "dn": docs.ravel(),
        "rank": np.tile(np.arange(1, depth + 1, dtype=np.int64), n_queries),
        "score": scores.ravel(),
    })
    if shape.order == "shuffled":
        frame = frame[np.random.default_rng(seed + 2).permutation(n)]
    return frame.select(
        _query_text(frame["qn"], shape).alias("query_id"),
        pl.lit("Q0").alias("q0"),
        _doc_text(pl.col("dn"), shape).alias("doc_id"),
        pl.col("rank"),
        pl.col("score"),
        pl.lit("bench").alias("tag"),
    )


def make_qrels(n_queries: int, depth: int, seed: int, shape: Shape = BASE) -> pl.DataFrame:
    """Qrels matching :func:`make_run` with the same arguments."""
    rng = np.random.default_rng(seed)
    stride = _stride(depth, shape)
    docs = _doc_numbers(rng, n_queries, depth, stride)
    qnums = _query_numbers(np.random.default_rng(seed + 1), n_queries, shape)
    rng = np.random.default_rng(seed + 3)
    per = shape.judged
    n_ret = min(max(per * 3 // 4, 1), depth)
    pos = np.minimum((rng.random((n_queries, n_ret)) ** 2 * depth).astype(np.int64), depth - 1)
    pos = np.sort(pos, axis=1)
    keep = np.ones_like(pos, dtype=bool)
    keep[:, 1:] = pos[:, 1:] != pos[:, :-1]
    ret_docs = np.take_along_axis(docs, pos, axis=1)
    n_extra = max(per - n_ret, 1)
    extra = depth * stride + rng.choice(10 * per, size=(n_queries, n_extra))
    extra = np.sort(extra, axis=1)
    keep_extra = np.ones_like(extra, dtype=bool)
    keep_extra[:, 1:] = extra[:, 1:] != extra[:, :-1]
    q_all = np.concatenate([np.repeat(qnums, n_ret)[keep.ravel()],
                            np.repeat(qnums, n_extra)[keep_extra.ravel()]])
    d_all = np.concatenate([ret_docs.ravel()[keep.ravel()], extra.ravel()[keep_extra.ravel()]])
    grades = rng.choice(4, size=q_all.size, p=[0.55, 0.25, 0.13, 0.07])
    frame = pl.DataFrame({"q": q_all, "doc": d_all, "grade": grades}).sort(["q", "doc"])
    return frame.select(
        _query_text(frame["q"], shape).alias("query_id"),
        pl.lit("0").alias("iteration"),
        _doc_text(pl.col("doc"), shape).alias("doc_id"),
        pl.col("grade"),
    )


def _write(frame: pl.DataFrame, path: Path) -> None:
    tmp = path.with_suffix(".tmp")
    frame.write_csv(tmp, separator=" ", include_header=False, quote_style="never")
    tmp.replace(path)


def data_paths(root: Path, n_queries: int, depth: int, seed: int,
               shape: Shape = BASE) -> tuple[Path, Path]:
    stem = f"{n_queries}x{depth}_{shape.key}_s{seed}"
    return root / f"qrels_{stem}.txt", root / f"run_{stem}.txt"


def ensure_data(root: Path, n_queries: int, depth: int, seed: int = 42,
                shape: Shape = BASE) -> tuple[Path, Path]:
    """Write (once) and return the qrels and run paths for one size and shape."""
    root.mkdir(parents=True, exist_ok=True)
    qrels, run = data_paths(root, n_queries, depth, seed, shape)
    if not qrels.exists():
        _write(make_qrels(n_queries, depth, seed, shape), qrels)
    if not run.exists():
        _write(make_run(n_queries, depth, seed, shape), run)
    return qrels, run
