r"""Agreement between raters: how much to trust the grades before the metrics.

An *item* is one (query, document); only non-null grades count.

- **Percent agreement**: agreeing rater pairs / all rater pairs, pooled over
  items (an item with grades 1, 1, 0 has 3 pairs, 1 agreeing).
- **Cohen's kappa** per pair of raters over the items both graded
  (statsmodels' ``cohens_kappa``); weighted (quadratic by default) on
  ordinal scales, so that 2 vs 3 disagrees less than 0 vs 3. The mean over
  pairs is Light's kappa.
- **Fleiss' kappa** (statsmodels' ``fleiss_kappa``) needs the same number of
  grades per item: it is computed over the items with the most common number
  of grades (reported as ``fleiss_items`` / ``fleiss_raters``); Krippendorff's
  alpha is the coefficient that allows missing grades.
- **Krippendorff's alpha** (the ``krippendorff`` package), nominal, ordinal
  and interval, missing grades allowed; the scale's grades are the value
  domain.

The grades are laid out once as a units x raters matrix and a units x
categories count table; the libraries then work on slices of them (one per
query with ``by_query``).
- **Tie rate** of majority voting (see :func:`~rankscope.judgments.tie_rate`).

A coefficient that is undefined (one category only, no item graded twice)
is None.

References
----------
.. [1] Cohen, "A coefficient of agreement for nominal scales", Educational and
   Psychological Measurement 20(1) (1960); "Weighted kappa", Psychological
   Bulletin 70(4) (1968).
.. [2] Fleiss, "Measuring nominal scale agreement among many raters",
   Psychological Bulletin 76(5) (1971).
.. [3] Krippendorff, "Computing Krippendorff's Alpha-Reliability" (2011).
.. [4] Light, "Measures of response agreement for qualitative data",
   Psychological Bulletin 76(5) (1971).
"""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

from rankscope import display
from rankscope.errors import DependencyError, OptionError
from rankscope.judgments.aggregate import tie_rate, tie_rate_by_query
from rankscope.judgments.scales import Scale, get_scale
from rankscope.judgments.table import Judgments

__all__ = [
    "LEVELS",
    "Agreement",
    "agreement",
    "cohen_kappa",
    "fleiss_kappa",
    "krippendorff_alpha",
    "percent_agreement",
    "two_raters",
]

LEVELS = ("nominal", "ordinal", "interval")
_KEYS = ["query_id", "doc_id"]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class _Ratings:
    """Every non-null grade as a dense units x raters matrix, built once.

    Units (results) are sorted by query; ``counts`` holds, per unit, how many
    raters gave each category (the categories are the scale's grades, or the
    grades seen when the scale is unknown or not integral).
    """

    query_ids: list[str]
    query_offsets: IntArray  # units of query q: query_offsets[q]:query_offsets[q + 1]
    raters: list[str]
    grades: FloatArray       # (units, raters), NaN = no grade
    cats: IntArray           # (units, raters), category index, -1 = no grade
    categories: FloatArray   # (categories,) ascending
    counts: IntArray         # (units, categories)

    def units(self, q: int | None) -> slice:
        if q is None:
            return slice(0, self.grades.shape[0])
        return slice(int(self.query_offsets[q]), int(self.query_offsets[q + 1]))


def two_raters(
    frame: pl.DataFrame, first: str, second: str, *, names: tuple[str, str],
    scale: Scale | str | None = None, source: str | None = None,
) -> Judgments:
    """Two grade columns of the same results as two raters' judgments.

    The one pairing of a rater against a reference (a grader against the
    consensus, the LLM against the human vote): ``frame`` holds ``query_id``,
    ``doc_id`` and the two grade columns (a join of the two sides on the
    results both graded); the judgments have a rater per column, named by
    ``names``, ready for :func:`cohen_kappa` or :func:`krippendorff_alpha`.

    Examples
    --------
    >>> both = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"],
    ...                      "mine": [1.0, 0.0], "ref": [1.0, 1.0]})
    >>> two_raters(both, "mine", "ref", names=("grader", "consensus")).frame.height
    4
    """
    stacked = pl.concat([
        frame.select(*_KEYS, pl.lit(names[0]).alias("rater"),
                     pl.col(first).cast(pl.Float64).alias("grade")),
        frame.select(*_KEYS, pl.lit(names[1]).alias("rater"),
                     pl.col(second).cast(pl.Float64).alias("grade")),
    ])
    return Judgments(stacked, source=source or f"<{names[0]} vs {names[1]}>", scale=scale)


def _ratings(judgments: Judgments, scale: Scale | None) -> _Ratings:
    graded = judgments.frame.filter(pl.col("grade").is_not_null())
    units = graded.select(_KEYS).unique().sort(_KEYS).with_row_index("_unit")
    raters: list[str] = graded.get_column("rater").unique().sort().to_list()
    rows = graded.join(units, on=_KEYS).join(
        pl.DataFrame({"rater": raters, "_rater": np.arange(len(raters), dtype=np.int64)},
                     schema={"rater": pl.String, "_rater": pl.Int64}),
        on="rater",
    )
    values = rows.get_column("grade").to_numpy()
    seen = np.unique(values)
    if scale is not None and scale.values and np.isin(seen, scale.values).all():
        categories = np.asarray(scale.values, dtype=np.float64)
    else:
        categories = seen.astype(np.float64)
    n_units, n_raters = units.height, len(raters)
    u = rows.get_column("_unit").to_numpy().astype(np.int64)
    r = rows.get_column("_rater").to_numpy()
    c = np.searchsorted(categories, values)
    grades = np.full((n_units, n_raters), np.nan)
    grades[u, r] = values
    cats = np.full((n_units, n_raters), -1, dtype=np.int64)
    cats[u, r] = c
    counts = np.zeros((n_units, max(len(categories), 1)), dtype=np.int64)
    np.add.at(counts, (u, c), 1)
    unit_queries = units.get_column("query_id")
    query_ids: list[str] = unit_queries.unique(maintain_order=True).to_list()
    sizes = unit_queries.value_counts(sort=False).sort("query_id").get_column("count")
    offsets = np.zeros(len(query_ids) + 1, dtype=np.int64)
    np.cumsum(sizes.to_numpy(), out=offsets[1:])
    return _Ratings(query_ids, offsets, raters, grades, cats, categories, counts)


def _clean(value: Any) -> float | None:
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else value


def _scale(j: Judgments, scale: Scale | str | None) -> Scale | None:
    return get_scale(scale) if scale is not None else j.scale


def _percent(data: _Ratings, q: int | None) -> float | None:
    counts = data.counts[data.units(q)].astype(np.float64)
    n = counts.sum(axis=1)
    pairs = float((n * (n - 1) / 2).sum())
    agree = float((counts * (counts - 1) / 2).sum())
    return agree / pairs if pairs else None


def percent_agreement(judgments: Judgments) -> float | None:
    """Agreeing rater pairs / rater pairs, pooled over items (None: no item graded twice).

    Examples
    --------
    Grades (1, 1, 0) on one item and (2, 2) on another: pairs 3 + 1 = 4,
    agreeing 1 + 1 = 2, so 0.5.
    """
    return _percent(_ratings(judgments, None), None)


def _statsmodels(purpose: str) -> Any:
    try:
        from statsmodels.stats import inter_rater
    except ImportError:
        raise DependencyError("statsmodels", "agreement", purpose) from None
    return inter_rater


def _weights(weights: str | None, scale: Scale | None) -> str | None:
    if weights == "auto":
        return "quadratic" if scale is not None and not scale.is_binary else None
    if weights in (None, "none"):
        return None
    if weights not in ("linear", "quadratic"):
        raise OptionError(f"weights must be auto, none, linear or quadratic, not {weights!r}")
    return weights


def _quiet(fn: Any, *args: Any, **kwargs: Any) -> float | None:
    """Call a library coefficient; 0/0 (one category only) becomes None."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return _clean(fn(*args, **kwargs))


def _table_kappa(table: FloatArray, categories: FloatArray, weights: str | None) -> float | None:
    """Cohen's kappa of a categories x categories count table (statsmodels)."""
    inter_rater = _statsmodels("Cohen's kappa")
    if weights is None:
        return _quiet(inter_rater.cohens_kappa, table, return_results=False)
    return _quiet(inter_rater.cohens_kappa, table, weights=categories, wt=weights,
                  return_results=False)


def _pair_table(a: IntArray, b: IntArray, k: int) -> FloatArray:
    """The k x k table of two raters' category indices (both graded)."""
    return np.bincount(a * k + b, minlength=k * k).reshape(k, k).astype(np.float64)


def _cohen(data: _Ratings, q: int | None, weights: str | None) -> pl.DataFrame:
    cats = data.cats[data.units(q)]
    k = len(data.categories)
    rows: list[tuple[str, str, int, float | None]] = []
    for a, b in itertools.combinations(range(len(data.raters)), 2):
        both = (cats[:, a] >= 0) & (cats[:, b] >= 0)
        n = int(both.sum())
        if n == 0:
            continue
        table = _pair_table(cats[both, a], cats[both, b], k)
        rows.append((data.raters[a], data.raters[b], n,
                     _table_kappa(table, data.categories, weights)))
    return pl.DataFrame(
        rows, schema={"rater_a": pl.String, "rater_b": pl.String, "n_items": pl.Int64,
                      "kappa": pl.Float64}, orient="row",
    )


def cohen_kappa(
    judgments: Judgments, *, weights: str | None = "auto", scale: Scale | str | None = None
) -> pl.DataFrame:
    """Cohen's kappa for every pair of raters who graded an item in common.

    Parameters
    ----------
    judgments : Judgments
        The raters' grades.
    weights : {"auto", None, "linear", "quadratic"}, default "auto"
        Disagreement weights; ``auto``: quadratic on ordinal scales, none on
        binary (and when no scale is declared).
    scale : Scale or str, optional
        The scale (default: the judgments'); its grades are the categories
        and their differences the distances the weights use.

    Returns
    -------
    polars.DataFrame
        ``rater_a, rater_b, n_items, kappa`` (kappa null when undefined);
        computed with statsmodels' ``cohens_kappa``.
    """
    sc = _scale(judgments, scale)
    return _cohen(_ratings(judgments, sc), None, _weights(weights, sc))


@dataclass(frozen=True)
class FleissKappa:
    """Fleiss' kappa and the items it was computed on."""

    value: float | None
    n_items: int
    n_raters: int


def _fleiss(data: _Ratings, q: int | None) -> FleissKappa:
    inter_rater = _statsmodels("Fleiss' kappa")
    counts = data.counts[data.units(q)]
    n = counts.sum(axis=1)
    sizes, freq = np.unique(n[n >= 2], return_counts=True)
    if sizes.size == 0:
        return FleissKappa(None, 0, 0)
    # The most common number of grades per item; the larger one on a tie.
    size = int(sizes[freq == freq.max()].max())
    table = counts[n == size]
    return FleissKappa(_quiet(inter_rater.fleiss_kappa, table, method="fleiss"),
                       int(table.shape[0]), size)


def fleiss_kappa(judgments: Judgments, *, scale: Scale | str | None = None) -> FleissKappa:
    """Fleiss' kappa over the items with the most common number of grades (>= 2).

    Uses statsmodels' ``fleiss_kappa`` on the item x category count table; the
    categories are the scale's grades (or the grades seen).
    """
    return _fleiss(_ratings(judgments, _scale(judgments, scale)), None)


def _alpha(data: _Ratings, q: int | None, level: str) -> float | None:
    try:
        import krippendorff
    except ImportError:
        raise DependencyError("krippendorff", "agreement", "Krippendorff's alpha") from None
    counts = data.counts[data.units(q)]
    if counts.shape[0] == 0:
        return None
    try:
        return _quiet(krippendorff.alpha, value_counts=counts, value_domain=data.categories,
                      level_of_measurement=level)
    except ValueError:  # one value only, or no unit graded twice: undefined
        return None


def krippendorff_alpha(
    judgments: Judgments, level: str = "auto", *, scale: Scale | str | None = None
) -> float | None:
    """Krippendorff's alpha (missing grades allowed) with the ``krippendorff`` package.

    Parameters
    ----------
    judgments : Judgments
        The raters' grades; each (query, document) is a unit.
    level : {"auto", "nominal", "ordinal", "interval"}, default "auto"
        Level of measurement; ``auto``: nominal on binary, ordinal otherwise.
    scale : Scale or str, optional
        The scale (default: the judgments'); its grades are the value domain.
    """
    sc = _scale(judgments, scale)
    if level == "auto":
        level = sc.default_level if sc is not None else "nominal"
    if level not in LEVELS:
        raise OptionError(f"level must be one of auto, {', '.join(LEVELS)}, not {level!r}")
    return _alpha(_ratings(judgments, sc), None, level)


@dataclass(frozen=True)
class Agreement:
    """Every agreement figure of a set of judgments (see the module docs)."""

    n_items: int
    n_raters: int
    percent: float | None
    cohen: pl.DataFrame
    cohen_mean: float | None
    cohen_weights: str | None
    fleiss: FleissKappa
    alpha: dict[str, float | None]
    tie_rate: float | None
    per_query: pl.DataFrame | None = field(default=None)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        out: dict[str, Any] = {
            "n_items": self.n_items,
            "n_raters": self.n_raters,
            "percent_agreement": self.percent,
            "cohen_kappa_mean": self.cohen_mean,
            "cohen_weights": self.cohen_weights,
            "cohen_kappa_pairs": self.cohen.to_dicts(),
            "fleiss_kappa": self.fleiss.value,
            "fleiss_items": self.fleiss.n_items,
            "fleiss_raters": self.fleiss.n_raters,
            "krippendorff_alpha": dict(self.alpha),
            "majority_tie_rate": self.tie_rate,
        }
        if self.per_query is not None:
            out["per_query"] = {
                row["query_id"]: {k: v for k, v in row.items() if k != "query_id"}
                for row in self.per_query.to_dicts()
            }
        return out

    def to_polars(self) -> pl.DataFrame:
        """The summary figures as rows ``measure, value``."""
        rows: list[tuple[str, float | None]] = [
            ("percent agreement", self.percent),
            (f"Cohen's kappa ({self.cohen_weights or 'unweighted'}, mean of pairs)",
             self.cohen_mean),
            ("Fleiss' kappa", self.fleiss.value),
            *[(f"Krippendorff's alpha, {level}", v) for level, v in self.alpha.items()],
            ("majority-vote tie rate", self.tie_rate),
        ]
        return pl.DataFrame(rows, schema={"measure": pl.String, "value": pl.Float64},
                            orient="row")

    def _repr_html_(self) -> str:
        return display.agreement_html(self)


def _summary(data: _Ratings, q: int | None, weights: str | None) -> dict[str, Any]:
    pairs = _cohen(data, q, weights)
    kappas = pairs.get_column("kappa").drop_nulls()
    return {
        "percent": _percent(data, q),
        "cohen": pairs,
        "cohen_mean": float(kappas.mean()) if kappas.len() else None,  # type: ignore[arg-type]
        "fleiss": _fleiss(data, q),
        "alpha": {level: _alpha(data, q, level) for level in LEVELS},
    }


def agreement(
    judgments: Judgments,
    *,
    scale: Scale | str | None = None,
    weights: str | None = "auto",
    by_query: bool = False,
) -> Agreement:
    """Percent agreement, Cohen's, Fleiss' kappa, Krippendorff's alpha, tie rate.

    Parameters
    ----------
    judgments : Judgments
        The raters' grades.
    scale : Scale or str, optional
        The scale (default: the judgments' declared one).
    weights : {"auto", None, "linear", "quadratic"}, default "auto"
        Cohen's kappa weights (see :func:`cohen_kappa`).
    by_query : bool, default False
        Also compute every figure per query (``per_query``: ``query_id,
        n_items, percent, cohen_mean, fleiss, alpha_nominal, alpha_ordinal,
        alpha_interval, tie_rate``; null where undefined, e.g. a query nobody graded).

    Returns
    -------
    Agreement
    """
    sc = _scale(judgments, scale)
    if sc is not None and sc is not judgments.scale:
        judgments = judgments.with_scale(sc)
    w = _weights(weights, sc)
    data = _ratings(judgments, sc)
    overall = _summary(data, None, w)
    per_query = None
    if by_query:
        ties = tie_rate_by_query(judgments)
        tie_of = dict(ties.select("query_id", "tie_rate").iter_rows())
        rows = []
        index = {q: i for i, q in enumerate(data.query_ids)}
        for q in judgments.query_ids:
            if q not in index:  # nothing graded: every figure undefined
                rows.append({"query_id": q, "n_items": 0})
                continue
            i = index[q]
            s = _summary(data, i, w)
            units = data.units(i)
            rows.append({
                "query_id": q,
                "n_items": units.stop - units.start,
                "percent": s["percent"], "cohen_mean": s["cohen_mean"],
                "fleiss": s["fleiss"].value,
                **{f"alpha_{lv}": s["alpha"][lv] for lv in LEVELS},
                "tie_rate": tie_of.get(q),
            })
        schema = {"query_id": pl.String, "n_items": pl.Int64, "percent": pl.Float64,
                  "cohen_mean": pl.Float64, "fleiss": pl.Float64,
                  **{f"alpha_{lv}": pl.Float64 for lv in LEVELS}, "tie_rate": pl.Float64}
        per_query = pl.DataFrame(rows, schema=schema)
    return Agreement(
        n_items=data.grades.shape[0],
        n_raters=len(data.raters),
        cohen_weights=w,
        per_query=per_query,
        tie_rate=tie_rate(judgments),
        **overall,
    )
