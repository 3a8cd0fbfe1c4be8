"""Seeded click-log designs with known parameters, for the click-model tests.

Each query has ``n_docs`` documents with distinct true parameters. Sessions see
either the query's "production" ranking (a fixed order unrelated to relevance,
as a search engine that ranks badly) or, with probability ``explore``, a fresh
random order (the randomisation a team adds to learn from clicks). Position bias
then inflates the clicks of whatever production puts on top: a model that
ignores position is fooled, one that models it should not be.
"""

from __future__ import annotations

import numpy as np
import polars as pl

GAMMA = tuple(1.0 / r ** 0.9 for r in range(1, 9))
"""The examination probability of positions 1-8 in the PBM simulations."""


def design(*, n_queries: int = 20, n_docs: int = 8, sessions: int = 600, explore: float = 0.3,
           seed: int = 1) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(pages, truth): the results shown and each pair's true parameters.

    ``truth`` has ``attractiveness`` evenly spaced over [0.05, 0.9] per query
    (adjacent values 0.85 / 7 = 0.12 apart) and ``satisfaction`` rising with
    it over [0.2, 0.9] (a relevant result both attracts and satisfies), and
    ``relevance`` = attractiveness * satisfaction (SDBN's definition).
    """
    rng = np.random.default_rng(seed)
    truth_rows: list[tuple[str, str, float, float]] = []
    page_rows: list[tuple[str, str, str, int]] = []
    for q in range(n_queries):
        level = rng.permutation(np.linspace(0.0, 1.0, n_docs))
        docs = [f"q{q}d{i}" for i in range(n_docs)]
        truth_rows += [(f"q{q}", d, 0.05 + 0.85 * float(level[i]), 0.2 + 0.7 * float(level[i]))
                       for i, d in enumerate(docs)]
        production = rng.permutation(n_docs)
        for s in range(sessions):
            order = rng.permutation(n_docs) if rng.random() < explore else production
            page_rows += [(f"q{q}s{s}", f"q{q}", docs[i], pos)
                          for pos, i in enumerate(order, start=1)]
    truth = pl.DataFrame(truth_rows, schema=["query_id", "doc_id", "attractiveness",
                                             "satisfaction"], orient="row")
    truth = truth.with_columns(relevance=pl.col("attractiveness") * pl.col("satisfaction"))
    pages = pl.DataFrame(page_rows, schema=["session_id", "query_id", "doc_id", "position"],
                         orient="row")
    return pages, truth
