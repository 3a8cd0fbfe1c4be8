r"""Click logs simulated from a click model with known parameters (seeded).

Given the result pages shown and each (query, document)'s true
attractiveness (and, for SDBN, satisfaction), :func:`simulate_clicks` draws
the clicks the model predicts. A log simulated this way has known answers:
the tests fit the models on it and check that they recover the order of
the relevances and the position prior, and the demo collection's click log
was made with it (``scripts/make_demo_clicks.py``).

- ``pbm``: each result is clicked independently with probability
  :math:`\alpha_{qd}\gamma_r` (Craswell et al. 2008);
- ``sdbn``: the user reads from the top, clicks with probability
  :math:`a_{qd}` and, after a click, stops satisfied with probability
  :math:`s_{qd}`, else goes on (Chapelle and Zhang 2009, with
  :math:`\gamma = 1`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from rankscope.errors import InputError, OptionError
from rankscope.judgments.clicks.log import ClickLog

__all__ = ["simulate_clicks"]


def simulate_clicks(pages: pl.DataFrame, parameters: pl.DataFrame, *, model: str = "pbm",
                    examination: Sequence[float] | None = None, seed: int = 0) -> ClickLog:
    """Draw clicks on ``pages`` from a click model with the given parameters.

    Parameters
    ----------
    pages : polars.DataFrame
        The results shown: ``session_id, query_id, doc_id, position``.
    parameters : polars.DataFrame
        ``query_id, doc_id, attractiveness`` (and ``satisfaction`` for
        ``sdbn``), probabilities, for every pair shown.
    model : {"pbm", "sdbn"}
        The click model drawn from (see the module docstring).
    examination : sequence of float, optional
        PBM's probability that position 1, 2, ... is examined.
    seed : int
        The random seed: the same inputs and seed give the same log.

    Returns
    -------
    ClickLog
        ``pages`` with their ``clicked`` column.

    Examples
    --------
    >>> import polars as pl
    >>> pages = pl.DataFrame({"session_id": ["s1", "s1", "s2", "s2"], "query_id": ["q"] * 4,
    ...                       "doc_id": ["a", "b", "b", "a"], "position": [1, 2, 1, 2]})
    >>> truth = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"],
    ...                       "attractiveness": [1.0, 0.0]})
    >>> log = simulate_clicks(pages, truth, examination=[1.0, 1.0], seed=7)
    >>> log.frame.filter(pl.col("clicked") == 1).select("session_id", "doc_id").rows()
    [('s1', 'a'), ('s2', 'a')]
    """
    if model not in ("pbm", "sdbn"):
        raise OptionError(f"unknown click model to simulate {model!r}; choose pbm or sdbn")
    wanted = ["attractiveness"] + (["satisfaction"] if model == "sdbn" else [])
    missing = [c for c in ["query_id", "doc_id", *wanted] if c not in parameters.columns]
    if missing:
        raise InputError(f"the parameters need the columns {', '.join(missing)}")
    shown = pages.select("session_id", "query_id", "doc_id", pl.col("position").cast(pl.Int64))
    shown = shown.sort("session_id", "query_id", "position")
    joined = shown.join(parameters.select("query_id", "doc_id", *wanted),
                        on=["query_id", "doc_id"], how="left", maintain_order="left")
    lacking = joined.filter(pl.col("attractiveness").is_null())
    if lacking.height:
        q, d = lacking.row(0)[1:3]
        raise InputError(f"no parameters for query {q!r}, document {d!r} (and "
                         f"{lacking.height - 1} more pairs)")
    rng = np.random.default_rng(seed)
    attractive = rng.random(joined.height) < joined.get_column("attractiveness").to_numpy()
    if model == "pbm":
        if examination is None:
            raise OptionError("the pbm model needs the examination probability per position")
        gamma = np.asarray(examination, dtype=np.float64)
        rank = joined.get_column("position").to_numpy()
        if rank.max() > gamma.size:
            raise OptionError(f"examination gives {gamma.size} positions; the pages go to "
                              f"position {rank.max()}")
        clicked = attractive & (rng.random(joined.height) < gamma[rank - 1])
    else:
        satisfied = rng.random(joined.height) < joined.get_column("satisfaction").to_numpy()
        stops = (attractive & satisfied).astype(np.int64)
        page = joined.select(pl.struct("session_id", "query_id").rle_id()).to_series()
        # a result is examined when no earlier result of its page stopped the user
        before = pl.Series(stops).cum_sum() - pl.Series(stops)
        at_start = pl.DataFrame({"page": page, "before": before}).select(
            pl.col("before").first().over("page")).to_series()
        examined = (before - at_start).to_numpy() == 0
        clicked = attractive & examined
    frame = joined.select("session_id", "query_id", "doc_id", "position").with_columns(
        pl.Series("clicked", clicked.astype(np.int8)))
    return ClickLog(frame, source=f"<simulated {model}, seed {seed}>")
