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
between evaluations), under the query id the set gives that query. A
frozen evaluation reads the grades as they were when it was frozen
(:mod:`rankscope.services.grade_history`) and the snapshot its latest run
had recorded then, so its numbers never move; ``today=True`` reads today's. Grades
of raters that do not count (an LLM judge the curator keeps apart) are kept
aside in :attr:`EvaluationData.advisory`: shown and compared with the
others, never aggregated.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import polars as pl
from sqlalchemy import case, func, select

from rankscope.data.tables import Run
from rankscope.services.campaigns import latest_snapshot_id, query_key
from rankscope.services.grade_history import counting_at, latest_per_rater
from rankscope.services.snapshot_hits import (
    HITS_SCHEMA,
    RANKED_SCHEMA,
    snapshot_run,
    snapshot_state,
)
from rankscope.store.models import Query
from rankscope.store.models_app import Evaluation, Grade, Item, Rater

if TYPE_CHECKING:
    from collections.abc import Sequence

    from sqlalchemy.orm import Session

    from rankscope.judgments.evaluation import JudgmentPlan
    from rankscope.judgments.table import Judgments
    from rankscope.result import EvaluationResult
    from rankscope.store.db import Store

__all__ = [
    "EvaluationData",
    "data_stamp",
    "evaluate_command",
    "grade_details",
    "holes_frame",
    "load_data",
    "qrels_exports",
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
    """The snapshot's run as its TREC export holds it (:attr:`run_lines`), read from the store
    as columns (:func:`rankscope.services.snapshot_runs.engine_run_frame`)."""
    queries: list[dict[str, Any]]
    """``query_id, text, need`` of every query of the set, in order."""
    hits: pl.DataFrame
    """``query_id, rank, doc_id, score, title, snippet, url`` of the snapshot (without the
    last three when read without texts: :func:`load_data`'s ``texts``)."""
    scale: str
    strategy: dict[str, str]
    transforms: dict[str, str]
    metrics: list[str]
    unjudged: str
    depth: int
    as_of: datetime | None = None
    """The moment the grades are read as of (a frozen evaluation's), None for today's."""
    n_grades: int = 0
    """Counted grades (values and "can't tell") of the items read, each once."""
    run_tag: str = "rankscope"
    """The tag of the run's TREC lines (the evaluation's name)."""

    @property
    def run_lines(self) -> list[str]:
        """The run's TREC lines, as ``rankscope snapshot -o`` writes the snapshot."""
        from rankscope.services.snapshot_runs import frame_lines

        return frame_lines(self.run.frame, self.run_tag)

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


def _judgments(session: Session, ev: Evaluation, queries: list[dict[str, Any]],
               as_of: datetime | None, shared: dict[tuple[Any, ...], Any] | None,
               ) -> tuple[Judgments, Judgments, dict[str, str], int]:
    from rankscope.judgments.table import Judgments

    # the grades read depend on the project, the query set, the scale and the moment only:
    # evaluations sharing them (engines compared on one query set) share one read
    key = ("judgments", ev.project_id, ev.query_set_id, ev.scale, as_of,
           tuple(ev.frozen_apart or ()) if as_of is not None else None)
    if shared is None or key not in shared:
        read = _read_judgments(session, ev, queries, as_of)
        if shared is not None:
            shared[key] = read
    else:
        read = shared[key]
    counted, apart, kinds, n_counted = read
    source = f"evaluation #{ev.id}"
    return (Judgments(counted, source=source, scale=ev.scale),
            Judgments(apart, source=source, scale=ev.scale), dict(kinds), n_counted)


def _read_judgments(session: Session, ev: Evaluation, queries: list[dict[str, Any]],
                    as_of: datetime | None,
                    ) -> tuple[pl.DataFrame, pl.DataFrame, dict[str, str], int]:
    ids_of: dict[str, list[str]] = {}
    for q in queries:
        ids_of.setdefault(query_key(q["text"], q["params"]), []).append(q["query_id"])
    columns: list[Any] = [Item.query_key, Item.doc_id, Rater.name, Grade.value, Rater.counts,
                          Rater.kind, Grade.item_id, Grade.rater_id]
    if as_of is not None:  # several grades of one rater may have counted then: the last one
        columns += [Grade.created_at, Grade.id]
    found: Sequence[Any] = session.connection().execute(
        select(*columns)
        .join(Grade, Grade.item_id == Item.id).join(Rater, Grade.rater_id == Rater.id)
        .where(Item.project_id == ev.project_id, counting_at(as_of), Grade.scale == ev.scale,
               Item.query_key.in_(list(ids_of)) if ids_of else Item.id < 0)
        .order_by(Item.id, Rater.name)).all()
    # today's: one active grade per item, rater and scale (the unique ix_grades_active_rater)
    rows = (found if as_of is None
            else latest_per_rater(found, item=6, rater=7, created=8, grade_id=9))
    counted: list[tuple[str, str, str, float | None]] = []
    apart: list[tuple[str, str, str, float | None]] = []
    kinds: dict[str, str] = {}
    apart_then = set(ev.frozen_apart or ()) if as_of is not None else None
    n_counted = 0
    for key, doc, rater, value, counts, kind, _, rater_id, *_ in rows:
        if apart_then is not None:  # who counted is fixed by the freeze, like the grades
            counts = rater_id not in apart_then
        kinds[rater] = kind
        n_counted += int(bool(counts))
        target = counted if counts else apart
        target.extend((qid, doc, rater, value) for qid in ids_of.get(key, []))
    return (pl.DataFrame(counted, schema=_JUDGMENT_SCHEMA, orient="row"),
            pl.DataFrame(apart, schema=_JUDGMENT_SCHEMA, orient="row"), kinds, n_counted)


def grade_details(session: Session, ev: Evaluation, keys: list[str],
                  as_of: datetime | None = None) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Every active grade (as of ``as_of``) on the evaluation's scale of these query keys' items.

    ``{(query key, doc id): [{"rater", "kind", "counts", "value", "reason",
    "explanation", "source", "created_at"}, ...]}``, raters by name.
    """
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    if not keys:
        return out
    rows = latest_per_rater(session.execute(
        select(Item.query_key, Item.doc_id, Rater.name, Rater.kind, Rater.counts, Grade,
               Grade.item_id, Grade.rater_id, Grade.created_at, Grade.id)
        .join(Grade, Grade.item_id == Item.id).join(Rater, Grade.rater_id == Rater.id)
        .where(Item.project_id == ev.project_id, Item.query_key.in_(keys), counting_at(as_of),
               Grade.scale == ev.scale)
        .order_by(Item.id, Rater.name)).all(), item=6, rater=7, created=8, grade_id=9)
    apart_then = set(ev.frozen_apart or ()) if as_of is not None else None
    for key, doc, rater, kind, counts, grade, *_ in rows:
        if apart_then is not None:
            counts = grade.rater_id not in apart_then
        out.setdefault((key, doc), []).append({
            "rater": rater, "kind": kind, "counts": bool(counts), "value": grade.value,
            "reason": grade.reason, "explanation": grade.explanation, "source": grade.source,
            "created_at": grade.created_at.isoformat()})
    return out


def load_data(session: Session, ev: Evaluation, *, today: bool = False,
              shared: dict[tuple[Any, ...], Any] | None = None,
              texts: bool = True, kept_in: Store | None = None) -> EvaluationData:
    """Everything the dashboards and exports of ``ev`` need, read in one session.

    A frozen evaluation's data are those of its freeze (grades and snapshot
    as of ``frozen_at``) unless ``today`` asks for today's grades and latest
    snapshot. ``shared``: reads one request made already (a dict it fills),
    so that evaluations of one query set read its queries and grades once, and
    evaluations served one snapshot its hits. ``texts=False``: the hits
    without their title, snippet and URL (:attr:`EvaluationData.hits` has
    ``query_id, rank, doc_id, score``), for what needs only the numbers.
    ``kept_in`` (the store read): a finished snapshot's hits are read once per
    process (:data:`~rankscope.services.snapshot_hits.KEEP_SNAPSHOTS`,
    :data:`~rankscope.services.snapshot_hits.KEEP_SNAPSHOT_TEXTS` kept).
    """
    from rankscope.services.snapshot_runs import engine_run_frame

    as_of = None if today else ev.frozen_at
    queries_key = ("queries", ev.query_set_id)
    if shared is not None and queries_key in shared:
        queries = [dict(q) for q in shared[queries_key]]
    else:
        queries = [{"query_id": qid, "text": text, "need": need, "params": params}
                   for qid, text, need, params in session.connection().execute(
                       select(Query.query_id, Query.text, Query.need, Query.params)
                       .where(Query.query_set_id == ev.query_set_id).order_by(Query.position))]
        if shared is not None:
            shared[queries_key] = [dict(q) for q in queries]
    snapshot_id = latest_snapshot_id(session, ev.id, as_of=as_of)
    if snapshot_id is not None:
        hits, frame = snapshot_run(session, snapshot_id, texts, shared, kept_in)
    else:
        hits = pl.DataFrame(schema=HITS_SCHEMA if texts else RANKED_SCHEMA)
        frame = engine_run_frame(hits, ev.depth)
    tag = ev.name
    name = "_".join(tag.split()) or "rankscope"
    run = Run(frame, name=name, source=name)
    judgments, advisory, kinds, n_grades = _judgments(session, ev, queries, as_of, shared)
    return EvaluationData(
        evaluation_id=ev.id, snapshot_id=snapshot_id, judgments=judgments, advisory=advisory,
        rater_kinds=kinds, run=run, queries=queries, hits=hits, scale=ev.scale,
        strategy=strategy_map(ev), transforms=dict(ev.transforms), metrics=list(ev.metrics),
        unjudged=unjudged_of(ev), depth=ev.depth, as_of=as_of, n_grades=n_grades, run_tag=tag)


def data_stamp(session: Session, ev: Evaluation) -> tuple[Any, ...]:
    """What :func:`load_data` (today's, or as frozen) would read for ``ev``, summed up small:
    equal stamps, equal data (read the stamp before the data it stands for).

    A frozen evaluation's data never change: its freeze (moment, raters kept
    apart) and settings. A provisional one's move with every grade given,
    undone, replaced (a regrade, an adjudication, an import) or removed in its
    project (grades are rows superseded, retracted or deleted, never edited:
    their count, newest id, retracted count and active count), a rater let
    count or kept apart, a new run (its latest snapshot, told from a deleted
    one whose id it reuses, and its answers while it runs:
    :func:`~rankscope.services.snapshot_hits.snapshot_state`),
    a query of its set, and its settings. Four small reads.
    """
    settings = (ev.id, ev.project_id, ev.query_set_id, ev.name, ev.scale, ev.strategy,
                tuple(ev.metrics), tuple(sorted(ev.transforms.items())), ev.null_rules,
                ev.depth)
    if ev.frozen_at is not None:
        return ("frozen", ev.frozen_at, tuple(ev.frozen_apart or ()), *settings)
    connection = session.connection()
    grades = connection.execute(
        select(func.count(Grade.id), func.max(Grade.id), func.count(Grade.retracted_at),
               func.sum(case((Grade.active.is_(True), 1), else_=0)))
        .join(Item, Grade.item_id == Item.id).where(Item.project_id == ev.project_id)).one()
    apart = tuple(connection.execute(select(Rater.id).where(Rater.counts.is_(False))
                                     .order_by(Rater.id)).scalars())
    queries = connection.execute(select(func.count(Query.id), func.max(Query.id))
                                 .where(Query.query_set_id == ev.query_set_id)).one()
    snapshot_id = latest_snapshot_id(session, ev.id)
    return ("today", snapshot_id, snapshot_state(session, snapshot_id), tuple(grades), apart,
            tuple(queries), *settings)


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
    # an evaluation starts with nothing graded: every position a hole, not an error
    graded = coverage(data.judgments, data.run, ev.depth, strategy=data.strategy,
                      scale=data.scale, allow_no_overlap=True)
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
