"""Tries: a curator changes an evaluation's endpoint and runs one query or the whole set.

A try (Quepid's numbered history) is a set of changes ``KEY=VALUE`` to the
endpoint the evaluation was made from: dotted keys of its file or template
placeholders (:mod:`rankscope.search.variants`, the same reading as
``rankscope sweep --grid``). The changed endpoint is checked as a saved one
is, by the server's :class:`~rankscope.services.boundary.Boundary` (files
inside the files directory, environment variables and hosts the operator
allows), and again when it is opened; the endpoint itself is never
changed. Each try is numbered per evaluation and kept with its changes and
the whole configuration they made.

- **One query** (``query_id``): its answer is kept in the try (``results``).
- **The whole set**: a snapshot of the store, taken by the snapshot service
  as an evaluation's is; :func:`make_evaluation` turns it into an evaluation
  in one step (an endpoint of its own holding the changed file, the try's
  snapshot, its grading tasks).

Every result of a try that the evaluation does not already grade joins the
query's judged pool as a task (origin ``try``, what a grader sees kept in
``shown``), so the new results are graded in place like any other (the pool,
and documents added to it by hand, are :mod:`rankscope.services.pool`).
:func:`side_by_side` shows a try next to the evaluation's snapshot with
:func:`rankscope.services.snapshot_compare.side_by_side`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import tomllib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl
from sqlalchemy import func, select

from rankscope.errors import ConflictError, NotFoundError, OptionError, RankscopeError
from rankscope.services.campaigns import evaluation_row, latest_snapshot_id
from rankscope.services.limits import MAX_NAME, check_items, check_spec, check_text, spec_field
from rankscope.services.pool import add_tasks, hit_dict
from rankscope.store.models import Endpoint, Project, Query, QuerySet
from rankscope.store.models import utcnow as _now
from rankscope.store.models_app import Evaluation, Try

if TYPE_CHECKING:
    from collections.abc import Sequence

    from sqlalchemy.orm import Session

    from rankscope.search.types import EndpointConfig
    from rankscope.services.accounts import Actor
    from rankscope.services.boundary import Boundary
    from rankscope.store.db import Store

__all__ = ["MAX_CHANGES", "Started", "TrySpec", "TryView", "complete_try", "list_tries",
           "make_evaluation", "read_changes", "recover_interrupted_tries", "run_try",
           "side_by_side", "start_try"]

MAX_CHANGES = 50
"""Changes one try may make (a form, not a grid: `rankscope sweep` runs grids)."""


@dataclass(frozen=True)
class TryView:
    """A try as the pages and the API show it."""

    id: int
    evaluation_id: int
    number: int
    changes: list[list[Any]]
    """``[[dotted key, value], ...]``."""
    described: str
    scope: str
    query_id: str | None
    snapshot_id: int | None
    status: str
    error: str | None
    made_evaluation_id: int | None
    created_at: str
    n_results: int | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class TrySpec:
    """A try: ``KEY=VALUE`` changes (a dotted key of the endpoint file or a template
    placeholder, one TOML scalar) and the query to run (none: the whole set).

    Each field's meaning and limit are written once, here (``spec_field``): the
    service checks them and the API's input model is derived from them.
    """

    changes: Sequence[str] = spec_field(
        (), doc=f"KEY=VALUE changes, one TOML scalar each (at most {MAX_CHANGES}).",
        limit=MAX_NAME, items=MAX_CHANGES, label="a change")
    query_id: str | None = spec_field(None, doc="The query to run (none: the whole set).",
                                      limit=MAX_NAME, label="the query id")


def read_changes(config: EndpointConfig, specs: Sequence[str]) -> list[Any]:
    """``KEY=VALUE`` specs as :class:`~rankscope.search.variants.Change` s (one value each).

    Raises
    ------
    InputError
        Too many (more than :data:`MAX_CHANGES`, said as every spec's limit of items).
    OptionError
        A spec that does not parse, a list of values, a key twice.
    """
    from rankscope.search.variants import Change, parse_assignment, resolve_key

    check_items(specs, "a change", MAX_CHANGES)
    changes: list[Change] = []
    for spec in specs:
        check_text(spec, "a change", MAX_NAME)
        path, values = parse_assignment(spec)
        path = resolve_key(config, path)
        if len(values) != 1:
            raise OptionError(f"{spec!r}: a try sets one value per key (a grid of values is "
                              "`rankscope sweep`)")
        if any(c.path == path for c in changes):
            raise OptionError(f"{Change(path, None).key} is changed twice")
        changes.append(Change(path, values[0]))
    return changes


def _view(session: Session, row: Try) -> TryView:
    from rankscope.search.variants import Change, describe

    query_id = None
    if row.query_row_id is not None:
        query_id = session.scalar(select(Query.query_id).where(Query.id == row.query_row_id))
    n = len(row.results.get("hits", [])) if row.results else None
    return TryView(
        id=row.id, evaluation_id=row.evaluation_id, number=row.number,
        changes=[list(c) for c in row.changes],
        described=describe([Change(tuple(k.split(".")), v) for k, v in row.changes]) or
        "(the endpoint as it is)",
        scope=row.scope, query_id=query_id, snapshot_id=row.snapshot_id, status=row.status,
        error=row.error, made_evaluation_id=row.made_evaluation_id,
        created_at=row.created_at.isoformat(), n_results=n)


def _try_row(session: Session, actor: Actor, evaluation_id: int, number: int,
             role: str = "curator") -> tuple[Try, Evaluation]:
    ev = evaluation_row(session, actor, evaluation_id, role)
    row = session.scalar(select(Try).where(Try.evaluation_id == ev.id, Try.number == number))
    if row is None:
        raise NotFoundError(f"no try #{number} of evaluation #{evaluation_id}")
    return row, ev


def list_tries(store: Store, actor: Actor, evaluation_id: int) -> list[TryView]:
    """The evaluation's tries, newest first (a curator's tool, as running them is)."""
    with store.read() as session:
        ev = evaluation_row(session, actor, evaluation_id, "curator")
        return [_view(session, t) for t in session.scalars(
            select(Try).where(Try.evaluation_id == ev.id).order_by(Try.number.desc()))]


def _endpoint_data(ep: Endpoint) -> dict[str, Any]:
    data = tomllib.loads(ep.toml) if ep.toml is not None else dict(ep.config)
    data["name"] = ep.name
    return data


@dataclass(frozen=True)
class Started:
    """A try checked and recorded (``running``), ready to send: :func:`complete_try`."""

    view: TryView
    evaluation_id: int
    config: EndpointConfig
    queries: list[Any]
    depth: int
    query_set_name: str
    query_set_source: str | None
    project: str


def run_try(store: Store, actor: Actor, evaluation_id: int, changes: Sequence[str], *,
            boundary: Boundary, query_id: str | None = None) -> TryView:
    """Run the evaluation's endpoint with ``changes`` on one query or the whole set.

    :func:`start_try` then :func:`complete_try` (the web app runs the second in
    the background, as an evaluation's run).

    Parameters
    ----------
    changes : sequence of str
        ``KEY=VALUE``: a dotted key of the endpoint file or a template
        placeholder and one TOML scalar (``weights.title=4``, ``boost=2.5``).
    boundary : Boundary
        The server's: the changed endpoint is checked by it as a saved one is.
    query_id : str, optional
        Run only this query of the evaluation's query set.

    Returns
    -------
    TryView
        The try, numbered, ``done``; or ``failed`` with the error when the
        engine failed (what was recorded stays).

    Raises
    ------
    OptionError, ConfigError, OutboundError
        A bad change, a changed endpoint the boundary refuses: nothing is
        recorded or sent.
    NotFoundError
        No such evaluation or query.
    """
    return complete_try(store, actor, start_try(store, actor, evaluation_id, changes,
                                                boundary=boundary, query_id=query_id),
                        boundary=boundary)


def start_try(store: Store, actor: Actor, evaluation_id: int, changes: Sequence[str], *,
              boundary: Boundary, query_id: str | None = None) -> Started:
    """Check the changes by the boundary and record the try, numbered, ``running``.

    Raises as :func:`run_try`; nothing is recorded then.
    """
    from rankscope.search.types import QueryItem
    from rankscope.search.variants import varied_config
    from rankscope.services.catalog import endpoint_config

    check_spec(TrySpec(tuple(changes), query_id))

    def start(session: Session) -> Started:
        ev = evaluation_row(session, actor, evaluation_id, "curator")
        ep = session.get(Endpoint, ev.endpoint_id)
        qs = session.get(QuerySet, ev.query_set_id)
        if ep is None or qs is None:
            raise NotFoundError(f"evaluation #{evaluation_id} lost its endpoint or query set")
        base = endpoint_config(ep, boundary)
        found = read_changes(base, changes)
        rows = list(session.scalars(select(Query).where(Query.query_set_id == qs.id)
                                    .order_by(Query.position)))
        query_row = None
        if query_id is not None:
            query_row = next((q for q in rows if q.query_id == query_id), None)
            if query_row is None:
                raise NotFoundError(f"no query {query_id!r} in the evaluation's query set")
            rows = [query_row]
        number = (session.scalar(select(func.max(Try.number)).where(
            Try.evaluation_id == ev.id)) or 0) + 1
        config = varied_config(_endpoint_data(ep), found, name=f"{ep.name} try {number}",
                               source=f"try {number} of endpoint {ep.name}",
                               base_dir=base.base_dir, files=boundary.files)
        boundary.check_endpoint(config)
        row = Try(evaluation_id=ev.id, number=number,
                  changes=[[c.key, c.value] for c in found], config=dict(config.settings),
                  config_hash=config.config_hash, scope="query" if query_row else "all",
                  query_row_id=query_row.id if query_row else None, status="running",
                  created_by=actor.user_id, created_at=_now())
        session.add(row)
        session.flush()
        queries = [QueryItem(q.query_id, q.text, dict(q.params), q.need) for q in rows]
        project = session.get(Project, ev.project_id)
        return Started(_view(session, row), ev.id, config, queries, ev.depth, qs.name,
                       qs.source, project.name if project is not None else "")

    return store.write(start)


def complete_try(store: Store, actor: Actor, started: Started, *,
                 boundary: Boundary) -> TryView:
    """Send a started try's queries and keep the answers: ``done``, or ``failed`` with the
    engine's error (what was recorded stays)."""
    try_id, config, queries = started.view.id, started.config, started.queries
    scope, depth, evaluation_id = started.view.scope, started.depth, started.evaluation_id
    qs_name, qs_source, project_name = (started.query_set_name, started.query_set_source,
                                        started.project)

    async def take() -> Any:
        from rankscope.search.config import explains, open_endpoint
        from rankscope.services.snapshots import take_snapshot

        endpoint = open_endpoint(config, explain=explains(config), **boundary.open_options())
        try:
            return await take_snapshot(endpoint, queries, depth=depth,
                                       store=store if scope == "all" else None,
                                       name=config.name, query_set_name=qs_name,
                                       query_set_source=qs_source,
                                       concurrency=boundary.in_flight(config),
                                       project=project_name or None)
        finally:
            await endpoint.aclose()

    try:
        outcome = asyncio.run(take())
    except Exception as exc:  # the engine's failure is the try's outcome, shown on its page
        said = str(exc) if isinstance(exc, RankscopeError) else f"{type(exc).__name__}: {exc}"

        def failed(session: Session) -> TryView:
            row = session.get(Try, try_id)
            if row is None:
                raise NotFoundError("the try was deleted while running") from None
            row.status, row.error = "failed", said
            return _view(session, row)

        return store.write(failed)

    def finish(session: Session) -> TryView:
        row = session.get(Try, try_id)
        ev = session.get(Evaluation, evaluation_id)
        if row is None or ev is None:
            raise NotFoundError("the try's evaluation was deleted while it ran")
        by_id = {q.query_id: q for q in session.scalars(
            select(Query).join(QuerySet, Query.query_set_id == QuerySet.id)
            .where(QuerySet.id == ev.query_set_id))}
        for response in outcome.responses:
            hits = [hit_dict(h, i) for i, h in enumerate(response.hits, start=1)]
            add_tasks(session, ev, by_id[response.query.query_id], hits, "try",
                       actor.user_id)
            if scope == "query":
                row.results = {"query_id": response.query.query_id,
                               "request": dict(response.request),
                               "latency_ms": response.latency_ms,
                               "total_hits": response.total_hits, "hits": hits}
        row.snapshot_id = outcome.snapshot_id
        row.status, row.error = "done", None
        return _view(session, row)

    return store.write(finish)


def recover_interrupted_tries(store: Store) -> list[tuple[int, int]]:
    """Mark ``failed`` the tries a stopped server left ``running`` (call before serving).

    Returns ``(evaluation id, try number)`` of each.
    """

    def work(session: Session) -> list[tuple[int, int]]:
        stuck = list(session.scalars(select(Try).where(Try.status == "running")))
        for row in stuck:
            row.status, row.error = "failed", "the server stopped during the try; run it again"
        return [(row.evaluation_id, row.number) for row in stuck]

    return store.write(work)


def side_by_side(store: Store, actor: Actor, evaluation_id: int, number: int,
                 query_id: str | None = None) -> dict[str, Any]:
    """The try next to the evaluation's snapshot, query by query, with each result's task.

    ``{"try": TryView, "metric", "queries": [{"query_id", "text", "a", "b",
    "delta", "rows": [{"rank", "a": {..., "task_id", "explanation"}, "b": {...,
    "task_id", "explanation"}}]}], "why": {"a", "b"}}``: the grades are the
    evaluation's (aggregated by its rule, on its scale); a try of one query
    shows that query; ``why`` says, per side, what a result without an
    explanation means (:func:`rankscope.services.side_views.why_missing`).
    """
    from rankscope.services.campaign_data import load_data
    from rankscope.services.side_views import (
        attach_to_rows,
        evaluation_tasks,
        explanations_of,
        graded_as,
        snapshot_ranking,
        why_missing,
    )
    from rankscope.services.snapshot_compare import side_by_side as compare_side_by_side
    from rankscope.services.snapshot_diff import Ranking

    with store.read() as session:
        row, ev = _try_row(session, actor, evaluation_id, number)
        view = _view(session, row)
        snapshot_id = latest_snapshot_id(session, ev.id)
        if snapshot_id is None:
            raise ConflictError("the evaluation has no snapshot yet: run it first")
        data = load_data(session, ev)
        queries = [(q["query_id"], q["text"]) for q in data.queries]
        base = snapshot_ranking(session, snapshot_id, f"evaluation #{ev.id}", depth=ev.depth,
                                queries=queries)
        if row.status != "done":
            raise ConflictError(f"try #{number} is {row.status}"
                                + (f": {row.error}" if row.error else ""))
        if row.scope == "all" and row.snapshot_id is not None:
            other = snapshot_ranking(session, row.snapshot_id, f"try #{number}",
                                     depth=ev.depth, queries=queries)
        else:
            results = row.results or {"query_id": view.query_id, "hits": []}
            frame = pl.DataFrame(
                [(results["query_id"], h["doc_id"], h["rank"], h.get("score"), h.get("title"),
                  h.get("url"), h.get("snippet")) for h in results["hits"]],
                schema={"query_id": pl.String, "doc_id": pl.String, "rank": pl.Int64,
                        "score": pl.Float64, "title": pl.String, "url": pl.String,
                        "snippet": pl.String}, orient="row")
            other = Ranking(label=f"try #{number}", frame=frame,
                            query_ids=[results["query_id"]], texts=dict(queries),
                            depth=ev.depth)
            base = base.restricted(ev.depth, [results["query_id"]])
        only = [query_id] if query_id is not None else (
            [view.query_id] if view.query_id is not None else None)
        explained = (explanations_of(session, snapshot_id, only),
                     _explanations(session, row))
        why = {"a": why_missing(session, snapshot_id, asked=ev.explain or bool(explained[0])),
               "b": why_missing(session, row.snapshot_id, kind=str(row.config.get("kind")),
                               asked=True)}
        tasks = evaluation_tasks(session, ev.id)
        qrels, metric = graded_as(data, ev)
    found = compare_side_by_side(base, other, qrels=qrels, metric=metric, query_ids=only,
                                 allow_mismatch=True)
    out = found.to_dict()
    attach_to_rows(out, tasks=tasks, tasks_a=True, explained=explained)
    out["try"] = view.to_dict()
    out["why"] = why
    return out


def _explanations(session: Session, row: Try) -> dict[tuple[str, str], Any]:
    """Why each result of the try is there, where the engine said."""
    from rankscope.services.side_views import explanations_of

    if row.results:
        return {(row.results["query_id"], h["doc_id"]): h.get("explanation")
                for h in row.results.get("hits", []) if h.get("explanation") is not None}
    return {} if row.snapshot_id is None else explanations_of(session, row.snapshot_id)


def make_evaluation(store: Store, actor: Actor, evaluation_id: int, number: int, *,
                    boundary: Boundary, name: str | None = None) -> int:
    """Turn a whole set's try into an evaluation (graded as the first); returns its id.

    The new evaluation has the first's scale, rules, metrics, depth and
    guidelines, the first as its baseline, an endpoint of its own holding the
    changed file (``NAME try N``; the first's endpoint is not changed) and
    the try's snapshot with its grading tasks: it is ``ready`` at once.

    Raises
    ------
    ConflictError
        A try of one query, a try not done, a try made an evaluation already.
    """
    from rankscope.search.variants import toml_text
    from rankscope.services.campaign_runs import attach_snapshot
    from rankscope.services.campaigns import EvaluationSpec, create_evaluation
    from rankscope.services.catalog import save_endpoint

    with store.read() as session:
        row, ev = _try_row(session, actor, evaluation_id, number, "curator")
        if row.scope != "all" or row.snapshot_id is None:
            raise ConflictError(f"try #{number} ran one query: only a try of the whole query "
                                "set can become an evaluation")
        if row.status != "done":
            raise ConflictError(f"try #{number} is {row.status}")
        if row.made_evaluation_id is not None:
            raise ConflictError(f"try #{number} is evaluation #{row.made_evaluation_id} "
                                "already")
        ep = session.get(Endpoint, ev.endpoint_id)
        if ep is None:
            raise NotFoundError("the evaluation lost its endpoint")
        view = _view(session, row)
        settings = dict(row.config)
        spec = EvaluationSpec(
            name=name or f"{ev.name} try {number}", query_set_id=ev.query_set_id,
            endpoint_id=0, scale=ev.scale, grades_wanted=ev.grades_wanted,
            strategy=ev.strategy, metrics=list(ev.metrics), transforms=dict(ev.transforms),
            null_rules=ev.null_rules, depth=ev.depth, guidelines=ev.guidelines,
            baseline_id=ev.id, annotation=f"try #{number} of evaluation #{ev.id}: "
                                          f"{view.described}")
        project_id, snapshot_id, base_dir = ev.project_id, row.snapshot_id, ep.base_dir
        endpoint_name = ep.name
    settings["name"] = f"{endpoint_name} try {number}"
    settings.pop("base_dir", None)
    endpoint = save_endpoint(store, actor, project_id,
                             toml_text(settings, header=f"try #{number} of evaluation "
                                                        f"#{evaluation_id}: {view.described}"),
                             boundary=boundary, base_dir=base_dir)
    made = create_evaluation(store, actor, project_id,
                             dataclasses.replace(spec, endpoint_id=endpoint.id))
    attach_snapshot(store, made.id, snapshot_id)

    def mark(session: Session) -> None:
        row = session.scalar(select(Try).where(Try.evaluation_id == evaluation_id,
                                               Try.number == number))
        if row is not None:
            row.made_evaluation_id = made.id

    store.write(mark)
    return made.id
