r"""Agreement between raters: how much to trust the grades before the metrics.

An *item* is one (query, document); only non-null grades count.

- **Percent agreement**: agreeing rater pairs / all rater pairs, pooled over
  items (an item with grades 1, 1, 0 has 3 pairs, 1 agreeing).
- **Cohen's kappa** per pair of raters over the items both graded
  (scikit-learn's ``cohen_kappa_score``); weighted (quadratic by default) on
  ordinal scales, so that 2 vs 3 disagrees less than 0 vs 3. The mean over
  pairs is Light's kappa.
- **Fleiss' kappa** (statsmodels' ``fleiss_kappa``) needs the same number of
  grades per item: it is computed over the items with the most common number
  of grades (reported as ``fleiss_items`` / ``fleiss_raters``); Krippendorff's
  alpha is the coefficient that allows missing grades.
- **Krippendorff's alpha** (the ``krippendorff`` package), nominal, ordinal
  and interval, missing grades allowed; the scale's grades are the value
  domain.
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
import polars as pl

from rankscope.errors import DependencyError, OptionError
from rankscope.judgments.aggregate import tie_rate
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
]

LEVELS = ("nominal", "ordinal", "interval")
_KEYS = ["query_id", "doc_id"]


def _graded(j: Judgments) -> pl.DataFrame:
    return j.frame.filter(pl.col("grade").is_not_null()).select(*_KEYS, "rater", "grade")


def _clean(value: Any) -> float | None:
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else value


def _scale(j: Judgments, scale: Scale | str | None) -> Scale | None:
    return get_scale(scale) if scale is not None else j.scale


def percent_agreement(judgments: Judgments) -> float | None:
    """Agreeing rater pairs / rater pairs, pooled over items (None: no item graded twice).

    Examples
    --------
    Grades (1, 1, 0) on one item and (2, 2) on another: pairs 3 + 1 = 4,
    agreeing 1 + 1 = 2, so 0.5.
    """
    counts = _graded(judgments).group_by([*_KEYS, "grade"]).agg(pl.len().alias("c"))
    c = counts.get_column("c").cast(pl.Float64)
    items = counts.group_by(_KEYS).agg(pl.col("c").sum().cast(pl.Float64).alias("n"))
    n = items.get_column("n")
    pairs = float((n * (n - 1) / 2).sum())
    agree = float((c * (c - 1) / 2).sum())
    return agree / pairs if pairs else None


def _sklearn_kappa() -> Any:
    try:
        from sklearn.metrics import cohen_kappa_score
    except ImportError:
        raise DependencyError("scikit-learn", "agreement", "Cohen's kappa") from None
    return cohen_kappa_score


def _weights(weights: str | None, scale: Scale | None) -> str | None:
    if weights == "auto":
        return "quadratic" if scale is not None and not scale.is_binary else None
    if weights in (None, "none"):
        return None
    if weights not in ("linear", "quadratic"):
        raise OptionError(f"weights must be auto, none, linear or quadratic, not {weights!r}")
    return weights


def _labels(values: np.ndarray, scale: Scale | None) -> list[float]:
    if scale is not None and scale.values:
        return list(scale.values)
    return sorted({float(v) for v in values})


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
        The scale (default: the judgments'); its grades are the categories,
        so the weights follow grade distances.

    Returns
    -------
    polars.DataFrame
        ``rater_a, rater_b, n_items, kappa`` (kappa null when undefined).
    """
    sc = _scale(judgments, scale)
    w = _weights(weights, sc)
    score = _sklearn_kappa()
    graded = _graded(judgments)
    raters: list[str] = graded.get_column("rater").unique().sort().to_list()
    by_rater = {r: graded.filter(pl.col("rater") == r).select(*_KEYS, "grade") for r in raters}
    rows: list[tuple[str, str, int, float | None]] = []
    for a, b in itertools.combinations(raters, 2):
        both = by_rater[a].join(by_rater[b], on=_KEYS, suffix="_b")
        if both.height == 0:
            continue
        ya = both.get_column("grade").to_numpy()
        yb = both.get_column("grade_b").to_numpy()
        labels = _labels(np.concatenate([ya, yb]), sc)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            kappa = _clean(score(ya, yb, labels=labels, weights=w))
        rows.append((a, b, both.height, kappa))
    return pl.DataFrame(
        rows, schema={"rater_a": pl.String, "rater_b": pl.String, "n_items": pl.Int64,
                      "kappa": pl.Float64}, orient="row",
    )


@dataclass(frozen=True)
class FleissKappa:
    """Fleiss' kappa and the items it was computed on."""

    value: float | None
    n_items: int
    n_raters: int


def fleiss_kappa(judgments: Judgments, *, scale: Scale | str | None = None) -> FleissKappa:
    """Fleiss' kappa over the items with the most common number of grades (>= 2).

    Uses statsmodels' ``fleiss_kappa`` on the item x category count table; the
    categories are the scale's grades (or the grades seen).
    """
    try:
        from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss
    except ImportError:
        raise DependencyError("statsmodels", "agreement", "Fleiss' kappa") from None
    sc = _scale(judgments, scale)
    graded = _graded(judgments)
    sizes = graded.group_by(_KEYS).agg(pl.len().alias("n")).filter(pl.col("n") >= 2)
    if sizes.height == 0:
        return FleissKappa(None, 0, 0)
    # The most common number of grades per item; the larger one on a tie.
    modes = sizes.group_by("n").agg(pl.len().alias("items")).sort(
        ["items", "n"], descending=[True, True]
    )
    n = int(modes.get_column("n")[0])
    chosen = sizes.filter(pl.col("n") == n).select(_KEYS)
    rows = graded.join(chosen, on=_KEYS)
    labels = _labels(rows.get_column("grade").to_numpy(), sc)
    table = (
        rows.group_by([*_KEYS, "grade"]).agg(pl.len().alias("c"))
        .pivot(on="grade", index=_KEYS, values="c")
        .fill_null(0)
    )
    columns = [c for c in table.columns if c not in _KEYS]
    present = {float(c): c for c in columns}
    counts = np.zeros((table.height, len(labels)))
    for i, label in enumerate(labels):
        if label in present:
            counts[:, i] = table.get_column(present[label]).to_numpy()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        value = _clean(sm_fleiss(counts, method="fleiss"))
    return FleissKappa(value, table.height, n)


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
    try:
        import krippendorff
    except ImportError:
        raise DependencyError("krippendorff", "agreement", "Krippendorff's alpha") from None
    sc = _scale(judgments, scale)
    if level == "auto":
        level = sc.default_level if sc is not None else "nominal"
    if level not in LEVELS:
        raise OptionError(f"level must be one of auto, {', '.join(LEVELS)}, not {level!r}")
    graded = _graded(judgments)
    if graded.height == 0:
        return None
    unit_ids = graded.select(_KEYS).unique(maintain_order=True).with_row_index("_unit")
    wide = graded.join(unit_ids, on=_KEYS).with_columns(
        (pl.col("rater").rank("dense").cast(pl.Int64) - 1).alias("_rater")
    )
    units = wide.get_column("_unit").to_numpy()
    raters = wide.get_column("_rater").to_numpy()
    data = np.full((int(raters.max()) + 1, int(units.max()) + 1), np.nan)
    data[raters, units] = wide.get_column("grade").to_numpy()
    domain = list(sc.values) if sc is not None and sc.values and level != "nominal" else None
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            value = krippendorff.alpha(
                reliability_data=data, value_domain=domain,
                level_of_measurement=level,  # type: ignore[arg-type]  # checked against LEVELS
            )
    except ValueError:  # one value only, or no unit graded twice: undefined
        return None
    return _clean(value)


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


def _summary(j: Judgments, sc: Scale | None, weights: str | None) -> dict[str, Any]:
    pairs = cohen_kappa(j, weights=weights, scale=sc)
    kappas = pairs.get_column("kappa").drop_nulls()
    return {
        "percent": percent_agreement(j),
        "cohen": pairs,
        "cohen_mean": float(kappas.mean()) if kappas.len() else None,  # type: ignore[arg-type]
        "fleiss": fleiss_kappa(j, scale=sc),
        "alpha": {level: krippendorff_alpha(j, level, scale=sc) for level in LEVELS},
        "tie_rate": tie_rate(j),
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
        alpha_interval, tie_rate``).

    Returns
    -------
    Agreement
    """
    sc = _scale(judgments, scale)
    if sc is not None and sc is not judgments.scale:
        judgments = judgments.with_scale(sc)
    graded = _graded(judgments)
    overall = _summary(judgments, sc, weights)
    per_query = None
    if by_query:
        rows = []
        for q, sub in judgments.by_query().items():
            s = _summary(sub, sc, weights)
            rows.append({
                "query_id": q,
                "n_items": int(sub.frame.drop_nulls("grade").select(
                    pl.struct(_KEYS).n_unique()).item()),
                "percent": s["percent"], "cohen_mean": s["cohen_mean"],
                "fleiss": s["fleiss"].value,
                **{f"alpha_{lv}": s["alpha"][lv] for lv in LEVELS},
                "tie_rate": s["tie_rate"],
            })
        schema = {"query_id": pl.String, "n_items": pl.Int64, "percent": pl.Float64,
                  "cohen_mean": pl.Float64, "fleiss": pl.Float64,
                  **{f"alpha_{lv}": pl.Float64 for lv in LEVELS}, "tie_rate": pl.Float64}
        per_query = pl.DataFrame(rows, schema=schema)
    return Agreement(
        n_items=int(graded.select(pl.struct(_KEYS).n_unique()).item()) if graded.height else 0,
        n_raters=int(graded.get_column("rater").n_unique()),
        cohen_weights=_weights(weights, sc),
        per_query=per_query,
        **overall,
    )
