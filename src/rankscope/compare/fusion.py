r"""Fuse several runs into one: score normalizations and fusion methods, as ranx offers them.

Every run is ranked once (score descending, ties by document id descending
or input order), optionally cut at ``depth``, its scores normalized per
query, and all runs are stacked into one table; each method is then one
polars group-by over (query, document). A document a run did not retrieve
contributes nothing for that run.

Normalizations (per query, over the documents of one run; the floors of
1e-9 on denominators follow ranx, so a list of equal scores maps to 0):

============  ==========================================================
``min-max``   :math:`(s - \min) / \max(\max - \min, 10^{-9})`
``zscore``    :math:`(s - \mu) / \max(\sigma, 10^{-9})` (population sigma; ranx ``zmuv``)
``sum``       :math:`(s - \min) / \max(\sum s - n \min, 10^{-9})`
``max``       :math:`s / \max(\max, 10^{-9})`
``rank``      :math:`1 - (r - 1) / n` for the document at rank r of n
``none``      the raw score
============  ==========================================================

Methods, for document d with normalized scores :math:`s_i(d)` in the runs
:math:`R(d)` that retrieved it (ranks :math:`r_i(d)`):

============  ==========================================================
``rrf``       :math:`\sum_{i \in R(d)} 1 / (k + r_i(d))`, k = 60 (Cormack et al. 2009)
``combsum``   :math:`\sum_{i \in R(d)} s_i(d)` (Fox & Shaw 1993)
``combmnz``   :math:`|R(d)| \sum_{i \in R(d)} s_i(d)`
``combmax``   :math:`\max_{i \in R(d)} s_i(d)`
``combmin``   :math:`\min_{i \in R(d)} s_i(d)`
``combmed``   the median of :math:`s_i(d), i \in R(d)`
``combanz``   :math:`\frac{1}{|R(d)|} \sum_{i \in R(d)} s_i(d)`
``wsum``      :math:`\sum_{i \in R(d)} w_i s_i(d)` (weights default to 1/n)
============  ==========================================================

References
----------
.. [1] Fox & Shaw, "Combination of multiple searches", TREC-2 (1993).
.. [2] Cormack, Clarke & Büttcher, "Reciprocal rank fusion outperforms
   Condorcet and individual rank learning methods", SIGIR (2009).
.. [3] Bassani & Romelli, "ranx.fuse: A Python library for metasearch", CIKM (2022).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from rankscope.compare.runs import load_runs
from rankscope.data.formats import input_name
from rankscope.data.overlap import check_query_sets
from rankscope.data.tables import OnDuplicate, Run
from rankscope.engine.ranking import Ties
from rankscope.errors import OptionError

__all__ = ["METHODS", "NORMS", "fuse", "normalize"]

NORMS = ("min-max", "zscore", "sum", "max", "rank", "none")
METHODS = ("rrf", "combsum", "combmnz", "combmax", "combmin", "combmed", "combanz", "wsum")
_NORM_ALIASES = {"min_max": "min-max", "minmax": "min-max", "zmuv": "zscore",
                 "z-score": "zscore", "z_score": "zscore", None: "none"}
_FLOOR = 1e-9


def check_norm(norm: str | None) -> str:
    """The canonical name of a normalization (raises OptionError)."""
    name = _NORM_ALIASES.get(norm, norm) if norm is None or isinstance(norm, str) else norm
    if name not in NORMS:
        raise OptionError(f"normalization must be one of {', '.join(NORMS)}, not {norm!r}")
    return str(name)


def check_method(method: str) -> str:
    """The canonical name of a fusion method (raises OptionError)."""
    name = method.lower().replace("_", "").replace("-", "") if isinstance(method, str) else ""
    if name in ("weightedsum", "wsum"):
        name = "wsum"
    elif name in ("sum", "mnz", "max", "min", "med", "anz"):  # ranx's names
        name = "comb" + name
    if name not in METHODS:
        raise OptionError(f"fusion method must be one of {', '.join(METHODS)}, not {method!r}")
    return name


def _ranked(frame: pl.DataFrame, ties: Ties, depth: int | None) -> pl.DataFrame:
    if ties == "trec":
        frame = frame.sort(["query_id", "score", "doc_id"], descending=[False, True, True])
    elif ties == "input":
        frame = (frame.with_row_index("_order")
                 .sort(["query_id", "score", "_order"], descending=[False, True, False])
                 .drop("_order"))
    else:
        raise OptionError(f"ties must be 'trec' or 'input', not {ties!r}")
    frame = frame.with_columns((pl.int_range(pl.len()).over("query_id") + 1).alias("rank"))
    if depth is not None:
        frame = frame.filter(pl.col("rank") <= depth)
    return frame


def _norm_expr(norm: str) -> pl.Expr:
    s = pl.col("score")
    by = "query_id"
    lo, hi = s.min().over(by), s.max().over(by)
    n = pl.len().over(by).cast(pl.Float64)
    if norm == "min-max":
        return (s - lo) / pl.max_horizontal(hi - lo, pl.lit(_FLOOR))
    if norm == "zscore":
        return (s - s.mean().over(by)) / pl.max_horizontal(s.std(ddof=0).over(by), pl.lit(_FLOOR))
    if norm == "sum":
        return (s - lo) / pl.max_horizontal(s.sum().over(by) - n * lo, pl.lit(_FLOOR))
    if norm == "max":
        return s / pl.max_horizontal(hi, pl.lit(_FLOOR))
    if norm == "rank":
        return 1.0 - (pl.col("rank").cast(pl.Float64) - 1.0) / n
    return s


def normalize(run: Any, norm: str = "min-max", *, ties: Ties = "trec",
              depth: int | None = None) -> Run:
    """A run with its scores normalized per query (see the module docstring)."""
    (table,), (name,) = load_runs([run])
    frame = _ranked(table.frame, ties, _check_depth(depth))
    frame = frame.with_columns(_norm_expr(check_norm(norm)).alias("score"))
    return Run(frame.select("query_id", "doc_id", "score"), name=name, source=table.source)


def _check_depth(depth: int | None) -> int | None:
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise OptionError(f"depth must be a whole number >= 1, not {depth!r}")
    return depth


def fuse(
    runs: Any,
    *,
    method: str = "rrf",
    norm: str | None = "min-max",
    k: float = 60,
    weights: Sequence[float] | None = None,
    depth: int | None = None,
    ties: Ties = "trec",
    on_duplicate: OnDuplicate = "error",
    name: str | None = None,
    allow_no_overlap: bool = False,
) -> Run:
    """Fuse two or more runs into one.

    Parameters
    ----------
    runs : sequence of runs, or mapping name -> run
        The runs (:class:`~rankscope.Run`, paths, DataFrames, dicts).
    method : str, default "rrf"
        ``rrf``, ``combsum``, ``combmnz``, ``combmax``, ``combmin``,
        ``combmed``, ``combanz`` or ``wsum`` (weighted sum).
    norm : str, default "min-max"
        Score normalization before combining: ``min-max``, ``zscore``,
        ``sum``, ``max``, ``rank`` or ``none`` (RRF uses ranks only, so it
        ignores it).
    k : float, default 60
        RRF's constant.
    weights : sequence of float, optional
        One weight per run for ``wsum`` (default: all 1/n).
    depth : int, optional
        Use only each run's first ``depth`` documents per query.
    ties : {"trec", "input"}, default "trec"
        How score ties are ordered when ranks matter (RRF, ``rank`` norm, depth).
    on_duplicate : {"error", "first", "max"}, default "error"
        A document twice in one ranking, for runs read here.
    name : str, optional
        Name (run tag) of the fused run (default: the method).
    allow_no_overlap : bool, default False
        Fuse even when a run shares no query with the first run (by default
        :class:`~rankscope.errors.NoOverlapError`: the ids likely differ, e.g.
        ``Q1`` vs ``q1``); queries in some runs only give a
        :class:`~rankscope.errors.RankscopeWarning`.

    Returns
    -------
    Run
        Every document any run retrieved for a query, with its fused score.

    Examples
    --------
    >>> import rankscope
    >>> a = {"q1": {"d1": 3.0, "d2": 2.0}}
    >>> b = {"q1": {"d2": 9.0, "d3": 1.0}}
    >>> fused = rankscope.fuse([a, b], method="rrf", k=60)
    >>> fused.to_dict()["q1"]["d2"] == 1 / 62 + 1 / 61
    True
    """
    method = check_method(method)
    norm_name = "none" if method == "rrf" else check_norm(norm)
    if not isinstance(k, int | float) or isinstance(k, bool) or k < 0:
        raise OptionError(f"RRF's k must be a number >= 0, not {k!r}")
    tables, _ = load_runs(runs, on_duplicate=on_duplicate)
    if len(tables) < 2:
        raise OptionError(f"fusion needs at least two runs, got {len(tables)}")
    first = set(tables[0].frame.get_column("query_id").unique().to_list())
    for table in tables[1:]:
        check_query_sets(input_name(table), table.frame.get_column("query_id").unique().to_list(),
                         input_name(tables[0]), first, allow=allow_no_overlap)
    if weights is not None and method != "wsum":
        raise OptionError(f"weights apply to method 'wsum', not {method!r}")
    if method == "wsum":
        w = [1.0 / len(tables)] * len(tables) if weights is None else [float(x) for x in weights]
        if len(w) != len(tables):
            raise OptionError(f"{len(w)} weights given for {len(tables)} runs")
    else:
        w = [1.0] * len(tables)
    cut = _check_depth(depth)
    stacked = pl.concat(
        [
            _ranked(t.frame, ties, cut)
            .with_columns(_norm_expr(norm_name).alias("score"), pl.lit(w[i]).alias("weight"))
            for i, t in enumerate(tables)
        ]
    )
    s = pl.col("score")
    combined = {
        "rrf": (1.0 / (float(k) + pl.col("rank").cast(pl.Float64))).sum(),
        "combsum": s.sum(),
        "combmnz": s.sum() * pl.len(),
        "combmax": s.max(),
        "combmin": s.min(),
        "combmed": s.median(),
        "combanz": s.sum() / pl.len(),
        "wsum": (s * pl.col("weight")).sum(),
    }[method]
    fused = (
        stacked.group_by(["query_id", "doc_id"], maintain_order=True)
        .agg(combined.cast(pl.Float64).alias("score"))
        .sort(["query_id", "score", "doc_id"], descending=[False, True, True])
    )
    return Run(fused, name=name or method, source=f"<fused {method}>")
