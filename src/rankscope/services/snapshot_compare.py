"""Two rankings side by side: each query's two lists, grades, moves and metric.

``rankscope snapshots compare A B`` (and the app's side-by-side view) shows,
per query, the baseline's list and the other's next to each other, each
document with its grade (or *unjudged*) and, on the other's side, its move
against the baseline: ``up N``, ``down N`` or ``new``; documents of the
baseline's list the other no longer returns are ``gone``. The moves are
those of ``rankscope snapshots diff`` over the whole lists
(:func:`rankscope.services.snapshot_diff.diff_rankings` at the larger
depth), and the two rankings are first made comparable by the same checks
(:func:`rankscope.services.snapshot_diff.align`: different depths or query
sets are refused unless allowed).

With judgments, each side's per-query metric is what ``rankscope evaluate``
gives the ranking's run (:meth:`Ranking.ordered_run`: the engine's order),
and the queries are ordered by how much the metric changed (largest first);
without judgments, by how much the list changed (lowest RBO first).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import polars as pl

from rankscope.errors import OptionError
from rankscope.services.snapshot_diff import PairDiff, Ranking, align, diff_rankings

if TYPE_CHECKING:
    from rankscope.data.tables import Qrels
    from rankscope.engine.conventions import MetricPlan

__all__ = ["QueryView", "Row", "SideBySide", "side_by_side"]


@dataclass(frozen=True)
class Row:
    """One line of a query's two lists (either side may be empty)."""

    rank: int
    base_doc: str | None
    base_grade: float | None
    base_move: str | None
    """``gone`` when the other no longer returns it, else None."""
    doc: str | None
    grade: float | None
    move: str | None
    """``new``, ``up N``, ``down N`` or ``same``."""
    base_title: str | None = None
    title: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"rank": self.rank,
                "a": None if self.base_doc is None else {
                    "doc_id": self.base_doc, "grade": self.base_grade, "move": self.base_move,
                    "title": self.base_title},
                "b": None if self.doc is None else {
                    "doc_id": self.doc, "grade": self.grade, "move": self.move,
                    "title": self.title}}


@dataclass(frozen=True)
class QueryView:
    """One query: its text, both lists, both metric values."""

    query_id: str
    text: str | None
    rows: list[Row]
    metric_a: float | None
    metric_b: float | None
    rbo: float | None
    new: int
    gone: int
    moved: int
    unjudged_b: int

    @property
    def delta(self) -> float | None:
        """B's metric minus A's (None when either has none)."""
        if self.metric_a is None or self.metric_b is None:
            return None
        return self.metric_b - self.metric_a

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"query_id": self.query_id, "text": self.text, "a": self.metric_a,
                "b": self.metric_b, "delta": self.delta, "rbo": self.rbo, "new": self.new,
                "gone": self.gone, "moved": self.moved, "unjudged_b": self.unjudged_b,
                "rows": [r.to_dict() for r in self.rows]}


@dataclass
class SideBySide:
    """Two rankings compared query by query."""

    a: str
    b: str
    metric: str | None
    queries: list[QueryView]
    warnings: list[str] = field(default_factory=list)
    mean_a: float | None = None
    mean_b: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"a", "b", "metric", "queries": [...]}``."""
        return {"a": self.a, "b": self.b, "metric": self.metric, "mean_a": self.mean_a,
                "mean_b": self.mean_b, "warnings": list(self.warnings),
                "queries": [q.to_dict() for q in self.queries]}


def _grades(qrels: Qrels | None) -> dict[tuple[str, str], float]:
    if qrels is None:
        return {}
    frame = qrels.frame.select("query_id", "doc_id", "grade").drop_nulls("grade")
    return {(q, d): float(g) for q, d, g in frame.iter_rows()}


def _per_query(qrels: Qrels, ranking: Ranking,
               metric: MetricPlan) -> tuple[dict[str, float | None], float | None]:
    from rankscope.data.tables import Run
    from rankscope.engine.evaluate import evaluate

    # Only the judged queries have a value (as rankscope evaluate reads a run); judgments
    # of a few queries (grading under way) are the normal case here, not a warning.
    run = ranking.ordered_run()
    judged = qrels.frame.get_column("query_id").unique().to_list()
    run = Run(run.frame.filter(pl.col("query_id").is_in(judged)), name=run.name,
              source=run.source)
    if run.frame.height == 0:
        return {}, None
    result = evaluate(qrels, run, metric, per_query=True, allow_no_overlap=True)
    label = metric.labels[0]
    return ({q: v.get(label) for q, v in result.per_query.items()}, result.means.get(label))


def side_by_side(a: Ranking, b: Ranking, *, qrels: Qrels | None = None,
                 metric: str | MetricPlan | None = None,
                 query_ids: Sequence[str] | None = None,
                 allow_mismatch: bool = False) -> SideBySide:
    """``b`` next to ``a`` (the baseline), query by query.

    Parameters
    ----------
    a, b : Ranking
        The baseline and the other (snapshots or run files).
    qrels : Qrels, optional
        Grades of the documents and each side's per-query ``metric``.
    metric : str or MetricPlan, optional
        With ``qrels``: the per-query metric (default ``nDCG@10``), or its name read
        already (:func:`rankscope.engine.evaluate.plan_metrics`, one metric); read once
        for both sides.
    query_ids : sequence of str, optional
        Only these queries, in this order (an unknown id is an error).
    allow_mismatch : bool
        Compare rankings of different depths or query sets at what they share.

    Raises
    ------
    OptionError
        The rankings measured different things (without ``allow_mismatch``),
        an unknown query id, a metric without judgments.
    """
    if metric is not None and qrels is None:
        raise OptionError("a metric needs judgments (--qrels)")
    (a, b), said = align([a, b], allow=allow_mismatch)
    depth = max(a.effective_depth, b.effective_depth, 1)
    diff: PairDiff = diff_rankings([a, b], k=depth)[0]
    grades = _grades(qrels)
    metric_a: dict[str, float | None] = {}
    metric_b: dict[str, float | None] = {}
    mean_a = mean_b = None
    label: str | None = None
    if qrels is not None:
        from rankscope.engine.conventions import MetricPlan
        from rankscope.engine.evaluate import plan_metrics

        plan = metric if isinstance(metric, MetricPlan) else plan_metrics([metric or "nDCG@10"])
        if len(plan.resolved) != 1:
            raise OptionError(f"one per-query metric, not {len(plan.resolved)}")
        label = plan.labels[0]
        # the queries compared (a query neither answers has no line to show)
        shown = list(dict.fromkeys([*a.query_ids, *b.query_ids]))
        qrels = type(qrels)(qrels.frame.filter(pl.col("query_id").is_in(shown)),
                            source=qrels.source)
        metric_a, mean_a = _per_query(qrels, a, plan)
        metric_b, mean_b = _per_query(qrels, b, plan)
    order = list(dict.fromkeys([*a.query_ids, *b.query_ids]))
    if query_ids is not None:
        unknown = [q for q in query_ids if q not in set(order)]
        if unknown:
            raise OptionError(f"no query {', '.join(map(repr, unknown))} in {a.label} or "
                              f"{b.label}")
        order = list(dict.fromkeys(query_ids))
    rbo = dict(zip(diff.per_query["query_id"], diff.per_query["rbo"], strict=True))
    moves = {(q, d): (ra, rb) for q, d, ra, rb in
             diff.moves.select("query_id", "doc_id", "rank_baseline", "rank_other").iter_rows()}
    entered = set(diff.entered.select("query_id", "doc_id").iter_rows())
    left = set(diff.left.select("query_id", "doc_id").iter_rows())
    views = [_view(q, a, b, grades, (moves, entered, left), metric_a.get(q), metric_b.get(q),
                   rbo.get(q)) for q in order]
    if query_ids is None:
        if qrels is not None:
            views.sort(key=lambda v: (v.delta is None, -abs(v.delta or 0.0)))
        else:
            views.sort(key=lambda v: (v.rbo is None, v.rbo if v.rbo is not None else 1.0))
    return SideBySide(a=a.label, b=b.label, metric=label, queries=views,
                      warnings=[*said, *a.notes, *b.notes], mean_a=mean_a, mean_b=mean_b)


def _docs(ranking: Ranking, query_id: str) -> list[tuple[str, str | None]]:
    frame = ranking.frame.filter(pl.col("query_id") == query_id).sort("rank")
    titles = (frame.get_column("title").to_list() if "title" in frame.columns
              else [None] * frame.height)
    return list(zip(frame.get_column("doc_id").to_list(), titles, strict=True))


_Moves = tuple[dict[tuple[str, str], tuple[int, int]], set[tuple[str, str]],
               set[tuple[str, str]]]


def _move(key: tuple[str, str], moved: _Moves) -> str:
    """A document of B's list against A's (the diff's moves and entries, whole lists)."""
    moves, entered, _ = moved
    if key in entered:
        return "new"
    if key not in moves:
        return "same"
    was, now = moves[key]
    return f"up {was - now}" if was > now else f"down {now - was}"


def _view(query_id: str, a: Ranking, b: Ranking, grades: dict[tuple[str, str], float],
          moved: _Moves, metric_a: float | None, metric_b: float | None,
          rbo: float | None) -> QueryView:
    docs_a, docs_b = _docs(a, query_id), _docs(b, query_id)
    left = moved[2]
    rows = []
    for i in range(1, max(len(docs_a), len(docs_b)) + 1):
        base_doc, base_title = docs_a[i - 1] if i <= len(docs_a) else (None, None)
        doc, title = docs_b[i - 1] if i <= len(docs_b) else (None, None)
        move = None if doc is None else _move((query_id, doc), moved)
        rows.append(Row(
            rank=i, base_doc=base_doc,
            base_grade=None if base_doc is None else grades.get((query_id, base_doc)),
            base_move=("gone" if (query_id, base_doc) in left else None),
            doc=doc, grade=None if doc is None else grades.get((query_id, doc)), move=move,
            base_title=base_title, title=title))
    new = sum(r.move == "new" for r in rows)
    return QueryView(
        query_id=query_id, text=a.texts.get(query_id) or b.texts.get(query_id), rows=rows,
        metric_a=metric_a, metric_b=metric_b, rbo=rbo, new=new,
        gone=sum(r.base_move == "gone" for r in rows),
        moved=sum(r.move is not None and r.move.startswith(("up", "down")) for r in rows),
        unjudged_b=sum(r.doc is not None and (query_id, r.doc) not in grades for r in rows))
