"""Grading campaigns: a query set sent to an endpoint, graded on one scale, turned into metrics.

A campaign (an "evaluation" in the web app's pages and tables: the
``evaluations`` table, :class:`~rankscope.store.models_app.Evaluation`; not to
be confused with :func:`rankscope.evaluate`, a metric run) fixes the scale, how
many grades each result wants (1..N), the rule that combines them, the
metrics, the transformers between scales, whether seed 004's null rules apply,
the depth graded and the guidelines.
This module holds what an evaluation is: its spec and settings, creating,
changing, reading and listing them, and the project's *items* (query x
document, :func:`ensure_items`) its grades live on, shared by evaluations
through :func:`query_key`. Running one (its snapshot taken, its grading tasks
made) is :mod:`rankscope.services.campaign_runs`.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, func, select

from rankscope.errors import NotFoundError, OptionError
from rankscope.services.limits import (
    MAX_GUIDELINES,
    MAX_NAME,
    MAX_NOTE,
    check_spec,
    spec_field,
)
from rankscope.store.models import Endpoint, QuerySet
from rankscope.store.models import utcnow as _now
from rankscope.store.models_app import Evaluation, EvaluationSnapshot, Item, Membership, Rater, Task

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from datetime import datetime

    from sqlalchemy import Select
    from sqlalchemy.orm import Session

    from rankscope.services.accounts import Actor
    from rankscope.store.db import Store

__all__ = [
    "MAX_GRADES_WANTED",
    "EvaluationSettingsSpec",
    "EvaluationSpec",
    "EvaluationView",
    "check_explains",
    "create_evaluation",
    "ensure_items",
    "evaluation_access",
    "evaluation_row",
    "evaluation_view",
    "get_evaluation",
    "latest_snapshot_id",
    "list_evaluations",
    "query_key",
    "update_evaluation",
]

MAX_GRADES_WANTED = 20


def query_key(text: str, params: Mapping[str, Any] | None = None) -> str:
    """How grades are shared between evaluations: the query text, spaces collapsed, case folded.

    Template parameters, when a query has some, are part of the key (the same
    words for another brand are another query).

    Examples
    --------
    >>> query_key("  JSON   dumps ")
    'json dumps'
    >>> query_key("shoes", {"brand": "acme"})
    'shoes\\x1f{"brand":"acme"}'
    """
    key = " ".join(text.split()).casefold()
    if params:
        key += "\x1f" + json.dumps(dict(params), sort_keys=True, separators=(",", ":"),
                                   ensure_ascii=False)
    return key


def ensure_items(session: Session, project_id: int,
                 wanted: Iterable[tuple[str, str, str]]) -> dict[tuple[str, str], int]:
    """The ids of the project's items ``(query key, query text, doc id)``, made when missing.

    Missing items are inserted with ``INSERT ... ON CONFLICT DO NOTHING`` and
    then read back, so two transactions adding the same item at once (two
    runs, a run and an import) both succeed on PostgreSQL: the second waits
    for the first and takes its row. Returns ``{(query key, doc id): item id}``.
    """
    rows = {(key, doc): text for key, text, doc in wanted}
    if not rows:
        return {}
    found = _item_ids(session, project_id, list(rows))
    missing = [k for k in rows if k not in found]
    if missing:
        from sqlalchemy.dialects import postgresql, sqlite

        dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
        now = _now()
        for start in range(0, len(missing), 500):
            chunk = missing[start:start + 500]
            session.execute(dialect.insert(Item).values([
                {"project_id": project_id, "query_key": key, "query_text": rows[(key, doc)],
                 "doc_id": doc, "created_at": now} for key, doc in chunk])
                .on_conflict_do_nothing(index_elements=["project_id", "query_key", "doc_id"]))
        found.update(_item_ids(session, project_id, missing))
    return found


def _item_ids(session: Session, project_id: int,
              keys: list[tuple[str, str]]) -> dict[tuple[str, str], int]:
    out: dict[tuple[str, str], int] = {}
    by_key: dict[str, set[str]] = {}
    for key, doc in keys:
        by_key.setdefault(key, set()).add(doc)
    names = list(by_key)
    for start in range(0, len(names), 200):
        chunk = names[start:start + 200]
        for item_id, key, doc in session.execute(
                select(Item.id, Item.query_key, Item.doc_id)
                .where(Item.project_id == project_id, Item.query_key.in_(chunk))):
            if doc in by_key[key]:
                out[(key, doc)] = int(item_id)
    return out


@dataclass(frozen=True)
class EvaluationSpec:
    """What a curator chooses for a new evaluation (checked by :func:`create_evaluation`).

    Each field's meaning and limits are written once, here (:func:`spec_field`): the
    service checks them and the API's input model is derived from them.
    """

    name: str = spec_field(doc="The evaluation's name.", limit=MAX_NAME,
                           label="the evaluation's name")
    query_set_id: int = spec_field(doc="The query set whose queries are asked.", is_id=True)
    endpoint_id: int = spec_field(doc="The search endpoint asked.", is_id=True)
    scale: str = spec_field("graded", doc="The grading scale (binary, graded, detail...).",
                            limit=MAX_NAME, label="the scale")
    grades_wanted: int = spec_field(
        1, doc=f"Grades wanted per result (1 to {MAX_GRADES_WANTED}).")
    strategy: str | None = spec_field(
        None, doc="How the grades of a result make one (majority, mean, median, min, max, "
        "top3); default the scale's.", limit=MAX_NAME, label="the rule")
    metrics: Sequence[str] = spec_field(
        ("nDCG@10", "P@10"), doc="The metrics computed.", limit=MAX_NAME, items=100,
        label="a metric")
    transforms: Mapping[str, str] = spec_field(
        doc="Transformers, FROM->TO: their rules.", limit=MAX_NOTE, key_limit=MAX_NAME,
        items=20, label="a transformer", factory=dict)
    null_rules: bool = spec_field(True, doc="Whether a result graded null is left out.")
    depth: int = spec_field(10, doc="Results graded per query (1 to 1000).")
    guidelines: str = spec_field("", doc="The grading guidelines (Markdown).",
                                 limit=MAX_GUIDELINES, label="the guidelines")
    baseline_id: int | None = spec_field(None, doc="The evaluation compared against.",
                                         is_id=True)
    annotation: str = spec_field("", doc="What changed (shown beside the numbers).",
                                 limit=MAX_NOTE, label="the annotation")
    explain: bool = spec_field(
        False, doc="Whether the snapshot records why each result is there (the engine's "
        "explanation: Elasticsearch/OpenSearch explain, Solr debugQuery, the embedded engine's "
        "BM25 terms); refused for an endpoint whose kind cannot explain (http).")


@dataclass(frozen=True)
class EvaluationView:
    """An evaluation as shown."""

    id: int
    project_id: int
    name: str
    query_set_id: int
    query_set: str
    endpoint_id: int
    endpoint: str
    scale: str
    grades_wanted: int
    strategy: str
    metrics: list[str]
    transforms: dict[str, str]
    null_rules: bool
    depth: int
    guidelines: str
    status: str
    error: str | None
    baseline_id: int | None
    annotation: str
    created_at: str
    snapshot_id: int | None
    n_tasks: int
    frozen_at: str | None = None
    """When its numbers were frozen (ISO 8601), or None: they still move."""
    frozen_how: str | None = None
    """``explicit`` (a curator) or ``complete`` (its grading was complete)."""
    explain: bool = False
    """Whether its snapshot records why each result is there."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class EvaluationSettingsSpec:
    """What may change after an evaluation's creation (a field left out stays as it is).

    The baseline has three states, said apart without a magic value: a
    ``baseline_id`` sets it, ``clear_baseline`` removes it, neither keeps it
    (both at once is refused). Each field's meaning and limit are written once,
    here: :func:`update_evaluation` checks them and the API's input model is
    derived from them.
    """

    baseline_id: int | None = spec_field(
        None, doc="The evaluation compared against from now on (left out: unchanged).",
        is_id=True)
    clear_baseline: bool = spec_field(
        False, doc="True: no baseline any more (not with a baseline_id).")
    annotation: str | None = spec_field(
        None, doc="What changed, shown beside the numbers (left out: unchanged).",
        limit=MAX_NOTE, label="the annotation")
    guidelines: str | None = spec_field(
        None, doc="The grading guidelines, Markdown (left out: unchanged).",
        limit=MAX_GUIDELINES, label="the guidelines")



def _check_spec(spec: EvaluationSpec) -> tuple[str, str, list[str], dict[str, str]]:
    from rankscope.judgments.aggregate import resolve_strategy
    from rankscope.judgments.evaluation import resolve_seed_metrics
    from rankscope.judgments.scales import get_scale
    from rankscope.judgments.transform import parse_rules

    check_spec(spec)
    if not spec.name.strip():
        raise OptionError("an evaluation needs a name")
    scale = get_scale(spec.scale)
    if scale is None:
        raise OptionError("an evaluation needs a scale")
    if isinstance(spec.grades_wanted, bool) or not isinstance(spec.grades_wanted, int) or not (
            1 <= spec.grades_wanted <= MAX_GRADES_WANTED):
        raise OptionError(f"grades wanted per result must be 1 to {MAX_GRADES_WANTED}, "
                          f"not {spec.grades_wanted!r}")
    if isinstance(spec.depth, bool) or not isinstance(spec.depth, int) or not (
            1 <= spec.depth <= 1000):
        raise OptionError(f"depth must be 1 to 1000, not {spec.depth!r}")
    if not isinstance(spec.explain, bool):
        raise OptionError(f"explain is true or false, not {spec.explain!r}")
    strategy = resolve_strategy(spec.strategy or None, scale)
    if strategy == "latest":
        raise OptionError("the 'latest' rule needs grade times per file; choose majority, mean, "
                          "median, min, max or top3")
    metrics = [m.strip() for m in spec.metrics if m.strip()]
    resolve_seed_metrics(metrics)  # raises UnknownMetricError with a "did you mean"
    transforms: dict[str, str] = {}
    for key, rules in spec.transforms.items():
        parts = [p.strip().lower() for p in key.replace(">", "-").split("--")]
        if len(parts) != 2 or not all(parts):
            raise OptionError(f"a transformer is named FROM->TO (e.g. 'detail->binary'), "
                              f"not {key!r}")
        parse_rules(rules)
        transforms[f"{parts[0]}->{parts[1]}"] = rules
    return scale.name, strategy, metrics, transforms


def check_explains(ep: Endpoint) -> None:
    """Refuse explanations of an endpoint whose kind cannot give them (the http kind).

    Checked when an evaluation asking for them is created and again when it is run.
    """
    from rankscope.search.config import explains

    if not explains(ep.kind):
        raise OptionError(f"endpoint {ep.name!r} ({ep.kind}) cannot say why a result is there "
                          "(no explain API): explanations come from elasticsearch, opensearch, "
                          "solr and embedded endpoints; create the evaluation without explain")


def evaluation_view(session: Session, ev: Evaluation,
                    n_tasks: int | None = None) -> EvaluationView:
    """The evaluation as shown, read in the caller's session (the caller checked access);
    ``n_tasks``: its number of tasks, when the caller counted them already."""
    qs = session.get(QuerySet, ev.query_set_id)
    ep = session.get(Endpoint, ev.endpoint_id)
    if n_tasks is None:
        n_tasks = session.scalar(select(func.count(Task.id))
                                 .where(Task.evaluation_id == ev.id)) or 0
    return EvaluationView(
        id=ev.id, project_id=ev.project_id, name=ev.name, query_set_id=ev.query_set_id,
        query_set=qs.name if qs else "?", endpoint_id=ev.endpoint_id,
        endpoint=ep.name if ep else "?", scale=ev.scale, grades_wanted=ev.grades_wanted,
        strategy=ev.strategy, metrics=list(ev.metrics), transforms=dict(ev.transforms),
        null_rules=ev.null_rules, depth=ev.depth, guidelines=ev.guidelines, status=ev.status,
        error=ev.error, baseline_id=ev.baseline_id, annotation=ev.annotation,
        created_at=ev.created_at.isoformat(), snapshot_id=latest_snapshot_id(session, ev.id),
        n_tasks=int(n_tasks),
        frozen_at=None if ev.frozen_at is None else ev.frozen_at.isoformat(),
        frozen_how=ev.frozen_how, explain=bool(ev.explain))


def evaluation_row(session: Session, actor: Actor, evaluation_id: int,
                   at_least: str = "judge") -> Evaluation:
    """The evaluation, when the actor may see it (404) and act as ``at_least`` (403)."""
    return _access(session, actor, evaluation_id, at_least, with_rater=False)[0]


def evaluation_access(session: Session, actor: Actor, evaluation_id: int,
                      at_least: str = "judge") -> tuple[Evaluation, str, Rater | None]:
    """:func:`evaluation_row` with the actor's role in its project and their rater row
    (None: they have none yet), read in the same one statement (a grader's every request
    needs the three)."""
    return _access(session, actor, evaluation_id, at_least, with_rater=True)


@functools.cache
def _access_statement(with_rater: bool) -> Select[Any]:
    """The evaluation ``ev``, the role of user ``user`` in its project and (``with_rater``)
    their rater row, or nulls: built once (every request of a grader runs it)."""
    query: Select[Any] = select(Evaluation, Membership.role).outerjoin(  # type: ignore[assignment]
        Membership, (Membership.project_id == Evaluation.project_id)
        & (Membership.user_id == bindparam("user")))
    if with_rater:  # their rater row (unique by user), or nulls
        query = query.add_columns(Rater).outerjoin(Rater, Rater.user_id == bindparam("user"))
    return query.where(Evaluation.id == bindparam("ev"))


def _access(session: Session, actor: Actor, evaluation_id: int, at_least: str, *,
            with_rater: bool) -> tuple[Evaluation, str, Rater | None]:
    from rankscope.services.projects import effective_role, require_role

    row = session.execute(_access_statement(with_rater),
                          {"user": actor.user_id, "ev": evaluation_id}).first()
    if row is None:
        raise NotFoundError(f"no evaluation #{evaluation_id}")
    ev: Evaluation = row[0]
    role = effective_role(actor, ev.project_id, row[1])
    require_role(role, at_least)
    return ev, role, row[2] if with_rater else None


def latest_snapshot_id(session: Session, evaluation_id: int, *,
                       as_of: datetime | None = None) -> int | None:
    """The snapshot the evaluation's grading and metrics use (its latest run's, as of ``as_of``)."""
    query = select(EvaluationSnapshot.snapshot_id).where(
        EvaluationSnapshot.evaluation_id == evaluation_id)
    if as_of is not None:
        query = query.where(EvaluationSnapshot.created_at <= as_of)
    return session.scalar(query.order_by(EvaluationSnapshot.id.desc()).limit(1))


def create_evaluation(store: Store, actor: Actor, project_id: int,
                      spec: EvaluationSpec) -> EvaluationView:
    """Record a new evaluation (status ``draft``) after checking every choice.

    Raises
    ------
    OptionError, UnknownMetricError
        A bad scale, rule, metric, transformer, depth or grades wanted.
    NotFoundError
        The query set, endpoint or baseline is not one of the project's.
    """
    from rankscope.services.projects import require_project

    scale, strategy, metrics, transforms = _check_spec(spec)

    def work(session: Session) -> EvaluationView:
        require_project(session, actor, project_id, "curator")
        qs = session.get(QuerySet, spec.query_set_id)
        if qs is None or qs.project_id != project_id:
            raise NotFoundError(f"no query set #{spec.query_set_id} in this project")
        ep = session.get(Endpoint, spec.endpoint_id)
        if ep is None or ep.project_id != project_id:
            raise NotFoundError(f"no endpoint #{spec.endpoint_id} in this project")
        if spec.explain:
            check_explains(ep)
        if spec.baseline_id is not None:
            base = session.get(Evaluation, spec.baseline_id)
            if base is None or base.project_id != project_id:
                raise NotFoundError(f"no evaluation #{spec.baseline_id} in this project")
        ev = Evaluation(
            project_id=project_id, name=spec.name.strip(), query_set_id=qs.id,
            endpoint_id=ep.id, scale=scale, grades_wanted=spec.grades_wanted,
            strategy=strategy, metrics=metrics, transforms=transforms,
            null_rules=bool(spec.null_rules), depth=spec.depth, guidelines=spec.guidelines,
            status="draft", baseline_id=spec.baseline_id, annotation=spec.annotation,
            explain=spec.explain, created_by=actor.user_id, created_at=_now())
        session.add(ev)
        session.flush()
        return evaluation_view(session, ev)

    return store.write(work)


def update_evaluation(store: Store, actor: Actor, evaluation_id: int,
                      settings: EvaluationSettingsSpec) -> EvaluationView:
    """Change what may change after creation: the baseline, the annotation, the guidelines.

    Raises
    ------
    InputError
        A text too long (or holding NUL).
    OptionError
        A baseline both given and cleared.
    NotFoundError
        No other evaluation of the project by the baseline's id.
    """
    check_spec(settings)
    if settings.clear_baseline and settings.baseline_id is not None:
        raise OptionError(f"the baseline is either set (baseline_id {settings.baseline_id}) or "
                          "cleared (clear_baseline), not both")

    def work(session: Session) -> EvaluationView:
        ev = evaluation_row(session, actor, evaluation_id, "curator")
        if settings.clear_baseline:
            ev.baseline_id = None
        elif settings.baseline_id is not None:
            base = session.get(Evaluation, settings.baseline_id)
            if base is None or base.project_id != ev.project_id or base.id == ev.id:
                raise NotFoundError(
                    f"no other evaluation #{settings.baseline_id} in this project")
            ev.baseline_id = settings.baseline_id
        if settings.annotation is not None:
            ev.annotation = settings.annotation
        if settings.guidelines is not None:
            ev.guidelines = settings.guidelines
        return evaluation_view(session, ev)

    return store.write(work)


def get_evaluation(store: Store, actor: Actor, evaluation_id: int) -> EvaluationView:
    """One evaluation (NotFoundError when the actor cannot see it)."""
    with store.read() as session:
        return evaluation_view(session, evaluation_row(session, actor, evaluation_id))


def list_evaluations(store: Store, actor: Actor, project_id: int) -> list[EvaluationView]:
    """The project's evaluations, newest first."""
    from rankscope.services.projects import require_project

    with store.read() as session:
        require_project(session, actor, project_id, "judge")
        return [evaluation_view(session, ev) for ev in session.scalars(
            select(Evaluation).where(Evaluation.project_id == project_id)
            .order_by(Evaluation.id.desc()))]
