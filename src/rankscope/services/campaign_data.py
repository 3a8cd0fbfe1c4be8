"""An evaluation's data as the library reads it: raters' judgments and the snapshot's run.

Everything a dashboard shows is computed from these two, with the library's
own functions, and exactly these two are what the exports write: the
judgments as a raters' grades file (``query_id, doc_id, rater, grade``; an
empty grade is "can't tell", seen but not graded) and the run as a TREC run
written as ``rankscope snapshot -o`` writes it. So

    rankscope evaluate grades.csv run.txt -m METRIC --scale S
        --strategy S=RULE [--transform ...] --unjudged null

prints the numbers the dashboard shows (:func:`evaluate_command` spells the
command for an evaluation).

Which grades: every active grade on the evaluation's scale of an item of
the project whose query is one of the query set's (grades are shared
between evaluations), under the query id the set gives that query. Grades
of raters that do not count (an LLM judge the curator keeps apart) are kept
aside in :attr:`EvaluationData.advisory`: shown and compared with the
others, never aggregated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl
from sqlalchemy import select

from rankscope.data.tables import Run
from rankscope.services.campaigns import latest_snapshot_id, query_key
from rankscope.store.models import Query, Snapshot, SnapshotHit, SnapshotQuery
from rankscope.store.models_app import Evaluation, Grade, Item, Rater

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from rankscope.judgments.evaluation import JudgmentPlan
    from rankscope.judgments.table import Judgments
    from rankscope.result import EvaluationResult

__all__ = [
    "EvaluationData",
    "evaluate_command",
    "grade_details",
    "holes_frame",
    "load_data",
    "qrels_exports",
    "run_lines_of",
    "strategy_map",
    "unjudged_of",
]

_JUDGMENT_SCHEMA = {"query_id": pl.String, "doc_id": pl.String, "rater": pl.String,
                    "grade": pl.Float64}


def strategy_map(ev: Evaluation) -> dict[str, str]:
    """The evaluation's rule on its own scale; other scales (after transformers) keep theirs."""
    return {ev.scale: ev.strategy}


def unjudged_of(ev: Evaluation) -> str:
    """``null`` (seed 004's null rules) or ``nonrelevant`` (trec_eval's)."""
    return "null" if ev.null_rules else "nonrelevant"


@dataclass
class EvaluationData:
    """The judgments, the run and what the pages show about each query and hit."""

    evaluation_id: int
    snapshot_id: int | None
    judgments: Judgments
    """The counted grades: what is aggregated and exported."""
    advisory: Judgments
    """Grades of raters that do not count (same columns), for comparison only."""
    rater_kinds: dict[str, str]
    """Rater name -> ``person``, ``import`` or ``llm``, for every rater in either table."""
    run: Run
    run_lines: list[str]
    queries: list[dict[str, Any]]
    """``query_id, text, need`` of every query of the set, in order."""
    hits: pl.DataFrame
    """``query_id, rank, doc_id, title, snippet, url`` of the snapshot."""
    scale: str
    strategy: dict[str, str]
    transforms: dict[str, str]
    metrics: list[str]
    unjudged: str
    depth: int

    @property
    def has_grades(self) -> bool:
        """Whether any grade (a value) is there to aggregate."""
        return self.judgments.frame.get_column("grade").drop_nulls().len() > 0

    def plan(self) -> JudgmentPlan:
        """Transform and aggregate the grades once for every scale the metrics need."""
        from rankscope.judgments.evaluation import plan_evaluation

        return plan_evaluation(self.judgments, self.metrics, scale=self.scale,
                               strategy=self.strategy, transforms=self.transforms)

    def evaluate(self, run: Run | None = None) -> EvaluationResult:
        """The metrics, per query and mean, as ``rankscope evaluate`` computes them."""
        # Grading goes a query at a time: a run only partly graded (or not yet at all)
        # is the normal state here, and the dashboards show the coverage themselves.
        return self.plan().evaluate(run if run is not None else self.run, per_query=True,
                                    allow_no_overlap=True, warn_overlap=False,
                                    unjudged=self.unjudged)  # type: ignore[arg-type]


def run_lines_of(session: Session, snapshot_id: int, tag: str) -> tuple[list[str], pl.DataFrame]:
    """The snapshot's TREC run lines (as ``rankscope snapshot -o`` writes them) and its hits."""
    from rankscope.services.snapshots import trec_lines

    snapshot = session.get(Snapshot, snapshot_id)
    depth = snapshot.depth if snapshot is not None else 10
    rows = session.execute(
        select(Query.query_id, SnapshotHit.rank, SnapshotHit.doc_id, SnapshotHit.score,
               SnapshotHit.title, SnapshotHit.snippet, SnapshotHit.url)
        .join(SnapshotQuery, SnapshotHit.snapshot_query_id == SnapshotQuery.id)
        .join(Query, SnapshotQuery.query_row_id == Query.id)
        .where(SnapshotQuery.snapshot_id == snapshot_id)
        .order_by(Query.position, SnapshotHit.rank)).all()
    ranked: dict[str, list[tuple[str, float | None]]] = {}
    for qid, _, doc, score, *_ in rows:
        ranked.setdefault(qid, []).append((doc, score))
    lines = trec_lines(ranked.items(), depth, tag)
    hits = pl.DataFrame([tuple(r) for r in rows], orient="row", schema={
        "query_id": pl.String, "rank": pl.Int64, "doc_id": pl.String, "score": pl.Float64,
        "title": pl.String, "snippet": pl.String, "url": pl.String})
    return lines, hits


def _run_from_lines(lines: list[str], name: str) -> Run:
    parts = [line.split() for line in lines]
    frame = pl.DataFrame({"query_id": [p[0] for p in parts], "doc_id": [p[2] for p in parts],
                          "score": [float(p[4]) for p in parts]},
                         schema={"query_id": pl.String, "doc_id": pl.String,
                                 "score": pl.Float64})
    return Run(frame, name=name, source=name)


def _judgments(session: Session, ev: Evaluation, queries: list[dict[str, Any]]
               ) -> tuple[Judgments, Judgments, dict[str, str]]:
    from rankscope.judgments.table import Judgments

    ids_of: dict[str, list[str]] = {}
    for q in queries:
        ids_of.setdefault(query_key(q["text"], q["params"]), []).append(q["query_id"])
    rows = session.execute(
        select(Item.query_key, Item.doc_id, Rater.name, Grade.value, Rater.counts, Rater.kind)
        .join(Grade, Grade.item_id == Item.id).join(Rater, Grade.rater_id == Rater.id)
        .where(Item.project_id == ev.project_id, Grade.active, Grade.scale == ev.scale,
               Item.query_key.in_(list(ids_of)) if ids_of else Item.id < 0)
        .order_by(Item.id, Rater.name)).all()
    counted: list[tuple[str, str, str, float | None]] = []
    apart: list[tuple[str, str, str, float | None]] = []
    kinds: dict[str, str] = {}
    for key, doc, rater, value, counts, kind in rows:
        kinds[rater] = kind
        target = counted if counts else apart
        target.extend((qid, doc, rater, value) for qid in ids_of.get(key, []))
    source = f"evaluation #{ev.id}"
    return (Judgments(pl.DataFrame(counted, schema=_JUDGMENT_SCHEMA, orient="row"),
                      source=source, scale=ev.scale),
            Judgments(pl.DataFrame(apart, schema=_JUDGMENT_SCHEMA, orient="row"),
                      source=source, scale=ev.scale),
            kinds)


def grade_details(session: Session, ev: Evaluation,
                  keys: list[str]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Every active grade on the evaluation's scale of the items of these query keys.

    ``{(query key, doc id): [{"rater", "kind", "counts", "value", "reason",
    "explanation", "source", "created_at"}, ...]}``, raters by name.
    """
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    if not keys:
        return out
    rows = session.execute(
        select(Item.query_key, Item.doc_id, Rater.name, Rater.kind, Rater.counts, Grade)
        .join(Grade, Grade.item_id == Item.id).join(Rater, Grade.rater_id == Rater.id)
        .where(Item.project_id == ev.project_id, Item.query_key.in_(keys), Grade.active,
               Grade.scale == ev.scale)
        .order_by(Item.id, Rater.name)).all()
    for key, doc, rater, kind, counts, grade in rows:
        out.setdefault((key, doc), []).append({
            "rater": rater, "kind": kind, "counts": bool(counts), "value": grade.value,
            "reason": grade.reason, "explanation": grade.explanation, "source": grade.source,
            "created_at": grade.created_at.isoformat()})
    return out


def load_data(session: Session, ev: Evaluation) -> EvaluationData:
    """Everything the dashboards and exports of ``ev`` need, read in one session."""
    queries = [{"query_id": q.query_id, "text": q.text, "need": q.need, "params": q.params}
               for q in session.scalars(select(Query).where(Query.query_set_id == ev.query_set_id)
                                        .order_by(Query.position))]
    snapshot_id = latest_snapshot_id(session, ev.id)
    tag = ev.name
    if snapshot_id is not None:
        lines, hits = run_lines_of(session, snapshot_id, tag)
    else:
        lines, hits = [], pl.DataFrame(schema={
            "query_id": pl.String, "rank": pl.Int64, "doc_id": pl.String, "score": pl.Float64,
            "title": pl.String, "snippet": pl.String, "url": pl.String})
    judgments, advisory, kinds = _judgments(session, ev, queries)
    return EvaluationData(
        evaluation_id=ev.id, snapshot_id=snapshot_id, judgments=judgments, advisory=advisory,
        rater_kinds=kinds,
        run=_run_from_lines(lines, "_".join(tag.split()) or "rankscope"), run_lines=lines,
        queries=queries, hits=hits, scale=ev.scale, strategy=strategy_map(ev),
        transforms=dict(ev.transforms), metrics=list(ev.metrics), unjudged=unjudged_of(ev),
        depth=ev.depth)


def evaluate_command(ev: Evaluation, grades: str = "grades.csv", run: str = "run.txt") -> str:
    """The ``rankscope evaluate`` command that prints this evaluation's numbers from its exports.

    Examples
    --------
    >>> ev = Evaluation(scale="graded", strategy="mean", metrics=["nDCG@10"], transforms={},
    ...                 null_rules=True)
    >>> evaluate_command(ev).split(" -m ")
    ['rankscope evaluate grades.csv run.txt', 'nDCG@10 --scale graded --strategy graded=mean \
--unjudged null']
    """
    import shlex

    parts = ["rankscope", "evaluate", grades, run]
    for metric in ev.metrics:
        parts += ["-m", metric]
    parts += ["--scale", ev.scale, "--strategy", f"{ev.scale}={ev.strategy}"]
    for key, rules in sorted(ev.transforms.items()):
        parts += ["--transform", f"{key}:{rules}"]
    parts += ["--unjudged", unjudged_of(ev)]
    return " ".join(shlex.quote(p) for p in parts)


def holes_frame(ev: Evaluation, data: EvaluationData) -> pl.DataFrame:
    """The ungraded positions of the top ``depth``, in the order to grade them next.

    Columns ``query_id, text, need, rank, doc_id, title, url``; highest
    positions first, then the query set's order.
    """
    from rankscope.judgments.coverage import coverage

    schema = {"query_id": pl.String, "text": pl.String, "need": pl.String, "rank": pl.Int64,
              "doc_id": pl.String, "title": pl.String, "url": pl.String}
    if data.run.frame.height == 0:
        return pl.DataFrame(schema=schema)
    graded = coverage(data.judgments, data.run, ev.depth, strategy=data.strategy,
                      scale=data.scale)
    order = pl.DataFrame({"query_id": [q["query_id"] for q in data.queries],
                          "text": [q["text"] for q in data.queries],
                          "need": [q["need"] for q in data.queries],
                          "_order": list(range(len(data.queries)))},
                         schema={"query_id": pl.String, "text": pl.String, "need": pl.String,
                                 "_order": pl.Int64})
    holes = (graded.ungraded.select("query_id", "doc_id", "rank")
             .join(data.hits.select("query_id", "doc_id", "title", "url"),
                   on=["query_id", "doc_id"], how="left")
             .join(order, on="query_id", how="left")
             .sort(["rank", "_order", "doc_id"]))
    return holes.select(list(schema)).cast(schema)  # type: ignore[arg-type]


def qrels_exports(data: EvaluationData) -> list[dict[str, Any]]:
    """Which qrels file reproduces which metric: ``[{"name", "scale", "metrics", "command"}]``.

    ``qrels.txt`` (the evaluation's scale) comes first, even when no metric is
    computed on that scale; then one ``qrels-SCALE.txt`` per other scale a
    metric needs. ``command`` is the ``rankscope evaluate`` call that prints
    those metrics from the file and the exported ``run.txt``.
    """
    import shlex

    plan = data.plan()
    by_scale: dict[str, list[str]] = {data.scale: []}
    for label, needed in zip(plan.labels, plan.scales, strict=True):
        by_scale.setdefault(needed.name if needed is not None else data.scale, []).append(label)
    out = []
    for scale, labels in by_scale.items():
        name = "qrels.txt" if scale == data.scale else f"qrels-{scale}.txt"
        parts = ["rankscope", "evaluate", name, "run.txt"]
        for label in labels:
            parts += ["-m", label]
        parts += ["--unjudged", data.unjudged]
        out.append({"name": name, "scale": scale, "metrics": labels,
                    "command": " ".join(shlex.quote(p) for p in parts) if labels else None})
    return out
