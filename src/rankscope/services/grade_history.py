"""Grades as they stood at a moment: what a frozen evaluation's numbers are computed on.

Grade rows are never deleted: a regrade or an adjudication sets the old
row's ``superseded_by`` (the new row's ``created_at`` is when it stopped
counting), an undo sets ``retracted_at``. A grade therefore counted at a
moment ``t`` when it was given at or before ``t``, was not retracted by
then and was not superseded by a grade given at or before ``t``. An undo
that brings an earlier grade back clears that grade's ``superseded_by``, so
for a moment between the regrade and its undo both rows look current: of
one rater's grades of one item, the one given last is the one that counted
(:func:`latest_per_rater`), which is what the grader saw at that moment.

:func:`completion_time` finds the moment an evaluation's grading became
complete (every result with the grades it wants, or adjudicated), from the
same rows, by one pass over the times grades started and stopped counting.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import and_, exists, func, or_, select
from sqlalchemy.orm import aliased

from rankscope.store.models_app import Adjudication, Grade, Rater, Task

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from datetime import datetime

    from sqlalchemy.orm import Session
    from sqlalchemy.sql.elements import ColumnElement

    from rankscope.store.models_app import Evaluation

__all__ = ["completion_time", "counting_at", "incomplete_tasks", "latest_per_rater"]


def counting_at(as_of: datetime | None) -> ColumnElement[bool]:
    """The grades that counted at ``as_of`` (the active ones when None), before
    :func:`latest_per_rater` keeps one per rater and item."""
    if as_of is None:
        return Grade.active.is_(True)
    successor = aliased(Grade)
    return and_(Grade.created_at <= as_of,
                or_(Grade.retracted_at.is_(None), Grade.retracted_at > as_of),
                ~exists(select(successor.id).where(successor.id == Grade.superseded_by,
                                                   successor.created_at <= as_of)))


def latest_per_rater(rows: Iterable[Sequence[Any]], *, item: int, rater: int, created: int,
                     grade_id: int) -> list[Sequence[Any]]:
    """Of the rows of one (item, rater), the grade given last (by time, then id), in order.

    ``item``, ``rater``, ``created`` and ``grade_id`` are the positions of
    those values in each row; the rows keep their order.
    """
    rows = list(rows)
    best: dict[tuple[Any, Any], tuple[Any, Any]] = {}
    for row in rows:
        key, rank = (row[item], row[rater]), (row[created], row[grade_id])
        if key not in best or rank > best[key]:
            best[key] = rank
    return [row for row in rows if best[(row[item], row[rater])] == (row[created], row[grade_id])]


def incomplete_tasks(session: Session, ev: Evaluation) -> int:
    """Results of the evaluation without the counted grades they want (and not adjudicated).

    ``tasks.grades_counted`` is kept by the database (migration 0005_grading).
    """
    settled = exists(select(Adjudication.id).where(Adjudication.item_id == Task.item_id,
                                                   Adjudication.scale == ev.scale))
    return int(session.scalar(select(func.count(Task.id)).where(
        Task.evaluation_id == ev.id, Task.grades_counted < Task.grades_wanted,
        ~settled)) or 0)


def completion_time(session: Session, ev: Evaluation) -> datetime | None:
    """The first moment every result of the evaluation had the grades it wants, or None.

    A result is complete when as many raters that count as it wants had a
    grade of it (a value or "can't tell") at that moment, or a curator's
    adjudication of it counted then. None when it has no result or is not
    complete now.
    """
    tasks = dict(session.execute(select(Task.item_id, Task.grades_wanted)
                                 .where(Task.evaluation_id == ev.id)).all())
    if not tasks:
        return None
    successor = aliased(Grade)
    rows = session.execute(
        select(Grade.item_id, Grade.rater_id, Grade.source, Grade.created_at,
               Grade.retracted_at, successor.created_at)
        .join(Task, and_(Task.item_id == Grade.item_id, Task.evaluation_id == ev.id))
        .join(Rater, Grade.rater_id == Rater.id)
        .outerjoin(successor, successor.id == Grade.superseded_by)
        .where(Grade.scale == ev.scale,
               or_(Rater.counts, Grade.source == "adjudication"))).all()
    # (time, 0 = stops counting before 1 = starts at the same moment, item, rater, weight);
    # a curator's adjudication settles the result whatever it wants
    events: list[tuple[datetime, int, int, int, int]] = []
    for item_id, rater_id, source, start, retracted, replaced in rows:
        weight = tasks[item_id] if source == "adjudication" else 1
        events.append((start, 1, item_id, rater_id, weight))
        ends = [t for t in (retracted, replaced) if t is not None]
        if ends:
            events.append((min(ends), 0, item_id, rater_id, weight))
    events.sort(key=lambda e: (e[0], e[1]))
    live: dict[tuple[int, int, int], int] = {}
    count = dict.fromkeys(tasks, 0)
    missing = len(tasks)
    for i, (when, kind, item_id, rater_id, weight) in enumerate(events):
        key = (item_id, rater_id, weight)
        before = count[item_id] >= tasks[item_id]
        n = live.get(key, 0)
        if kind == 1:
            live[key] = n + 1
            if n == 0:
                count[item_id] += weight
        else:
            live[key] = n - 1
            if n == 1:
                count[item_id] -= weight
        missing += int(before) - int(count[item_id] >= tasks[item_id])
        last_of_moment = i + 1 == len(events) or events[i + 1][0] != when
        if last_of_moment and missing == 0:
            return when
    return None
