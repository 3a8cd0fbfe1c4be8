"""Coverage: how much of a run's top k is graded, and what to grade next.

Before trusting a small change in a metric, check that the results it rests
on are graded (seed 004's checklist: "check grading coverage"). For each query
of the run, the first k results are ranked exactly as the evaluation ranks
them (score descending; ties by document id descending, or input order); a
position is *graded* when its (query, document) has a non-null grade in the
qrels, or, for raters' judgments, at least ``min_grades`` non-null grades (or
a non-null aggregated grade when a ``strategy`` is named, so that a tied
majority vote counts as ungraded, as it does in the metrics). The ungraded
pairs are the next batch to grade.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

from rankscope import display
from rankscope.data.overlap import check_query_sets
from rankscope.data.ranking_order import ranked
from rankscope.data.tables import OnDuplicate, Qrels, Run, as_qrels, as_run, input_name
from rankscope.engine.ranking import Ties, Unjudged
from rankscope.errors import MetricParameterError, OptionError, setting
from rankscope.judgments.scales import Scale
from rankscope.judgments.table import Judgments

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rankscope.data._io import PathLike

__all__ = ["Coverage", "coverage", "ranked_top_k"]


@dataclass(frozen=True)
class Coverage:
    """The graded share of a run's top k.

    Attributes
    ----------
    k : int
        The cut-off.
    per_query : polars.DataFrame
        ``query_id, positions, graded, coverage`` for every query of the run
        (``positions`` = min(k, ranking length)).
    ungraded : polars.DataFrame
        ``query_id, doc_id, rank`` of every ungraded position in the top k,
        by query then rank.
    """

    k: int
    per_query: pl.DataFrame
    ungraded: pl.DataFrame

    @property
    def positions(self) -> int:
        """All top-k positions of all queries."""
        return int(self.per_query.get_column("positions").sum())

    @property
    def graded(self) -> int:
        """Graded top-k positions of all queries."""
        return int(self.per_query.get_column("graded").sum())

    @property
    def overall(self) -> float | None:
        """Graded positions / positions, pooled over queries (None if no position)."""
        return self.graded / self.positions if self.positions else None

    @property
    def mean(self) -> float | None:
        """The mean of the per-query shares (queries with at least one position)."""
        value = self.per_query.get_column("coverage").drop_nulls().mean()
        return None if value is None else float(value)  # type: ignore[arg-type]

    def to_dict(self, *, per_query: bool = True, ungraded: bool = False) -> dict[str, Any]:
        """A JSON-ready summary."""
        out: dict[str, Any] = {
            "k": self.k,
            "positions": self.positions,
            "graded": self.graded,
            "coverage": self.overall,
            "mean_query_coverage": self.mean,
            "n_ungraded": self.ungraded.height,
        }
        if per_query:
            out["per_query"] = {
                q: {"positions": p, "graded": g, "coverage": c}
                for q, p, g, c in self.per_query.iter_rows()
            }
        if ungraded:
            out["ungraded"] = self.ungraded.to_dicts()
        return out

    def _repr_html_(self) -> str:
        return display.coverage_html(self)

    def write_ungraded(
        self, path: PathLike, *, format: str | None = None, rater: str | None = None
    ) -> None:
        """Write the ungraded pairs as the next batch to grade.

        The file is a judgments file with empty grades (``query_id, doc_id,
        rank[, rater], grade``; CSV, TSV, JSONL, JSON or Parquet by name): fill
        in the grades and read it back with
        :meth:`Judgments.read <rankscope.judgments.Judgments.read>` (without a
        rater column the rater is named after the file).
        """
        from rankscope.judgments.io import write_judgments_frame

        columns = [pl.lit(None, pl.Float64).alias("grade")]
        if rater is not None:
            columns.insert(0, pl.lit(rater, pl.String).alias("rater"))
        batch = self.ungraded.with_columns(columns)
        fmt = format
        if fmt is None:
            from rankscope.data.formats import guess_format

            fmt = guess_format(path)
        if fmt == "trec":
            raise OptionError("TREC qrels cannot hold ungraded pairs; write CSV, TSV or JSONL")
        write_judgments_frame(batch, path, fmt)


def ranked_top_k(run: Run, k: int | None, *, ties: Ties = "trec") -> pl.DataFrame:
    """``query_id, doc_id, rank`` of each query's first k results, ranked as evaluated."""
    return ranked(run.frame, ties, depth=k).select("query_id", "doc_id", "rank")


def _graded_pairs(
    judged: Judgments | Qrels,
    *,
    min_grades: int,
    strategy: str | Mapping[str, str] | None,
    scale: Scale | str | None,
    aggregated: bool = False,
) -> pl.DataFrame:
    """``query_id, doc_id`` of every graded pair."""
    if isinstance(judged, Qrels):
        if min_grades != 1 or strategy is not None:
            raise OptionError("min_grades and strategy apply to raters' judgments, not qrels")
        return judged.frame.filter(pl.col("grade").is_not_null()).select("query_id", "doc_id")
    if strategy is not None or aggregated:
        from rankscope.judgments.aggregate import aggregate_frame

        details = aggregate_frame(judged, strategy, scale=scale)
        return details.filter(pl.col("grade").is_not_null()).select("query_id", "doc_id")
    return (
        judged.frame.group_by("query_id", "doc_id")
        .agg(pl.col("grade").count().alias("n"))
        .filter(pl.col("n") >= min_grades)
        .select("query_id", "doc_id")
    )


def coverage(
    judged: Any,
    run: Any,
    k: int,
    *,
    ties: Ties = "trec",
    min_grades: int = 1,
    strategy: str | Mapping[str, str] | None = None,
    scale: Scale | str | None = None,
    on_duplicate: OnDuplicate = "error",
    unjudged: Unjudged = "nonrelevant",
    allow_no_overlap: bool = False,
) -> Coverage:
    """The share of each query's top-k positions that are graded, and the ungraded pairs.

    Parameters
    ----------
    judged : Judgments, Qrels, path, DataFrame or dict
        Qrels (null grade = ungraded) or raters' judgments.
    run : Run, path, DataFrame or dict
        The ranking whose top k is checked (every query of the run is reported).
    k : int
        The cut-off (>= 1).
    ties : {"trec", "input", "docid_asc"}, default "trec"
        Score ties, as in evaluation (document id descending, input order, or
        document id ascending).
    min_grades : int, default 1
        Judgments only: a result is graded when it has at least this many
        non-null grades (e.g. 3 when every result needs three raters).
    strategy : str or mapping, optional
        Judgments only: a result is graded when its aggregated grade is
        non-null (a tied majority vote is then ungraded, as in the metrics).
    scale : Scale or str, optional
        The judgments' scale, for ``strategy``.
    on_duplicate : {"error", "first", "max"}, default "error"
        A document twice in one ranking.
    unjudged : {"nonrelevant", "condensed", "null"}, default "nonrelevant"
        Judgments only: with ``"null"`` a result is graded when its
        aggregated grade (``strategy``, else each scale's default) is
        non-null, exactly the results the metrics under
        ``unjudged="null"`` count as graded.
    allow_no_overlap : bool, default False
        Go on when no query of the run has a judgment (every position then
        ungraded): by default an error, as it is more often ids written
        differently (``Q1`` and ``q1``) than a set of queries never graded.

    Returns
    -------
    Coverage

    Examples
    --------
    A query ranking a, b, c with only a and c graded: coverage@3 = 2/3 and
    b is the next to grade.
    """
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 2**31 - 1:
        raise MetricParameterError(f"coverage: {setting('k', flag='-k')} must be a whole "
                                   f"number from 1 to 2147483647, not {k!r}")
    if min_grades < 1:
        raise OptionError(f"{setting('min_grades')} must be >= 1, not {min_grades}")
    if not isinstance(judged, Judgments | Qrels):
        from rankscope.judgments.table import as_judgments

        judged = as_judgments(judged) if not isinstance(judged, dict) else as_qrels(judged)
    run_t = as_run(run, on_duplicate=on_duplicate)
    if unjudged not in ("nonrelevant", "condensed", "null"):
        raise OptionError(f"unjudged must be nonrelevant, condensed or null, not {unjudged!r}")
    judged_queries = judged.frame.get_column("query_id").unique().to_list()
    check_query_sets(input_name(run_t), run_t.frame.get_column("query_id").unique().to_list(),
                     judged.source if not judged.source.startswith("<") else "the judgments",
                     judged_queries, allow=allow_no_overlap, warn=False)
    graded = _graded_pairs(judged, min_grades=min_grades, strategy=strategy, scale=scale,
                           aggregated=unjudged == "null")
    top = ranked_top_k(run_t, k, ties=ties).join(
        graded.with_columns(pl.lit(True).alias("graded")), on=["query_id", "doc_id"], how="left"
    ).with_columns(pl.col("graded").fill_null(False))
    per_query = (
        top.group_by("query_id")
        .agg(pl.len().cast(pl.Int64).alias("positions"),
             pl.col("graded").sum().cast(pl.Int64).alias("graded"))
        .with_columns((pl.col("graded") / pl.col("positions")).alias("coverage"))
        .sort("query_id")
    )
    ungraded = top.filter(~pl.col("graded")).select("query_id", "doc_id", "rank").sort(
        "query_id", "rank"
    )
    return Coverage(k=k, per_query=per_query, ungraded=ungraded)
