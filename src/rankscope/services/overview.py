"""A project's evaluations at a glance: each one's grading progress, its headline
metric and whether its numbers are frozen (the project page's table).

The progress is :func:`rankscope.services.grading_progress.progress`'s (counted
grades given over grades wanted); the headline metric is the evaluation's first
metric, its mean as the metrics page computes it
(:func:`rankscope.services.dashboards.evaluation_metrics`), shown to curators
only (judges do not see metrics).

A headline is computed once per state of its evaluation's data and kept in
this process (:data:`KEEP` of them per store, the least recently shown
dropped first) under :func:`rankscope.services.campaign_data.data_stamp`:
a frozen evaluation's for good, a provisional one's until a grade, an undo,
a regrade, an adjudication, a rater let count, a run or a freeze changes its
stamp, read on every view (three small reads) before the data it stands
for: never a number from a state that has passed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from rankscope.services import (
    campaigns,
    dashboards,
    freezing,
    grading_progress,
    projects,
)
from rankscope.services.campaign_data import data_stamp
from rankscope.services.kept import KeptByStamp
from rankscope.store.models_app import Evaluation

if TYPE_CHECKING:
    from rankscope.services.accounts import Actor
    from rankscope.store.db import Store

__all__ = ["KEEP", "EvaluationSummary", "project_overview"]

KEEP = 512
"""Headlines kept per store (each a few dozen bytes)."""

_Headline = tuple[str | None, float | None]
_KEPT: KeptByStamp[_Headline] = KeptByStamp(KEEP)


@dataclass(frozen=True)
class EvaluationSummary:
    """One row of the project page."""

    evaluation: campaigns.EvaluationView
    filled: int
    """Counted grades given (an adjudicated result counts as full)."""
    slots: int
    """Grades wanted over all its results."""
    headline: str | None
    """The first metric's name (None for a judge, who sees no metric)."""
    headline_value: float | None
    """Its mean over the queries with a value (None: nothing graded yet)."""
    frozen_at: str | None
    """When its numbers were frozen (None: provisional, recomputed on today's grades)."""


def project_overview(store: Store, actor: Actor, project_id: int) -> list[EvaluationSummary]:
    """Every evaluation of the project, newest first, with its progress and headline."""
    project = projects.get_project(store, actor, project_id)
    curator = projects.RANK[project.role] >= projects.RANK["curator"]
    rows = []
    loaded = dashboards.Loaded()
    for ev in campaigns.list_evaluations(store, actor, project_id):
        filled = slots = 0
        if ev.status == "ready" and ev.frozen_at is None and freezing.auto_freeze(store, ev.id):
            # complete grading freezes an evaluation: the page says so the moment it is
            ev = campaigns.get_evaluation(store, actor, ev.id)
        loaded.freezing_checked(ev.id)  # its headline's read need not check again
        if ev.status == "ready":
            done = grading_progress.progress(store, actor, ev.id)
            filled, slots = done["filled"], done["slots"]
        rows.append((ev, filled, slots))
    wanted = [ev.id for ev, *_ in rows if curator and ev.status == "ready" and ev.metrics]
    # every stamp before any data: evaluations of one query set share one read of its grades
    # (a Loaded), and a headline is kept under a stamp read before the data it stands for
    with store.read() as session:
        found = [session.get(Evaluation, i) for i in wanted]
        stamps = {row.id: data_stamp(session, row) for row in found if row is not None}
    out = []
    for ev, filled, slots in rows:
        headline = value = None
        if ev.id in stamps:
            headline, value = _headline(store, actor, ev.id, stamps[ev.id], loaded)
        out.append(EvaluationSummary(ev, filled, slots, headline, value, ev.frozen_at))
    return out


def _headline(store: Store, actor: Actor, evaluation_id: int, stamp: tuple[Any, ...],
              loaded: dashboards.Loaded) -> _Headline:
    """The first metric and its mean, as the metrics page computes them (a curator's),
    once per :func:`~rankscope.services.campaign_data.data_stamp` of the evaluation
    (``stamp``, read before the data)."""
    kept = _KEPT.get(store, stamp)
    if kept is not None:
        return kept
    # its number alone: the hits without their texts (title, snippet, URL)
    _, data = dashboards.load(store, actor, evaluation_id, loaded=loaded, texts=False)
    # the first metric alone: a metric's mean does not depend on the others computed with it
    means = dashboards.evaluation_metrics(replace(data, metrics=data.metrics[:1]),
                                          per_query=False)["mean"]
    name = (data.metrics[0] if data.metrics and data.metrics[0] in means
            else next(iter(means), None))
    answer = name, (means.get(name) if name is not None else None)
    _KEPT.put(store, stamp, answer)
    return answer
