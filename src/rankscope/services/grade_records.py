"""The grades exports' rows: every grade of an evaluation's results, a complete record.

Beside the grades its numbers rest on, the record keeps every grade that no
longer counts (superseded by a regrade, an import or an adjudication,
retracted by an undo, given after the evaluation was frozen, or a rater's
kept apart), each flagged in ``grade_status`` with its reason, explanation,
time, grader, source and the adjudication's note. rankscope's grades readers
take only the ``counted`` rows (:func:`rankscope.judgments.io.judgments_of`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl
from sqlalchemy import select

from rankscope.services.campaigns import query_key
from rankscope.services.grade_history import counting_at, latest_per_rater
from rankscope.store.models_app import Adjudication, Grade, Item, Rater

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from rankscope.services.campaign_data import EvaluationData
    from rankscope.store.models_app import Evaluation

__all__ = ["GRADE_COLUMNS", "grade_records"]

GRADE_COLUMNS = {
    "query_id": pl.String, "doc_id": pl.String, "rater": pl.String, "grade": pl.Float64,
    "grade_status": pl.String, "reason": pl.String, "explanation": pl.String,
    "given_at": pl.String, "rater_kind": pl.String, "source": pl.String,
    "evaluation_id": pl.Int64, "grade_id": pl.Int64, "superseded_by": pl.Int64,
    "retracted_at": pl.String, "adjudication_note": pl.String,
}
"""The columns of the grades exports, in order."""


def grade_records(session: Session, ev: Evaluation, data: EvaluationData) -> list[tuple[Any, ...]]:
    """Every grade of the evaluation's queries' results on its scale, as :data:`GRADE_COLUMNS`.

    ``grade_status`` is ``counted`` for the grades ``data`` aggregates (as of
    its ``as_of``), ``advisory`` for those of raters kept apart at that
    moment, and for the others why they do not count: ``after freeze``,
    ``retracted`` or ``superseded``. Rows by result, then by when given.
    """
    ids_of: dict[str, list[str]] = {}
    for q in data.queries:
        ids_of.setdefault(query_key(q["text"], q["params"]), []).append(q["query_id"])
    if not ids_of:
        return []
    scope = (Item.project_id == ev.project_id, Item.query_key.in_(list(ids_of)),
             Grade.scale == ev.scale)
    counting = {row[0] for row in latest_per_rater(session.execute(
        select(Grade.id, Grade.item_id, Grade.rater_id, Grade.created_at)
        .join(Item, Grade.item_id == Item.id).where(*scope, counting_at(data.as_of))).all(),
        item=1, rater=2, created=3, grade_id=0)}
    rows = session.execute(
        select(Item.query_key, Item.doc_id, Rater.name, Rater.kind, Rater.counts, Grade,
               Adjudication.note)
        .join(Grade, Grade.item_id == Item.id).join(Rater, Grade.rater_id == Rater.id)
        .outerjoin(Adjudication, Adjudication.grade_id == Grade.id)
        .where(*scope).order_by(Item.id, Grade.created_at, Grade.id)).all()
    # an undo clears the link of the grade it brings back; as of a moment between the
    # regrade and its undo, that grade was superseded by the rater's next grade of the result
    next_of: dict[int, int] = {}
    last_of: dict[tuple[int, int], int] = {}
    for *_, g, _note in rows:
        before = last_of.get((g.item_id, g.rater_id))
        if before is not None:
            next_of[before] = g.id
        last_of[(g.item_id, g.rater_id)] = g.id
    out: list[tuple[Any, ...]] = []
    apart_then = set(ev.frozen_apart or ()) if data.as_of is not None else None
    for key, doc, rater, kind, counts, g, note in rows:
        if apart_then is not None:
            counts = g.rater_id not in apart_then
        if g.id in counting:
            status = "counted" if counts else "advisory"
        elif data.as_of is not None and g.created_at > data.as_of:
            status = "after freeze"
        elif g.retracted_at is not None and (data.as_of is None or g.retracted_at <= data.as_of):
            status = "retracted"
        else:
            status = "superseded"
        successor = g.superseded_by
        if status == "superseded" and successor is None:
            successor = next_of.get(g.id)
        out.extend((qid, doc, rater, g.value, status, g.reason, g.explanation,
                    g.created_at.isoformat(), kind, g.source, g.evaluation_id, g.id,
                    successor,
                    None if g.retracted_at is None else g.retracted_at.isoformat(), note)
                   for qid in ids_of[key])
    return out
