"""Simulate the demo collection's click log: ``src/rankscope/demo_data/clicks.csv.gz``.

What users of the demo's search would have clicked, drawn from a click model
whose parameters come from the shipped human grades (``qrels.txt``), so the
implicit judgments fitted on it can be compared with those grades
(``rankscope judgments implicit`` then ``rankscope judgments agreement``):

- the result pages: each query's top ``--depth`` (10) from the two demo
  endpoints, as an A/B test (each session sees the baseline or the tuned
  configuration, half and half), and ``--explore`` (10%) of the sessions see
  that top 10 shuffled (a randomised bucket, which lets position-aware models
  tell position from relevance);
- how many sessions each query gets: popularity falls with a Zipf law
  (``--sessions`` for the most popular query, ``--sessions / k^0.9`` for the
  k-th in a seeded random order, at least 5): a few popular queries and a
  long tail, as in real logs, so ``--min-impressions`` has work to do;
- the clicks: the simplified DBN (``rankscope.judgments.clicks.simulate_clicks``,
  model ``sdbn``): a result of grade g attracts a click with probability
  ``ATTRACTIVENESS[g]`` and, clicked, satisfies (the user stops) with
  probability ``SATISFACTION[g]``. A result the qrels do not grade counts as
  grade 0.

Everything is seeded (``--seed``, default 2024): the same rankscope version
gives the same file. Run: ``python scripts/make_demo_clicks.py`` (``--check``
reports whether the shipped file would change).
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import sys
import tempfile
from pathlib import Path

import numpy as np
import polars as pl

from rankscope.judgments.clicks import simulate_clicks
from rankscope.search.config import load_endpoint, open_endpoint
from rankscope.search.queries import read_queries
from rankscope.services.demo import init_demo

DATA = Path(__file__).resolve().parent.parent / "src" / "rankscope" / "demo_data"
TARGET = DATA / "clicks.csv.gz"
ATTRACTIVENESS = {0: 0.05, 1: 0.2, 2: 0.5, 3: 0.8}
SATISFACTION = {0: 0.1, 1: 0.3, 2: 0.6, 3: 0.9}


async def _top(endpoint_file: Path, depth: int) -> dict[str, list[str]]:
    """Each query's top ``depth`` documents from one endpoint, in the engine's order."""
    config = load_endpoint(endpoint_file)
    endpoint = open_endpoint(config)
    try:
        out: dict[str, list[str]] = {}
        for query in read_queries(endpoint_file.parent / "queries.tsv"):
            response = await endpoint.search(query, depth)
            out[query.query_id] = [hit.doc_id for hit in response.hits[:depth]]
        return out
    finally:
        await endpoint.aclose()


def pages(rankings: list[dict[str, list[str]]], *, sessions: int, explore: float,
          rng: np.random.Generator) -> pl.DataFrame:
    """The result pages shown: ``session_id, query_id, doc_id, position``."""
    queries = sorted(rankings[0])
    popularity = rng.permutation(len(queries))
    rows: list[tuple[str, str, str, int]] = []
    number = 0
    for k, qid in zip(popularity, queries, strict=True):
        count = max(5, round(sessions / (k + 1) ** 0.9))
        for _ in range(count):
            number += 1
            shown = list(rankings[int(rng.integers(len(rankings)))][qid])
            if rng.random() < explore:
                shown = [shown[i] for i in rng.permutation(len(shown))]
            rows += [(f"s{number:05d}", qid, doc, pos) for pos, doc in enumerate(shown, 1)]
    return pl.DataFrame(rows, schema=["session_id", "query_id", "doc_id", "position"],
                        orient="row")


def parameters(shown: pl.DataFrame, qrels: Path) -> pl.DataFrame:
    """Each shown pair's attractiveness and satisfaction, from its human grade."""
    grades = pl.read_csv(qrels, separator=" ", has_header=False,
                         new_columns=["query_id", "iteration", "doc_id", "grade"],
                         schema_overrides={"query_id": pl.String, "doc_id": pl.String})
    pairs = shown.select("query_id", "doc_id").unique().join(
        grades.select("query_id", "doc_id", pl.col("grade").cast(pl.Int64)),
        on=["query_id", "doc_id"], how="left").with_columns(pl.col("grade").fill_null(0))
    return pairs.with_columns(
        pl.col("grade").replace_strict(ATTRACTIVENESS, return_dtype=pl.Float64)
        .alias("attractiveness"),
        pl.col("grade").replace_strict(SATISFACTION, return_dtype=pl.Float64)
        .alias("satisfaction"))


def make(seed: int, sessions: int, explore: float, depth: int) -> bytes:
    """The gzipped CSV (fixed gzip timestamp: the same inputs give the same bytes)."""
    with tempfile.TemporaryDirectory() as tmp:
        demo = Path(tmp)
        init_demo(demo)
        rankings = [asyncio.run(_top(demo / name, depth))
                    for name in ("endpoint.toml", "endpoint_tuned.toml")]
        rng = np.random.default_rng(seed)
        shown = pages(rankings, sessions=sessions, explore=explore, rng=rng)
        truth = parameters(shown, demo / "qrels.txt")
    log = simulate_clicks(shown, truth, model="sdbn", seed=seed)
    text = log.frame.select("session_id", "query_id", "doc_id", "position", "clicked") \
        .sort("session_id", "position").write_csv()
    return gzip.compress(text.encode(), mtime=0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--sessions", type=int, default=400,
                        help="sessions of the most popular query (default 400)")
    parser.add_argument("--explore", type=float, default=0.1,
                        help="share of sessions shown a shuffled page (default 0.1)")
    parser.add_argument("--depth", type=int, default=10, help="results per page (default 10)")
    parser.add_argument("--check", action="store_true",
                        help="only report whether the shipped file would change")
    args = parser.parse_args()
    data = make(args.seed, args.sessions, args.explore, args.depth)
    if args.check:
        same = TARGET.is_file() and gzip.decompress(TARGET.read_bytes()) == gzip.decompress(data)
        sys.stdout.write(f"{TARGET.name}: {'unchanged' if same else 'would change'}\n")
        return 0 if same else 1
    TARGET.write_bytes(data)
    sys.stdout.write(f"wrote {TARGET} ({len(data)} bytes)\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
