"""The JSON API of tries and of a query's pool (thin over :mod:`rankscope.services.tries`).

``GET/POST /api/v1/evaluations/{id}/tries``, ``GET .../tries/{number}`` (the
try side by side with the evaluation's snapshot), ``POST
.../tries/{number}/evaluation`` and ``POST .../pool`` (a document added by
hand): what the Tries pages do, for a script; ``GET .../snapshots`` (the
project's snapshots) and ``GET .../snapshots/side?a=A&b=B`` (any two of them
side by side on the evaluation's grades, :mod:`rankscope.services.side_views`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Query, Request

from rankscope.app.core import ApiActor, Id, settings_of
from rankscope.app.schemas import Schema, schema_of
from rankscope.services import pool, side_views, tries

__all__ = ["router"]

router = APIRouter(prefix="/api/v1", tags=["api"])


if TYPE_CHECKING:
    TryIn = Schema
    PoolIn = Schema
else:
    # the fields of the services' specs, each field's limit and meaning written once there
    TryIn = schema_of(tries.TrySpec, "TryIn")
    PoolIn = schema_of(pool.PoolSpec, "PoolIn")


@router.get("/evaluations/{evaluation_id}/tries")
def try_list(request: Request, actor: ApiActor, evaluation_id: Id) -> list[dict[str, Any]]:
    """The evaluation's tries, newest first, with their settings."""
    return [t.to_dict() for t in tries.list_tries(settings_of(request).store, actor,
                                                  evaluation_id)]


@router.post("/evaluations/{evaluation_id}/tries", status_code=201)
def try_create(request: Request, actor: ApiActor, evaluation_id: Id,
               body: TryIn) -> dict[str, Any]:
    """Run a try (answers when done; ``status`` failed with the engine's error)."""
    settings = settings_of(request)
    spec = tries.TrySpec(**body.model_dump())
    return tries.run_try(settings.store, actor, evaluation_id, spec.changes,
                         boundary=settings.boundary, query_id=spec.query_id).to_dict()


@router.get("/evaluations/{evaluation_id}/tries/{number}")
def try_side_by_side(request: Request, actor: ApiActor, evaluation_id: Id, number: Id,
                     query_id: Annotated[str | None, Query(max_length=200)] = None
                     ) -> dict[str, Any]:
    """The try next to the evaluation's snapshot, query by query (moves, grades, tasks)."""
    return tries.side_by_side(settings_of(request).store, actor, evaluation_id, number,
                              query_id)


@router.post("/evaluations/{evaluation_id}/tries/{number}/evaluation", status_code=201)
def try_evaluation(request: Request, actor: ApiActor, evaluation_id: Id,
                   number: Id) -> dict[str, Any]:
    """Make a whole set's try an evaluation: ``{"evaluation_id"}``."""
    settings = settings_of(request)
    return {"evaluation_id": tries.make_evaluation(settings.store, actor, evaluation_id,
                                                   number, boundary=settings.boundary)}


@router.post("/evaluations/{evaluation_id}/pool", status_code=201)
def pool_add(request: Request, actor: ApiActor, evaluation_id: Id,
             body: PoolIn) -> dict[str, Any]:
    """Add a document to a query's pool by hand: ``{"task_id"}`` (409 if it is there)."""
    spec = pool.PoolSpec(**body.model_dump())
    return {"task_id": pool.add_to_pool(settings_of(request).store, actor, evaluation_id,
                                        spec.query_id, spec.doc_id, title=spec.title,
                                        url=spec.url, snippet=spec.snippet)}


@router.get("/evaluations/{evaluation_id}/snapshots")
def snapshot_list(request: Request, actor: ApiActor, evaluation_id: Id) -> list[dict[str, Any]]:
    """The snapshots of the evaluation's project, newest first (what each was taken for)."""
    return side_views.project_snapshots(settings_of(request).store, actor, evaluation_id)


@router.get("/evaluations/{evaluation_id}/snapshots/side")
def snapshots_side_by_side(request: Request, actor: ApiActor, evaluation_id: Id, a: Id,
                           b: Id) -> dict[str, Any]:
    """Snapshot ``b`` next to snapshot ``a`` (both of the project), query by query, on the
    evaluation's grades: moves, grades, B's grading tasks, explanations, warnings."""
    return side_views.snapshots_side_by_side(settings_of(request).store, actor,
                                             evaluation_id, a, b)
