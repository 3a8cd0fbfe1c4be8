"""A query's judged pool: the results a grader grades, and documents added to it.

Every result of a try (:mod:`rankscope.services.tries`) that the evaluation
does not already grade joins the query's judged pool as a task (origin
``try``, what a grader sees kept in ``shown``) through :func:`add_tasks`, so
the new results are graded in place like any other; :func:`add_to_pool`
adds a document found by other means (origin ``hand``), for instance by
:func:`search_other_words`, the evaluation's endpoint asked with other words.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from rankscope.errors import ConflictError, NotFoundError, OptionError
from rankscope.services.campaigns import ensure_items, evaluation_row, query_key
from rankscope.services.limits import MAX_NAME, MAX_NOTE, check_spec, check_text, spec_field
from rankscope.store.models import Endpoint, Query
from rankscope.store.models import utcnow as _now
from rankscope.store.models_app import Evaluation, Task

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from sqlalchemy.orm import Session

    from rankscope.search.types import Hit
    from rankscope.services.accounts import Actor
    from rankscope.services.boundary import Boundary
    from rankscope.store.db import Store

__all__ = ["PoolSpec", "add_tasks", "add_to_pool", "hit_dict", "search_other_words"]


@dataclass(frozen=True)
class PoolSpec:
    """A document added by hand to a query's pool, with what a grader sees of it."""

    query_id: str = spec_field(doc="The query's id.", limit=MAX_NAME, label="the query id")
    doc_id: str = spec_field(doc="The document's id.", limit=MAX_NAME,
                             label="the document id")
    title: str | None = spec_field(None, doc="Its title.", limit=MAX_NOTE, label="the title")
    url: str | None = spec_field(None, doc="Its link (http or https).", limit=MAX_NOTE,
                                 label="the URL")
    snippet: str | None = spec_field(None, doc="Its snippet.", limit=MAX_NOTE,
                                     label="the snippet")


def hit_dict(hit: Hit, rank: int) -> dict[str, Any]:
    """A hit as a try keeps it and a grader sees it (``rank`` from 1)."""
    return {"rank": rank, "doc_id": hit.doc_id, "score": hit.score, "title": hit.title,
            "snippet": hit.snippet, "url": hit.url, "image": hit.image,
            "explanation": hit.explanation}


def add_tasks(session: Session, ev: Evaluation, query_row: Query,
               hits: Sequence[Mapping[str, Any]], origin: str,
               user_id: int | None) -> list[Task]:
    """Tasks for the hits the evaluation does not grade yet (their item made when missing).

    ``origin`` says how they joined the pool (``try``, ``hand``); what a grader
    sees of each (title, snippet, URL, image) is kept in the task's ``shown``.
    """
    key = query_key(query_row.text, query_row.params)
    items = ensure_items(session, ev.project_id,
                         [(key, query_row.text, str(h["doc_id"])) for h in hits])
    have = set(session.scalars(select(Task.item_id).where(
        Task.evaluation_id == ev.id, Task.item_id.in_(list(items.values())))))
    made = []
    now = _now()
    for hit in hits:
        item_id = items[(key, str(hit["doc_id"]))]
        if item_id in have:
            continue
        shown = {k: hit.get(k) for k in ("title", "snippet", "url", "image")}
        task = Task(evaluation_id=ev.id, item_id=item_id, query_row_id=query_row.id,
                    position=int(hit.get("rank") or 0), grades_wanted=ev.grades_wanted,
                    created_at=now, origin=origin, added_by=user_id, shown=shown)
        session.add(task)
        have.add(item_id)
        made.append(task)
    session.flush()
    return made


def add_to_pool(store: Store, actor: Actor, evaluation_id: int, query_id: str, doc_id: str,
                *, title: str | None = None, url: str | None = None,
                snippet: str | None = None) -> int:
    """Add a document to a query's judged pool by hand; returns its task's id.

    The document is graded like any other result of the evaluation and marked
    as added by hand (``origin`` hand, ``added_by`` the curator).

    Raises
    ------
    ConflictError
        The evaluation grades that document for that query already.
    """
    check_spec(PoolSpec(query_id, doc_id, title, url, snippet))
    if not doc_id.strip():
        raise OptionError("give the document's id")
    if url and not url.lower().startswith(("http://", "https://")):
        raise OptionError("a result's URL must be http(s)")

    def work(session: Session) -> int:
        ev = evaluation_row(session, actor, evaluation_id, "curator")
        query_row = session.scalar(select(Query).where(Query.query_set_id == ev.query_set_id,
                                                       Query.query_id == query_id))
        if query_row is None:
            raise NotFoundError(f"no query {query_id!r} in the evaluation's query set")
        made = add_tasks(session, ev, query_row, [{"doc_id": doc_id.strip(), "rank": 0,
                                                    "title": title, "url": url,
                                                    "snippet": snippet}],
                          "hand", actor.user_id)
        if not made:
            raise ConflictError(f"{doc_id.strip()!r} is in query {query_id!r}'s pool already")
        return made[0].id

    return store.write(work)


def search_other_words(store: Store, actor: Actor, evaluation_id: int, text: str, *,
                       boundary: Boundary, depth: int = 20) -> list[dict[str, Any]]:
    """Search the evaluation's endpoint (as it is) with other words; nothing is kept.

    What a curator looks through to find a document the engine did not
    return for a query, and add it to that query's pool (:func:`add_to_pool`).
    """
    from rankscope.search.config import open_endpoint
    from rankscope.search.types import QueryItem
    from rankscope.services.catalog import endpoint_config
    from rankscope.services.snapshots import take_snapshot

    check_text(text, "the search", MAX_NAME)
    if not text.strip():
        raise OptionError("give the words to search for")
    with store.read() as session:
        ev = evaluation_row(session, actor, evaluation_id, "curator")
        ep = session.get(Endpoint, ev.endpoint_id)
        if ep is None:
            raise NotFoundError("the evaluation lost its endpoint")
        config = endpoint_config(ep, boundary)

    async def take() -> Any:
        endpoint = open_endpoint(config, **boundary.open_options())
        try:
            return await take_snapshot(endpoint, [QueryItem("search", text.strip(), {}, None)],
                                       depth=depth, concurrency=1)
        finally:
            await endpoint.aclose()

    outcome = asyncio.run(take())
    return [hit_dict(h, i) for i, h in enumerate(outcome.responses[0].hits, start=1)]
