r"""How far to trust an LLM judge: its agreement with the team's human grades.

On the results both graded (the *overlap*), the humans' grades are reduced to
one per result by majority vote (results whose vote is tied are left out and
counted), likewise the LLM raters' if there are several, and compared:

- **Cohen's kappa** on the full scale, unweighted and weighted (linear,
  quadratic: a 2 against a 3 disagrees less than a 0 against a 3), and on the
  scale binarised at ``threshold`` (grade >= threshold is relevant), computed
  by :func:`rankscope.judgments.cohen_kappa` (statsmodels); the binarised
  figures are also given at the other usual threshold: relevant = grade >= 2
  is the one the TREC 2024 RAG track and UMBRELA report on the 0-3 scale,
  >= 1 the trec_eval default;
- the **confusion matrix** (human grade x LLM grade), exact agreement, and the
  **base rate**: the share of results each side calls relevant (an LLM that
  is more lenient than the humans shows here first);
- **Krippendorff's alpha** over every rater, human and LLM, one by one (it
  allows missing grades), with the Cohen's kappa of every pair of raters;
- a 95% percentile **bootstrap interval** of each kappa and of alpha,
  resampling the results (:mod:`rankscope.judgments.agreement_intervals`);
- given runs, the **system ranking** criterion TREC uses (Voorhees 2000;
  UMBRELA): evaluate each run once with the human grades and once with the
  LLM's and report Kendall's tau (tau-b, scipy) between the two orderings of
  the runs with each run's metric delta. Both sides are computed on *common
  ground*: the results both graded (a result one side never graded would
  otherwise count as non-relevant on that side only); the number of results
  each side has alone is reported. ``all_pairs=True`` uses every grade of
  each side instead, on the queries both judged.

References
----------
.. [1] Voorhees, "Variations in relevance judgments and the measurement of
   retrieval effectiveness", Information Processing & Management 36(5) (2000).
.. [2] Upadhyay et al., "A large-scale study of relevance assessments with
   large language models: an initial look", arXiv:2411.08275 (2024).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from rankscope.errors import DependencyError, InputError, OptionError
from rankscope.judgments.aggregate import majority_vote
from rankscope.judgments.agreement import cohen_kappa, krippendorff_alpha, two_raters
from rankscope.judgments.scales import BINARY, Scale, get_scale
from rankscope.judgments.table import Judgments, as_judgments

__all__ = ["BinaryAgreement", "JudgeAgreement", "SystemRanking", "judge_agreement"]

_KEYS = ["query_id", "doc_id"]


@dataclass(frozen=True)
class SystemRanking:
    """Runs ranked by a metric under human and under LLM judgments.

    Attributes
    ----------
    metric : str
        The metric's label.
    tau, p_value : float or None
        Kendall's tau-b between the two orderings and its two-sided p-value
        (None with fewer than two runs or no variation).
    runs : polars.DataFrame
        ``run, human, llm, delta`` (delta = llm - human), by human score descending.
    n_queries : int
        The queries both sets of judgments cover (the means are over them).
    common : bool
        Whether both sides were computed on the results both graded only.
    n_pairs : int
        The results both graded.
    human_only, llm_only : int
        The results only one side graded (left out when ``common``).
    """

    metric: str
    tau: float | None
    p_value: float | None
    runs: pl.DataFrame
    n_queries: int
    common: bool = True
    n_pairs: int = 0
    human_only: int = 0
    llm_only: int = 0


@dataclass(frozen=True)
class BinaryAgreement:
    """Agreement on relevant or not, relevant meaning grade >= ``threshold``."""

    threshold: float
    kappa: float | None
    interval: tuple[float | None, float | None]
    base_rate_human: float | None
    base_rate_llm: float | None


@dataclass(frozen=True)
class JudgeAgreement:
    """Agreement between human and LLM grades (see the module docs).

    ``binary`` holds the binarised kappa and base rates at ``threshold`` and at
    the other usual threshold (1 and 2 on a 0-3 scale); ``intervals`` the
    bootstrap interval of ``kappa``, ``kappa_linear``, ``kappa_quadratic``,
    ``kappa_binary`` and ``alpha`` (at ``confidence``, ``n_resamples`` resamples).
    """

    n_items: int
    n_human_only: int
    n_llm_only: int
    human_ties: int
    human_raters: list[str]
    llm_raters: list[str]
    scale: Scale | None
    threshold: float
    exact: float | None
    kappa: float | None
    kappa_linear: float | None
    kappa_quadratic: float | None
    kappa_binary: float | None
    base_rate_human: float | None
    base_rate_llm: float | None
    confusion: pl.DataFrame
    alpha: float | None
    alpha_level: str
    pairs: pl.DataFrame
    ranking: SystemRanking | None = None
    binary: tuple[BinaryAgreement, ...] = ()
    intervals: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    confidence: float = 0.95
    n_resamples: int = 0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        out: dict[str, Any] = {
            k: v for k, v in self.__dict__.items()
            if k not in ("confusion", "pairs", "ranking", "scale", "binary", "intervals")
        }
        out["scale"] = None if self.scale is None else self.scale.name
        out["binary"] = [
            {"threshold": b.threshold, "kappa": b.kappa, "interval": list(b.interval),
             "base_rate_human": b.base_rate_human, "base_rate_llm": b.base_rate_llm}
            for b in self.binary]
        out["intervals"] = {k: list(v) for k, v in self.intervals.items()}
        out["confusion"] = {
            str(row["human"]): {k: v for k, v in row.items() if k != "human"}
            for row in self.confusion.to_dicts()
        }
        out["pairs"] = self.pairs.to_dicts()
        if self.ranking is not None:
            r = self.ranking
            out["ranking"] = {
                "metric": r.metric, "kendall_tau": r.tau, "p_value": r.p_value,
                "n_queries": r.n_queries, "common": r.common, "n_pairs": r.n_pairs,
                "human_only": r.human_only, "llm_only": r.llm_only,
                "runs": r.runs.to_dicts(),
            }
        return out


def _pair_judgments(merged: pl.DataFrame, column: str, scale: Scale | None) -> Judgments:
    return two_raters(merged, "human", column, names=("human", "llm"), scale=scale,
                      source="<human vs llm>")


def _kappa(j: Judgments, weights: str | None, scale: Scale | None) -> float | None:
    table = cohen_kappa(j, weights=weights if weights else "none", scale=scale)
    return None if table.height == 0 else table.get_column("kappa")[0]


def _thresholds(threshold: float, sc: Scale | None) -> list[float]:
    """``threshold`` first, then 1 and 2 where the scale has grades on both sides of them."""
    out = [float(threshold)]
    for t in (1.0, 2.0):
        if t not in out and (sc is None or sc.min < t <= sc.max):
            out.append(t)
    return out


def judge_agreement(
    human: Any,
    llm: Any,
    *,
    scale: Scale | str | None = None,
    threshold: float = 1,
    runs: Sequence[Any] = (),
    metric: str = "nDCG@10",
    level: str = "auto",
    all_pairs: bool = False,
    n_resamples: int = 1000,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> JudgeAgreement:
    """Agreement between human and LLM grades, and (given runs) between system rankings.

    Parameters
    ----------
    human, llm : Judgments, Qrels, path or DataFrame
        The two sets of grades (a qrels file is one rater; an LLM grades file
        from :func:`rankscope.judge` has one rater per model).
    scale : Scale or str, optional
        The grading scale (default: the judgments' declared one, else graded
        when every grade is a whole number 0-3, else detail when 1-10).
    threshold : float, default 1
        The lowest relevant grade, for ``kappa_binary`` and the base rates
        (``binary`` adds the other usual threshold: 2 on a 0-3 scale, as the
        TREC RAG and UMBRELA reports use).
    runs : sequence of runs (Run, path, DataFrame, dict), optional
        Runs to rank under each set of judgments (two or more for a tau).
    metric : str, default "nDCG@10"
        The metric the runs are ranked by.
    level : {"auto", "nominal", "ordinal", "interval"}, default "auto"
        Krippendorff's level of measurement (auto: nominal on binary, ordinal otherwise).
    all_pairs : bool, default False
        Rank the runs with every grade of each side (on the queries both
        judged) rather than on the results both graded.
    n_resamples, seed, confidence : int, int, float
        The bootstrap of the intervals (0 resamples: none).

    Returns
    -------
    JudgeAgreement

    Raises
    ------
    InputError
        Human and LLM raters with the same name.
    """
    from rankscope.judgments.agreement_intervals import alpha_interval, kappa_interval

    sc = get_scale(scale)
    h = as_judgments(human, scale=sc)
    m = as_judgments(llm, scale=sc)
    sc = sc or h.scale or m.scale or _guess_scale(h, m)
    common = set(h.raters) & set(m.raters)
    if common:
        raise InputError(f"the same rater on both sides: {', '.join(sorted(common))}")
    h_major, ties = majority_vote(h)
    m_major, _ = majority_vote(m)
    merged = h_major.rename({"grade": "human"}).join(
        m_major.rename({"grade": "llm"}), on=_KEYS, how="inner"
    )
    n = merged.height
    pair = _pair_judgments(merged, "llm", sc)
    binary = []
    intervals: dict[str, tuple[float | None, float | None]] = {}

    def kappa_ci(j: Judgments, weights: str | None, on: Scale | None) -> tuple[
            float | None, float | None]:
        return kappa_interval(j, weights=weights, scale=on, n_resamples=n_resamples, seed=seed,
                              confidence=confidence)
    for t in _thresholds(threshold, sc):
        split = merged.with_columns(
            (pl.col("human") >= t).cast(pl.Float64).alias("human"),
            (pl.col("llm") >= t).cast(pl.Float64).alias("llm"),
        )
        pair_t = _pair_judgments(split, "llm", BINARY)
        interval = kappa_ci(pair_t, None, BINARY) if n and n_resamples else (None, None)
        binary.append(BinaryAgreement(
            threshold=t, kappa=_kappa(pair_t, None, BINARY) if n else None, interval=interval,
            base_rate_human=float(split["human"].mean()) if n else None,  # type: ignore[arg-type]
            base_rate_llm=float(split["llm"].mean()) if n else None,  # type: ignore[arg-type]
        ))
    categories = sorted(set(merged.get_column("human").to_list())
                        | set(merged.get_column("llm").to_list())
                        | set(sc.values if sc is not None else ()))
    confusion = _confusion(merged, categories)
    everyone = Judgments(
        Judgments.concat([h, m], scale=sc).frame.select(*_KEYS, "rater", "grade")
        .join(merged.select(_KEYS), on=_KEYS, how="semi"),
        source="<human and llm>", scale=sc,
    )
    if level == "auto":
        level = sc.default_level if sc is not None else "ordinal"
    if n and n_resamples:
        for name, weights in (("kappa", None), ("kappa_linear", "linear"),
                              ("kappa_quadratic", "quadratic")):
            intervals[name] = kappa_ci(pair, weights, sc)
        intervals["kappa_binary"] = binary[0].interval
        intervals["alpha"] = alpha_interval(everyone, level, scale=sc, n_resamples=n_resamples,
                                            seed=seed, confidence=confidence)
    ranking = _ranking(h, m, runs, metric, sc, None if all_pairs else merged.select(_KEYS),
                       (n, h_major.height - n, m_major.height - n)) if runs else None
    return JudgeAgreement(
        n_items=n,
        n_human_only=h_major.height - n,
        n_llm_only=m_major.height - n,
        human_ties=ties,
        human_raters=h.raters,
        llm_raters=m.raters,
        scale=sc,
        threshold=float(threshold),
        exact=float((merged["human"] == merged["llm"]).mean()) if n else None,  # type: ignore[arg-type]
        kappa=_kappa(pair, None, sc) if n else None,
        kappa_linear=_kappa(pair, "linear", sc) if n else None,
        kappa_quadratic=_kappa(pair, "quadratic", sc) if n else None,
        kappa_binary=binary[0].kappa,
        base_rate_human=binary[0].base_rate_human,
        base_rate_llm=binary[0].base_rate_llm,
        confusion=confusion,
        alpha=krippendorff_alpha(everyone, level, scale=sc) if n else None,
        alpha_level=level,
        pairs=cohen_kappa(everyone, scale=sc) if n else pl.DataFrame(),
        ranking=ranking,
        binary=tuple(binary),
        intervals=intervals,
        confidence=confidence,
        n_resamples=n_resamples if n else 0,
    )


def _guess_scale(*parts: Judgments) -> Scale | None:
    """graded when every grade is a whole number 0-3 (then detail 1-10), else None."""
    from rankscope.judgments.scales import DETAIL, GRADED

    grades = pl.concat([p.frame.get_column("grade").drop_nulls() for p in parts])
    for scale in (GRADED, DETAIL):
        if grades.len() and all(scale.contains(g) for g in grades.unique().to_list()):
            return scale
    return None


def _confusion(merged: pl.DataFrame, categories: list[float]) -> pl.DataFrame:
    """Counts: one row per human grade, one column per LLM grade."""
    names = [f"{c:g}" for c in categories]
    rows = []
    for c in categories:
        mine = merged.filter(pl.col("human") == c).get_column("llm")
        rows.append({"human": f"{c:g}",
                     **{name: int((mine == v).sum()) for name, v in zip(names, categories,
                                                                         strict=True)}})
    schema = {"human": pl.String, **dict.fromkeys(names, pl.Int64)}
    return pl.DataFrame(rows, schema=schema)


def _ranking(
    h: Judgments, m: Judgments, runs: Sequence[Any], metric: str, sc: Scale | None,
    common: pl.DataFrame | None, counts: tuple[int, int, int],
) -> SystemRanking:
    from rankscope.data.tables import as_run
    from rankscope.engine.evaluate import evaluate, plan_metrics

    try:
        from scipy.stats import kendalltau
    except ImportError:
        raise DependencyError("scipy", "stats", "Kendall's tau between system rankings") \
            from None
    from rankscope.data.tables import Qrels

    # an unknown name fails before any work; the name is read here only, not per run and side
    plan = plan_metrics([metric])
    human_q = h.aggregate(scale=sc)
    llm_q = m.aggregate(scale=sc)
    if common is not None:  # the results both graded, and nothing else
        human_q = Qrels(human_q.frame.join(common, on=_KEYS, how="semi"),
                        source=human_q.source)
        llm_q = Qrels(llm_q.frame.join(common, on=_KEYS, how="semi"), source=llm_q.source)
    both = sorted(set(human_q.query_ids) & set(llm_q.query_ids))
    if not both:
        raise OptionError("the human and LLM judgments share no query: no system ranking")
    keep = pl.col("query_id").is_in(both)
    human_q = Qrels(human_q.frame.filter(keep), source=human_q.source)
    llm_q = Qrels(llm_q.frame.filter(keep), source=llm_q.source)
    rows: list[dict[str, Any]] = []
    for i, run in enumerate(runs):
        run_t = as_run(run)
        name = run_t.name or f"run{i + 1}"
        if any(r["run"] == name for r in rows):  # two runs of one name stay apart
            name = f"{name} ({i + 1})"
        a = evaluate(human_q, run_t, plan)[metric]
        b = evaluate(llm_q, run_t, plan)[metric]
        rows.append({"run": name, "human": a, "llm": b,
                     "delta": None if a is None or b is None else b - a})
    frame = pl.DataFrame(rows, schema={"run": pl.String, "human": pl.Float64,
                                       "llm": pl.Float64, "delta": pl.Float64})
    frame = frame.sort("human", descending=True, nulls_last=True)
    tau = p = None
    complete = frame.drop_nulls(["human", "llm"])
    if complete.height >= 2:
        res = kendalltau(complete["human"].to_numpy(), complete["llm"].to_numpy())
        tau_v, p_v = float(res.statistic), float(res.pvalue)
        tau = None if tau_v != tau_v else tau_v
        p = None if p_v != p_v else p_v
    n_pairs, human_only, llm_only = counts
    return SystemRanking(metric=metric, tau=tau, p_value=p, runs=frame, n_queries=len(both),
                         common=common is not None, n_pairs=n_pairs, human_only=human_only,
                         llm_only=llm_only)
