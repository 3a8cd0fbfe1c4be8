r"""Fuse several runs into one: score normalizations and fusion methods, as ranx offers them.

Every run is ranked once (score descending, ties by document id descending
or input order), optionally cut at ``depth``, its scores normalized per
query, and all runs are stacked into one table; each method then gives every
retrieved (query, document, run) row a contribution and aggregates them per
document with one polars group-by. A document a run did not retrieve
contributes nothing for that run, except where the method says otherwise
(BordaFuse, BayesFuse). The methods, their parameters, formulas and citations
are declared in :mod:`rankscope.fusion.methods`; the supervised ones
learn from qrels as :mod:`rankscope.fusion.train` says.

Normalizations (per query, over the documents of one run; the floors of
1e-9 on denominators follow ranx, so a list of equal scores maps to 0):

====================  ==========================================================
``min-max``           :math:`(s - \min) / \max(\max - \min, 10^{-9})`
``min-max-inverted``  :math:`(\max - s) / \max(\max - \min, 10^{-9})`, and the run
                      is re-ranked by it (lower raw scores first: distances)
``zscore``            :math:`(s - \mu) / \max(\sigma, 10^{-9})` (population sigma; ranx ``zmuv``)
``sum``               :math:`(s - \min) / \max(\sum s - n \min, 10^{-9})`
``max``               :math:`s / \max(\max, 10^{-9})`
``rank``              :math:`1 - (r - 1) / n` for the document at rank r of n
``borda``             :math:`1 - (r - 1) / N` over the N documents any run retrieved
                      for the query; a document the run did not retrieve is added
                      with :math:`1/2 - (n - 1) / (2N)`
``none``              the raw score
====================  ==========================================================

References
----------
.. [1] Fox & Shaw, "Combination of multiple searches", TREC-2 (1993).
.. [2] Cormack, Clarke & Büttcher, "Reciprocal rank fusion outperforms
   Condorcet and individual rank learning methods", SIGIR (2009).
.. [3] Bassani & Romelli, "ranx.fuse: A Python library for metasearch", CIKM (2022).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cmp_to_key
from typing import Any

import numpy as np
import polars as pl

from rankscope.data.overlap import check_query_sets
from rankscope.data.ranking_order import ranked
from rankscope.data.runs import load_runs
from rankscope.data.tables import OnDuplicate, Run, as_qrels, input_name
from rankscope.engine.ranking import Ties
from rankscope.errors import OptionError
from rankscope.fusion.methods import METHODS, FusionMethod, method_spec
from rankscope.fusion.train import BAYES_CUTS, SEG_BOUNDS, FusionModel, train_fusion

__all__ = ["GRID_NORMS", "METHODS", "NORMS", "fuse", "normalize"]

NORMS = ("min-max", "min-max-inverted", "zscore", "sum", "max", "rank", "borda", "none")
GRID_NORMS = ("min-max", "zscore", "sum", "max", "rank", "none")
"""The normalizations a grid search tries by default (those that keep each run's order)."""
_NORM_ALIASES = {"min_max": "min-max", "minmax": "min-max", "zmuv": "zscore",
                 "z-score": "zscore", "z_score": "zscore", None: "none",
                 "min_max_inverted": "min-max-inverted", "minmaxinverted": "min-max-inverted"}
_FLOOR = 1e-9
_MIN_ODD = float(np.log(0.001 / 0.999))  # BayesFuse's log-odds of a document a run lacks


def check_norm(norm: str | None) -> str:
    """The canonical name of a normalization (raises OptionError)."""
    name = _NORM_ALIASES.get(norm, norm) if norm is None or isinstance(norm, str) else norm
    if name not in NORMS:
        raise OptionError(f"normalization must be one of {', '.join(NORMS)}, not {norm!r}")
    return str(name)


def check_method(method: str) -> str:
    """The canonical name of a fusion method (raises OptionError)."""
    return method_spec(method).name


def _ranked(frame: pl.DataFrame, ties: Ties, depth: int | None,
            inverted: bool = False) -> pl.DataFrame:
    if inverted:  # distances: the lowest score ranks first
        frame = frame.with_columns(-pl.col("score"))
    return ranked(frame, ties, depth=depth)


def _norm_expr(norm: str) -> pl.Expr:
    s = pl.col("score")
    by = "query_id"
    lo, hi = s.min().over(by), s.max().over(by)
    n = pl.len().over(by).cast(pl.Float64)
    if norm in ("min-max", "min-max-inverted"):  # inverted: scores were negated when ranked
        return (s - lo) / pl.max_horizontal(hi - lo, pl.lit(_FLOOR))
    if norm == "zscore":
        return (s - s.mean().over(by)) / pl.max_horizontal(s.std(ddof=0).over(by), pl.lit(_FLOOR))
    if norm == "sum":
        return (s - lo) / pl.max_horizontal(s.sum().over(by) - n * lo, pl.lit(_FLOOR))
    if norm == "max":
        return s / pl.max_horizontal(hi, pl.lit(_FLOOR))
    if norm == "rank":
        return 1.0 - (pl.col("rank").cast(pl.Float64) - 1.0) / n
    return s  # none; borda is applied over all runs at once (_borda_norm)


def normalize(run: Any, norm: str = "min-max", *, ties: Ties = "trec",
              depth: int | None = None) -> Run:
    """A run with its scores normalized per query (see the module docstring).

    ``borda`` normalizes runs against each other, so it is only a ``fuse`` option.
    """
    norm = check_norm(norm)
    if norm == "borda":
        raise OptionError("the borda normalization needs all the runs: use fuse(..., norm='borda')")
    (table,), (name,) = load_runs([run])
    frame = _ranked(table.frame, ties, _check_depth(depth), norm == "min-max-inverted")
    frame = frame.with_columns(_norm_expr(norm).alias("score"))
    return Run(frame.select("query_id", "doc_id", "score"), name=name, source=table.source)


def _check_depth(depth: int | None) -> int | None:
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise OptionError(f"depth must be a whole number >= 1, not {depth!r}")
    return depth


def _weights(spec: FusionMethod, given: Sequence[float] | None, n_runs: int) -> list[float]:
    if given is None:
        return [1.0 / n_runs] * n_runs
    w = [float(x) for x in given]
    if len(w) != n_runs:
        raise OptionError(f"{len(w)} weights given for {n_runs} runs")
    if not all(np.isfinite(w)):
        raise OptionError(f"{spec.name}: weights must be finite numbers, not {list(given)!r}")
    return w


def _borda_norm(stacked: pl.DataFrame, n_runs: int) -> pl.DataFrame:
    """Borda scores over the query's candidates, adding the documents each run lacks."""
    cand = stacked.group_by("query_id").agg(pl.col("doc_id").unique().alias("doc_id"))
    n_cand = cand.with_columns(pl.col("doc_id").list.len().cast(pl.Float64).alias("_N"))
    runs = pl.DataFrame({"run": np.arange(n_runs, dtype=np.int64)})
    lengths = stacked.group_by(["query_id", "run"]).agg(pl.len().cast(pl.Float64).alias("m"))
    every = (cand.explode("doc_id").join(runs, how="cross")
             .join(stacked.select("query_id", "doc_id", "run"),
                   on=["query_id", "doc_id", "run"], how="anti")
             .join(lengths, on=["query_id", "run"], how="left")
             .with_columns(pl.col("m").fill_null(0.0)))
    present = stacked.join(n_cand.select("query_id", "_N"), on="query_id").with_columns(
        (1.0 - (pl.col("rank").cast(pl.Float64) - 1.0) / pl.col("_N")).alias("score"))
    absent = every.join(n_cand.select("query_id", "_N"), on="query_id").with_columns(
        (0.5 - (pl.col("m") - 1.0) / (2.0 * pl.col("_N"))).alias("score"),
        pl.lit(None, dtype=pl.Int64).alias("rank"))
    weights = stacked.select("run", "weight").unique()
    absent = absent.join(weights, on="run", how="left").with_columns(
        pl.col("weight").fill_null(1.0 / n_runs))
    cols = ["query_id", "doc_id", "score", "rank", "run", "weight"]
    return pl.concat([present.select(cols), absent.select(cols)], how="vertical_relaxed")


def fuse(
    runs: Any,
    *,
    method: str = "rrf",
    norm: str | None = "min-max",
    k: float | None = None,
    weights: Sequence[float] | None = None,
    gamma: float | None = None,
    sigma: float | None = None,
    phi: float | None = None,
    window: int | None = None,
    segments: int | None = None,
    qrels: Any = None,
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
        A method of :data:`~rankscope.fusion.methods.METHODS`, in ranx's
        spelling or rankscope's: ``rrf``, ``combsum``, ``combmnz``, ``combmax``,
        ``combmin``, ``combmed``, ``combanz``, ``wsum``, ``combgmnz``, ``wmnz``,
        ``mixed``, ``isr``, ``log_isr``, ``logn_isr``, ``bordafuse``,
        ``w_bordafuse``, ``condorcet``, ``w_condorcet``, ``rbc``, and the
        supervised ``mapfuse``, ``posfuse``, ``probfuse``, ``segfuse``,
        ``slidefuse``, ``bayesfuse`` (which need ``qrels``).
    norm : str, default "min-max"
        Score normalization before combining: ``min-max``, ``min-max-inverted``,
        ``zscore``, ``sum``, ``max``, ``rank``, ``borda`` or ``none``. Methods
        that read only ranks ignore it, except ``min-max-inverted`` (which
        reverses each run's order) and ``borda`` (whose added documents count
        where scores are read).
    k : float, optional
        RRF's constant (default 60).
    weights : sequence of float, optional
        One weight per run for the weighted methods (default: all 1/n).
    gamma, sigma, phi, window, segments : optional
        CombGMNZ's exponent (1), LogN ISR's sigma (0.01), RBC's persistence
        (0.8), SlideFuse's half-width (1), ProbFuse's number of segments (10).
    qrels : Qrels, path, DataFrame or dict, optional
        Training judgments of the supervised methods. Only the queries they hold
        are learned from: give training queries only, and judge the fused run on
        the others (:func:`~rankscope.fusion.optimize.optimize_fusion`
        does this with cross-validation folds).
    depth : int, optional
        Use only each run's first ``depth`` documents per query.
    ties : {"trec", "input", "docid_asc"}, default "trec"
        How score ties are ordered when ranks matter (as in evaluation).
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
    >>> rankscope.fuse([a, b], method="isr").to_dict()["q1"]["d2"]  # (1/2² + 1/1²) · 2 runs
    2.5
    """
    spec = method_spec(method)
    params = spec.bind({"k": k, "weights": weights, "gamma": gamma, "sigma": sigma,
                        "phi": phi, "window": window, "segments": segments})
    norm_name = check_norm(norm)
    tables, _ = load_runs(runs, on_duplicate=on_duplicate)
    if len(tables) < 2:
        raise OptionError(f"fusion needs at least two runs, got {len(tables)}")
    first = set(tables[0].frame.get_column("query_id").unique().to_list())
    for table in tables[1:]:
        check_query_sets(input_name(table), table.frame.get_column("query_id").unique().to_list(),
                         input_name(tables[0]), first, allow=allow_no_overlap)
    w = _weights(spec, params.get("weights"), len(tables))
    cut = _check_depth(depth)
    rankings = [_ranked(t.frame, ties, cut, norm_name == "min-max-inverted") for t in tables]
    model = None
    if spec.kind == "supervised":
        if qrels is None:
            raise OptionError(f"{spec.name} learns from qrels: fuse(..., qrels=TRAINING_QRELS)")
        model = train_fusion(spec.name, as_qrels(qrels), rankings,
                             segments=int(params.get("segments") or 10))
    elif qrels is not None:
        raise OptionError(f"{spec.name} does not learn from qrels; drop qrels=")
    stacked = pl.concat([
        f.with_columns(_norm_expr(norm_name).alias("score"), pl.lit(i, dtype=pl.Int64).alias("run"),
                       pl.lit(w[i]).alias("weight"))
        .select("query_id", "doc_id", "score", "rank", "run", "weight")
        for i, f in enumerate(rankings)
    ])
    if norm_name == "borda":
        stacked = _borda_norm(stacked, len(tables))
    fused = _combine(spec, stacked, params, w, model)
    # the fused run in rank order, as trec_eval orders it
    fused = ranked(fused, "trec").drop("rank")
    return Run(fused, name=name or spec.name, source=f"<fused {spec.name}>")


def _combine(spec: FusionMethod, stacked: pl.DataFrame, params: dict[str, Any],
             weights: list[float], model: FusionModel | None) -> pl.DataFrame:
    """Per-document fused scores: columns query_id, doc_id, score."""
    if spec.name in ("condorcet", "w_condorcet"):
        ballots = weights if spec.name == "w_condorcet" else [1.0] * len(weights)
        return _condorcet(stacked.filter(pl.col("rank").is_not_null()), np.array(ballots))
    if spec.kind != "score":  # ranks only: the borda norm's added rows are absent here
        stacked = stacked.filter(pl.col("rank").is_not_null())
    s, w, n = pl.col("score"), pl.col("weight"), pl.len().cast(pl.Float64)
    r = pl.col("rank").cast(pl.Float64)
    inv_sq = (1.0 / (r * r)).sum()
    simple: dict[str, pl.Expr] = {
        "rrf": (1.0 / (float(params.get("k", 60)) + r)).sum(),
        "combsum": s.sum(), "combmnz": s.sum() * n, "combmax": s.max(), "combmin": s.min(),
        "combmed": s.median(), "combanz": s.sum() / n, "wsum": (s * w).sum(),
        "combgmnz": s.sum() * n.pow(float(params.get("gamma", 1.0))),
        "wmnz": s.sum() * w.sum(), "mixed": (s * w).sum() * n.sqrt(),
        "isr": inv_sq * n, "log_isr": inv_sq * n.log(),
        "logn_isr": inv_sq * (n + float(params.get("sigma", 0.01))).log(),
        "rbc": ((1.0 - float(params.get("phi", 0.8)))
                * pl.lit(float(params.get("phi", 0.8))).pow(r - 1.0)).sum(),
    }
    if spec.name in simple:
        return _group(stacked, simple[spec.name])
    if spec.name in ("bordafuse", "w_bordafuse"):
        votes = np.array(weights if spec.name == "w_bordafuse" else [1.0] * len(weights))
        return _borda(stacked, votes)
    if model is None:  # pragma: no cover - fuse() trains every supervised method
        raise OptionError(f"{spec.name} needs a trained model")
    values = _learned(spec.name, stacked, model, params)
    fused = _group(stacked.with_columns(pl.Series("_v", values)), pl.col("_v").sum())
    if spec.name == "bayesfuse":
        # A run that did not retrieve d adds the log-odds of "not retrieved".
        present = stacked.group_by(["query_id", "doc_id"]).agg(pl.len().alias("_n"))
        fused = fused.join(present, on=["query_id", "doc_id"]).with_columns(
            pl.col("score") + (len(weights) - pl.col("_n")) * _MIN_ODD).drop("_n")
    return fused


def _group(stacked: pl.DataFrame, expr: pl.Expr) -> pl.DataFrame:
    return (stacked.group_by(["query_id", "doc_id"], maintain_order=True)
            .agg(expr.cast(pl.Float64).alias("score")))


def _lengths(stacked: pl.DataFrame) -> pl.DataFrame:
    """Per (query, run): m, the documents the run ranks; per query: N, the candidates."""
    per_run = stacked.group_by(["query_id", "run"]).agg(pl.len().cast(pl.Float64).alias("_m"))
    cand = stacked.group_by("query_id").agg(
        pl.col("doc_id").n_unique().cast(pl.Float64).alias("_N"))
    return per_run.join(cand, on="query_id")


def _borda(stacked: pl.DataFrame, vote: np.ndarray) -> pl.DataFrame:
    # sum_i w_i p_i(d) = sum_{i in R(d)} w_i (points - absent_i) + sum_i w_i absent_i
    sizes = _lengths(stacked)
    weight = pl.col("run").replace_strict(list(range(vote.size)), vote.tolist(),
                                          return_dtype=pl.Float64)
    rows = stacked.join(sizes, on=["query_id", "run"]).with_columns(
        (weight * (pl.col("_N") - pl.col("rank").cast(pl.Float64) + 1.0
                   - (pl.col("_N") - pl.col("_m") + 1.0) / 2.0)).alias("_v"))
    cand = sizes.group_by("query_id").agg(pl.col("_N").first())
    # Every run counts for every query: one lacking it ranks nothing (m = 0).
    base = (sizes.with_columns(weight.alias("_w")).group_by("query_id")
            .agg((pl.col("_w") * pl.col("_m")).sum().alias("_wm"))
            .join(cand, on="query_id")
        .with_columns((float(vote.sum()) * (pl.col("_N") + 1.0) / 2.0
                       - pl.col("_wm") / 2.0).alias("_base")))
    fused = _group(rows, pl.col("_v").sum())
    return fused.join(base.select("query_id", "_base"), on="query_id").with_columns(
        pl.col("score") + pl.col("_base")).drop("_base")


def _learned(method: str, stacked: pl.DataFrame, model: FusionModel,
             params: dict[str, Any]) -> np.ndarray:
    """Each row's contribution under a trained supervised method."""
    # Row order kept: the values line up with ``stacked``.
    sizes = (stacked.with_row_index("_row").join(_lengths(stacked), on=["query_id", "run"])
             .sort("_row"))
    run = sizes.get_column("run").to_numpy()
    pos = sizes.get_column("rank").to_numpy().astype(np.int64) - 1
    m = sizes.get_column("_m").to_numpy().astype(np.int64)
    score = sizes.get_column("score").to_numpy().astype(np.float64)
    out = np.zeros(run.size)
    for i, learned in enumerate(model.per_run):
        rows = np.flatnonzero(run == i)
        p = pos[rows]
        if method == "mapfuse":
            out[rows] = learned[0] / (p + 1.0)
        elif method == "posfuse":
            padded = np.concatenate((learned, np.zeros(max(int(p.max(initial=0)) + 1, 0))))
            out[rows] = padded[p]
        elif method == "slidefuse":
            half = int(params.get("window", 1))
            longest = int(m[rows].max(initial=0))
            padded = np.concatenate((learned, np.zeros(max(longest - learned.size, 0))))
            cum = np.concatenate(([0.0], np.cumsum(padded)))
            lo = np.maximum(p - half, 0)
            hi = np.minimum(p + half, m[rows] - 1)
            out[rows] = (cum[hi + 1] - cum[lo]) / (hi - lo + 1.0)
        elif method == "probfuse":
            size = -(-m[rows] // learned.size)
            seg = p // np.maximum(size, 1)
            out[rows] = learned[seg] / (seg + 1.0)
        elif method == "segfuse":
            seg = np.searchsorted(SEG_BOUNDS, p, side="right") - 1
            inside = seg < learned.size
            out[rows] = np.where(inside, learned[np.minimum(seg, learned.size - 1)], 0.0) * (
                score[rows] + 1.0)
        else:  # bayesfuse: beyond the last segment a rank counts as not retrieved
            inside = p < BAYES_CUTS[-1]
            out[rows] = np.where(inside, learned[np.minimum(p, learned.size - 1)], _MIN_ODD)
    return out


def _condorcet(stacked: pl.DataFrame, vote: np.ndarray) -> pl.DataFrame:
    """Sort each query's candidates by pairwise majority (a comparison sort, per query).

    Starting from document id descending, documents are sorted with "d before e
    when the runs ranking d above e outweigh those ranking e above d"; a run
    that ranks neither abstains, and an even vote keeps the starting order.
    """
    out_q: list[str] = []
    out_d: list[str] = []
    out_s: list[float] = []
    for part in stacked.partition_by("query_id", maintain_order=True):
        docs = sorted(set(part.get_column("doc_id").to_list()), reverse=True)
        index = {d: j for j, d in enumerate(docs)}
        pos = np.full((vote.size, len(docs)), np.inf)
        cols = np.fromiter((index[d] for d in part.get_column("doc_id")), dtype=np.int64)
        pos[part.get_column("run").to_numpy(), cols] = part.get_column("rank").to_numpy()
        # wins[x, y]: summed weight of the runs ranking x above y
        wins = np.einsum("r,rxy->xy", vote, (pos[:, :, None] < pos[:, None, :]).astype(float))

        def before(x: int, y: int, wins: np.ndarray = wins) -> int:
            return -1 if wins[x, y] > wins[y, x] else int(wins[x, y] < wins[y, x])

        order = sorted(range(len(docs)), key=cmp_to_key(before))
        qid = part.get_column("query_id")[0]
        for place, j in enumerate(order):
            out_q.append(qid)
            out_d.append(docs[j])
            out_s.append(float(len(docs) - place))
    return pl.DataFrame({"query_id": out_q, "doc_id": out_d, "score": out_s},
                        schema={"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64})
