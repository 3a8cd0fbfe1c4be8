"""How far the graders agree, where they do not, and a curator's grade that settles it.

- agreement: :func:`rankscope.judgments.agreement` (Cohen pairwise and
  weighted, Fleiss, Krippendorff) over every grader shown, LLM judges
  included; each grader against the consensus (Cohen's kappa between the
  grader's grades and the aggregated counted grade of the same results,
  rounded to the nearest grade of the scale, halves up); and each LLM judge
  against the people alone (the consensus of the counted grades of
  people and imports, so a judge that counts is not compared with itself);
- disagreements: results whose counted graders gave different grades,
  widest spread first, with every grade, reason and explanation, for a
  curator to adjudicate;
- :func:`adjudicate`: the curator's grade supersedes the graders' grades
  (which stay in the table) and closes the result to further grading.

Both pages are about the evaluation's own results: the results of its
snapshot within its depth (``scope="evaluation"``, the default), graded as
of its freeze when frozen. ``scope="project"`` is the project-wide view:
every grade of the project's results of the same queries (other
evaluations' results and depths included), shown on a page of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl
from sqlalchemy import select

from rankscope.errors import ConflictError, NotFoundError, OptionError
from rankscope.services.campaign_data import grade_details
from rankscope.services.campaigns import evaluation_row, query_key
from rankscope.services.dashboards import clean, load
from rankscope.services.limits import MAX_NAME, MAX_NOTE, check_spec, spec_field
from rankscope.store.models import utcnow
from rankscope.store.models_app import Adjudication, Grade, Item

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from rankscope.judgments.table import Judgments
    from rankscope.services.accounts import Actor
    from rankscope.services.campaign_data import EvaluationData
    from rankscope.store.db import Store

__all__ = ["SCOPES", "AdjudicationSpec", "adjudicate", "agreement_report", "disagreements"]

SCOPES = ("evaluation", "project")


def _scoped(data: EvaluationData, scope: str) -> tuple[Judgments, Judgments]:
    """The counted and advisory grades of the scope: the evaluation's results within its
    depth, or every result of its queries in the project."""
    if scope not in SCOPES:
        raise OptionError(f"scope must be one of {', '.join(SCOPES)}, not {scope!r}")
    if scope == "project":
        return data.judgments, data.advisory
    pair = pl.col("query_id") + "\x1f" + pl.col("doc_id")
    shown = data.hits.filter(pl.col("rank") <= data.depth).select(pair.alias("pair"))
    wanted = shown.get_column("pair").unique().to_list()

    def keep(j: Judgments) -> Judgments:
        return j.filter(pair.is_in(wanted))

    return keep(data.judgments), keep(data.advisory)


def _consensus(judgments: Judgments, data: EvaluationData) -> pl.DataFrame:
    from rankscope.judgments.aggregate import aggregate_frame
    from rankscope.judgments.scales import get_scale

    scale = get_scale(data.scale)
    if judgments.frame.height == 0:
        return pl.DataFrame(schema={"query_id": pl.String, "doc_id": pl.String,
                                    "grade": pl.Float64})
    frame = aggregate_frame(judgments, data.strategy, scale=data.scale).drop_nulls("grade")
    if scale is not None and scale.integer:  # a mean of 2 and 3 is 2.5: nearest grade, halves up
        frame = frame.with_columns((pl.col("grade") + 0.5).floor().clip(scale.min, scale.max))
    return frame.select("query_id", "doc_id", "grade")


def _against(graded: pl.DataFrame, rater: str, consensus: pl.DataFrame,
             scale: str) -> dict[str, Any]:
    """One grader's grades against a consensus: results in common, kappa, same grade."""
    from rankscope.judgments.agreement import cohen_kappa, two_raters

    own = graded.filter(pl.col("rater") == rater).select("query_id", "doc_id", "grade")
    both = own.join(consensus, on=["query_id", "doc_id"], suffix="_c")
    if both.height == 0:
        return {"rater": rater, "n_items": 0, "kappa": None, "agree": None, "mean_diff": None}
    table = cohen_kappa(two_raters(both, "grade", "grade_c", names=("grader", "consensus"),
                                   scale=scale))
    kappa = table.get_column("kappa")[0] if table.height else None
    diff = both.get_column("grade") - both.get_column("grade_c")
    return {"rater": rater, "n_items": both.height, "kappa": clean(kappa),
            "agree": int((diff == 0).sum()) / both.height,
            "mean_diff": clean(diff.mean())}


def agreement_report(store: Store, actor: Actor, evaluation_id: int,
                     scope: str = "evaluation") -> dict[str, Any]:
    """Agreement between the graders, per query, and each grader against the consensus.

    Keys of :meth:`rankscope.judgments.agreement.Agreement.to_dict`, plus
    ``vs_consensus`` (every grader: ``rater, kind, counts, n_items, kappa,
    agree, mean_diff``), ``llm_vs_people`` (each LLM judge against the
    people's consensus), ``raters`` (name -> kind) and ``scope``; over the
    evaluation's results within its depth, or (``scope="project"``) every
    graded result of its queries in the project.
    """
    from rankscope.judgments.agreement import agreement
    from rankscope.judgments.table import Judgments

    if scope not in SCOPES:
        raise OptionError(f"scope must be one of {', '.join(SCOPES)}, not {scope!r}")
    _, data = load(store, actor, evaluation_id)
    counted_j, advisory_j = _scoped(data, scope)
    every = Judgments(pl.concat([counted_j.frame, advisory_j.frame]),
                      source=data.judgments.source, scale=data.scale)
    graded = every.frame.drop_nulls("grade")
    if graded.height == 0:
        return {"n_items": 0, "n_raters": 0, "vs_consensus": [], "llm_vs_people": [],
                "raters": data.rater_kinds, "scope": scope}
    out = agreement(every, by_query=True).to_dict()
    counted = set(counted_j.frame.get_column("rater").unique().to_list())
    consensus = _consensus(counted_j, data)
    out["vs_consensus"] = [
        {**_against(graded, rater, consensus, data.scale),
         "kind": data.rater_kinds.get(rater, "person"), "counts": rater in counted}
        for rater in sorted(set(graded.get_column("rater").to_list()))]
    llms = sorted(r for r, kind in data.rater_kinds.items() if kind == "llm")
    people = counted_j.filter(~pl.col("rater").is_in(llms))
    people_consensus = _consensus(people, data)
    out["llm_vs_people"] = [_against(graded, rater, people_consensus, data.scale)
                            for rater in llms]
    out["raters"] = data.rater_kinds
    out["scope"] = scope
    return out


def disagreements(store: Store, actor: Actor, evaluation_id: int,
                  limit: int = 200, scope: str = "evaluation") -> list[dict[str, Any]]:
    """Results whose counted graders disagree, widest spread first, with every grade.

    Each entry: ``query_id, query_text, need, doc_id, title, url, spread,
    grades`` where ``grades`` lists every grade of the result that counted
    (as of the freeze when frozen; ``rater, kind, counts, value, reason,
    explanation``), LLM judges' too; the evaluation's results within its
    depth, or (``scope="project"``) every result of its queries.
    """
    if scope not in SCOPES:
        raise OptionError(f"scope must be one of {', '.join(SCOPES)}, not {scope!r}")
    ev, data = load(store, actor, evaluation_id)
    graded = _scoped(data, scope)[0].frame.drop_nulls("grade")
    if graded.height == 0:
        return []
    spread = (graded.group_by("query_id", "doc_id")
              .agg(pl.col("grade").max().alias("hi"), pl.col("grade").min().alias("lo"),
                   pl.col("grade").n_unique().alias("distinct"))
              .filter(pl.col("distinct") > 1)
              .with_columns((pl.col("hi") - pl.col("lo")).alias("spread"))
              .sort(["spread", "query_id", "doc_id"], descending=[True, False, False])
              .head(limit))
    queries = {q["query_id"]: q for q in data.queries}
    keys = {qid: query_key(q["text"], q["params"]) for qid, q in queries.items()}
    shown = {(r["query_id"], r["doc_id"]): r for r in data.hits.iter_rows(named=True)}
    wanted = sorted({keys[q] for q in spread.get_column("query_id").to_list()})
    with store.read() as session:
        details = grade_details(session, ev, wanted, data.as_of)
    out = []
    for r in spread.iter_rows(named=True):
        q = queries[r["query_id"]]
        hit = shown.get((r["query_id"], r["doc_id"]), {})
        out.append({"query_id": r["query_id"], "query_text": q["text"], "need": q["need"],
                    "doc_id": r["doc_id"], "title": hit.get("title"), "url": hit.get("url"),
                    "snippet": hit.get("snippet"), "spread": r["spread"],
                    "grades": details.get((keys[r["query_id"]], r["doc_id"]), [])})
    return out


@dataclass(frozen=True)
class AdjudicationSpec:
    """A curator's grade for a disputed result.

    Each field's meaning and limit are written once, here (``spec_field``): the
    service checks them and the API's input model is derived from them.
    """

    query_id: str = spec_field(doc="The query's id.", limit=MAX_NAME, label="the query id")
    doc_id: str = spec_field(doc="The document's id.", limit=MAX_NAME,
                             label="the document id")
    value: float = spec_field(doc="The settled grade, on the evaluation's scale.")
    note: str | None = spec_field(None, doc="Why (kept with the adjudication).",
                                  limit=MAX_NOTE, label="the note")


def adjudicate(store: Store, actor: Actor, evaluation_id: int, query_id: str, doc_id: str,
               value: float, note: str | None = None) -> dict[str, Any]:
    """Settle a result's grade: the curator's grade supersedes the graders' (kept as history)."""
    from rankscope.services.accounts import rater_for
    from rankscope.services.assignment import scale_of
    from rankscope.store.models import Query

    check_spec(AdjudicationSpec(query_id, doc_id, value, note))

    def work(session: Session) -> dict[str, Any]:
        ev = evaluation_row(session, actor, evaluation_id, "curator")
        scale = scale_of(ev)
        if isinstance(value, bool) or not isinstance(value, int | float) or not scale.contains(
                float(value)):
            raise OptionError(f"grade {value!r} is outside the {scale.describe()} scale")
        query = session.scalar(select(Query).where(Query.query_set_id == ev.query_set_id,
                                                   Query.query_id == query_id))
        if query is None:
            raise NotFoundError(f"no query {query_id!r} in evaluation #{ev.id}")
        item = session.scalar(select(Item).where(
            Item.project_id == ev.project_id, Item.query_key == query_key(query.text, query.params),
            Item.doc_id == doc_id).with_for_update())
        if item is None:
            raise NotFoundError(f"no graded result {doc_id!r} for query {query_id!r}")
        if session.scalar(select(Adjudication.id).where(Adjudication.item_id == item.id,
                                                        Adjudication.scale == ev.scale)):
            raise ConflictError("this result was adjudicated already")
        rater = rater_for(session, actor)
        current = list(session.scalars(select(Grade).where(
            Grade.item_id == item.id, Grade.active, Grade.scale == ev.scale)))
        for grade in current:
            grade.active = False
        session.flush()
        settled = Grade(item_id=item.id, rater_id=rater.id, scale=ev.scale, value=float(value),
                        explanation=note, source="adjudication", evaluation_id=ev.id,
                        active=True, created_at=utcnow())
        session.add(settled)
        session.flush()
        for grade in current:
            grade.superseded_by = settled.id
        session.add(Adjudication(item_id=item.id, evaluation_id=ev.id, curator_id=actor.user_id,
                                 grade_id=settled.id, scale=ev.scale, value=float(value),
                                 note=note, created_at=utcnow()))
        return {"grade_id": settled.id, "superseded": [g.id for g in current]}

    return store.write(work)
