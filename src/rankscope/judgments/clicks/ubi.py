"""User Behavior Insights (UBI 1.x) logs as a :class:`~rankscope.judgments.clicks.log.ClickLog`.

UBI keeps two record kinds (https://github.com/o19s/ubi, schema 1.0-1.3):

- **queries**: one per search: ``query_id`` (unique to that search),
  ``user_query`` (the text typed), ``query_response_hit_ids`` (the ids of the
  results, in the order shown) and ``object_id_field`` (which id they are);
- **events**: ``action_name`` (``click``, ``purchase``, ``impression``...),
  ``query_id`` (the search it follows), ``session_id``, ``timestamp`` and
  ``event_attributes``: ``object.object_id`` / ``object.object_id_field``
  (what was acted on) and ``position.ordinal`` (where it was shown).

Each search is one result page: its results are the query's hit ids (or,
without them, the positions of its impression events); a click or purchase
event marks its object on that page. Judgments are per query *text*
(``user_query``, spaces collapsed) unless a mapping from texts to query ids is
given. Records may be JSON Lines or a JSON list, also as OpenSearch exports
them (documents under ``_source``, bulk ``{"index": ...}`` lines are skipped).
Events that cannot be placed (no search, no position, an object the page did
not show) are left out and counted in the log's ``notes``.

The schema's examples count ``ordinal`` from 1 (the top result); some
producers count from 0: ``ordinal_base=0`` reads those, and an ordinal below
the base is an error rather than a silent shift.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import polars as pl

from rankscope.data._io import read_text
from rankscope.data.formats import guess_format
from rankscope.errors import InputError, OptionError, ParseError
from rankscope.judgments.clicks.log import ClickLog
from rankscope.judgments.io import json_records

if TYPE_CHECKING:
    from rankscope.data._io import PathLike

__all__ = [
    "CLICK_ACTIONS",
    "HIT_FIELDS",
    "IMPRESSION_ACTIONS",
    "PURCHASE_ACTIONS",
    "is_ubi_record",
    "read_ubi",
]

CLICK_ACTIONS = ("click", "click_through")
"""UBI ``action_name`` values counted as a click by default."""
PURCHASE_ACTIONS = ("purchase",)
"""UBI ``action_name`` values counted as a purchase (a click, weighted) by default."""
IMPRESSION_ACTIONS = ("impression",)
"""UBI ``action_name`` values telling that a result was shown (where hit ids are missing)."""
HIT_FIELDS = ("query_response_hit_ids", "query_response_object_ids",
              "query_response_objects_ids")
"""Where a UBI query lists its results in order (1.x name first, older names after)."""


def _unwrap(record: Any) -> Any:
    """An OpenSearch hit's ``_source``; None for a bulk action line."""
    if isinstance(record, Mapping):
        if "_source" in record and isinstance(record["_source"], Mapping):
            return record["_source"]
        if len(record) == 1 and next(iter(record)) in ("index", "create") \
                and isinstance(next(iter(record.values())), Mapping):
            return None
    return record


def is_ubi_record(record: Any) -> str | None:
    """``"queries"`` or ``"events"`` when a record looks like UBI's, else None."""
    record = _unwrap(record)
    if not isinstance(record, Mapping):
        return None
    if "action_name" in record:
        return "events"
    if "user_query" in record or any(k in record for k in HIT_FIELDS):
        return "queries"
    return None


def _records(path: PathLike, what: str) -> tuple[list[tuple[int | None, dict[str, Any]]], str]:
    fmt = guess_format(path)
    data, source = read_text(path)
    if fmt not in ("json", "jsonl"):
        # a UBI export is JSON; a .txt or extension-less file is read as JSON Lines
        fmt = "json" if data.lstrip()[:1] == b"[" else "jsonl"
    out: list[tuple[int | None, dict[str, Any]]] = []
    for line, raw in json_records(data, fmt, source):
        record = _unwrap(raw)
        if record is None:
            continue
        if not isinstance(record, Mapping):
            raise ParseError(f"expected a JSON object (a UBI {what} record)", source=source,
                             line=line)
        out.append((line, dict(record)))
    return out, source


def _id(value: Any, what: str, source: str, line: int | None) -> str | None:
    """A UBI id: text or a whole number; None when absent."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ParseError(f"{what} must be text or a whole number", source=source, line=line,
                         value=repr(value))
    text = str(value).strip()
    return text or None


@dataclass
class _Search:
    """One UBI search: its text, the results shown and what happened to them."""

    line: int | None = None
    text: str | None = None
    hits: list[str] | None = None
    id_field: str | None = None
    acted: list[tuple[str, str, int | None, int | None, str | None]] = field(
        default_factory=list)  # (kind, object, position, line, object_id_field)


def _read_queries(path: PathLike, searches: dict[str, _Search]) -> None:
    records, source = _records(path, "queries")
    for line, rec in records:
        qid = _id(rec.get("query_id"), "query_id", source, line)
        if qid is None:
            raise ParseError("a UBI query without a query_id", source=source, line=line)
        if qid in searches:
            raise ParseError(f"query_id {qid!r} given twice (first at line "
                             f"{searches[qid].line})", source=source, line=line)
        text = rec.get("user_query")
        if text is not None and not isinstance(text, str):
            raise ParseError("user_query must be text", source=source, line=line,
                             value=repr(text))
        hits_key = next((k for k in HIT_FIELDS if rec.get(k) is not None), None)
        hits: list[str] | None = None
        if hits_key is not None:
            raw = rec[hits_key]
            if not isinstance(raw, list):
                raise ParseError(f"{hits_key} must be a list of ids", source=source,
                                 line=line, value=repr(raw)[:80])
            hits = [_id(h, hits_key, source, line) or "" for h in raw]
            if "" in hits:
                raise ParseError(f"an empty id in {hits_key}", source=source, line=line)
            twice = [h for h, n in Counter(hits).items() if n > 1]
            if twice:
                raise ParseError(f"{hits_key} lists {twice[0]!r} twice", source=source,
                                 line=line)
        id_field = rec.get("object_id_field")
        searches[qid] = _Search(line=line, text=text, hits=hits or None,
                                id_field=id_field if isinstance(id_field, str) else None)


def _ordinal(position: Any, base: int, source: str, line: int | None) -> int | None:
    """``event_attributes.position.ordinal`` as a 1-based position (None if absent)."""
    if not isinstance(position, Mapping) or position.get("ordinal") is None:
        return None
    raw = position["ordinal"]
    if isinstance(raw, bool) or not isinstance(raw, int | float) \
            or (isinstance(raw, float) and not raw.is_integer()):
        raise ParseError("position.ordinal is not a whole number", source=source, line=line,
                         value=repr(raw))
    if raw < base:
        hint = " (if this log counts from 0, read it with ordinal base 0)" if base == 1 else ""
        raise ParseError(f"position.ordinal below {base}{hint}", source=source, line=line,
                         value=repr(raw))
    return int(raw) - base + 1


@dataclass
class _Counts:
    """What the reader could not place, by reason (for the log's notes)."""

    ignored_actions: Counter[str] = field(default_factory=Counter)
    no_query: int = 0
    no_object: int = 0
    no_text: int = 0
    unmapped: Counter[str] = field(default_factory=Counter)
    unshown: int = 0
    no_page: int = 0
    no_position: int = 0
    moved: int = 0

    def notes(self) -> list[str]:
        out = [f"{count} {text}" for count, text in (
            (self.no_query, "click/purchase/impression events without a query_id left out"),
            (self.no_object, "events without event_attributes.object.object_id left out"),
            (self.no_text, "searches without a user_query (in the queries or the events) left "
                           "out"),
            (self.no_page, "searches with clicks but no record of the results shown (no hit "
                           "ids, no impression events) left out"),
            (self.no_position, "impression events without position.ordinal left out"),
            (self.unshown, "clicks/purchases on objects not among the search's results left "
                           "out"),
            (self.moved, "clicks/purchases whose ordinal differs from the object's place in "
                         "the hit ids: the hit ids' place was used"),
        ) if count]
        if self.unmapped:
            few = ", ".join(repr(t) for t, _ in self.unmapped.most_common(3))
            out.append(f"{sum(self.unmapped.values())} searches of {len(self.unmapped)} query "
                       f"texts not in the query set left out (e.g. {few})")
        if self.ignored_actions:
            kinds = ", ".join(f"{a} ({n})" for a, n in self.ignored_actions.most_common(5))
            out.append(f"events of other actions ignored: {kinds}")
        return out


def _read_events(path: PathLike, searches: dict[str, _Search], actions: Mapping[str, str],
                 base: int, counts: _Counts) -> str:
    records, source = _records(path, "events")
    for line, rec in records:
        action = rec.get("action_name")
        if not isinstance(action, str) or not action.strip():
            raise ParseError("a UBI event without an action_name", source=source, line=line)
        kind = actions.get(action.strip().lower())
        if kind is None:
            counts.ignored_actions[action.strip()] += 1
            continue
        qid = _id(rec.get("query_id"), "query_id", source, line)
        if qid is None:
            counts.no_query += 1
            continue
        attributes = rec.get("event_attributes")
        attributes = attributes if isinstance(attributes, Mapping) else {}
        obj = attributes.get("object")
        obj = obj if isinstance(obj, Mapping) else {}
        object_id = _id(obj.get("object_id"), "object.object_id", source, line)
        if object_id is None:
            counts.no_object += 1
            continue
        position = _ordinal(attributes.get("position"), base, source, line)
        search = searches.setdefault(qid, _Search())
        text = rec.get("user_query")
        if search.text is None and isinstance(text, str):
            search.text = text
        id_field = obj.get("object_id_field")
        search.acted.append((kind, object_id, position, line,
                             id_field if isinstance(id_field, str) else None))
    return source


def _page(qid: str, search: _Search, counts: _Counts,
          events_source: str) -> dict[str, tuple[int, int, int]] | None:
    """``{doc: (position, clicked, purchased)}`` of one search, or None (left out)."""
    shown: dict[str, int] = {}
    if search.hits:
        shown = {doc: i for i, doc in enumerate(search.hits, start=1)}
    impressions = [a for a in search.acted if a[0] == "impression"]
    if not search.hits:
        taken: dict[int, tuple[str, int | None]] = {}
        for _, doc, position, line, _ in impressions:
            if position is None:
                counts.no_position += 1
                continue
            if position in taken and taken[position][0] != doc:
                raise ParseError(
                    f"search {qid!r} shows {taken[position][0]!r} and {doc!r} at position "
                    f"{position} (first at line {taken[position][1]})",
                    source=events_source, line=line)
            if doc in shown and shown[doc] != position:
                raise ParseError(f"search {qid!r} shows {doc!r} at positions {shown[doc]} and "
                                 f"{position}", source=events_source, line=line)
            taken[position] = (doc, line)
            shown[doc] = position
    acted = [a for a in search.acted if a[0] != "impression"]
    if not shown:
        if acted:
            counts.no_page += 1
        return None
    page = {doc: (position, 0, 0) for doc, position in shown.items()}
    for kind, doc, position, line, id_field in acted:
        if search.id_field and id_field and id_field != search.id_field:
            raise ParseError(
                f"the event names its object by {id_field!r} but search {qid!r} lists its "
                f"results by {search.id_field!r}", source=events_source, line=line)
        if doc not in page:
            if search.hits is None and position is not None \
                    and position not in {p for p, _, _ in page.values()}:
                page[doc] = (position, 0, 0)  # clicked, so shown, though no impression said so
            else:
                counts.unshown += 1
                continue
        at, _, purchased = page[doc]
        if search.hits and position is not None and position != at:
            counts.moved += 1
        page[doc] = (at, 1, 1 if kind == "purchase" else purchased)
    return page


def read_ubi(
    events: PathLike | None,
    queries: PathLike | None = None,
    *,
    click_actions: Sequence[str] = CLICK_ACTIONS,
    purchase_actions: Sequence[str] = PURCHASE_ACTIONS,
    impression_actions: Sequence[str] = IMPRESSION_ACTIONS,
    ordinal_base: int = 1,
    query_ids: Mapping[str, str] | None = None,
) -> ClickLog:
    """Read UBI queries and events into a click log (see the module docstring).

    Parameters
    ----------
    events : path or None
        The UBI events (JSON Lines or a JSON list).
    queries : path, optional
        The UBI queries: each search's text and the results it showed.
        Without it, events must carry ``user_query`` and pages come from
        impression events.
    click_actions, purchase_actions, impression_actions : sequence of str
        The ``action_name`` values that count as a click, as a purchase (also
        a click) and as "this result was shown" (case-insensitive).
    ordinal_base : {1, 0}
        What ``position.ordinal`` the top result has.
    query_ids : mapping, optional
        ``{query text: query id}``: judgments under these ids; searches whose
        text is not there are left out (counted in the notes).

    Raises
    ------
    ParseError
        A record that is not an object, a search without ``query_id``, a
        ``query_id`` twice, hit ids that are not a list or list an id twice,
        a bad ordinal, two documents at one position (file and line).
    """
    if ordinal_base not in (0, 1):
        raise OptionError(f"the ordinal base is 0 or 1, not {ordinal_base}")
    if events is None and queries is None:
        raise OptionError("give the UBI events (and the queries)")
    actions: dict[str, str] = {}
    for kind, names in (("impression", impression_actions), ("purchase", purchase_actions),
                        ("click", click_actions)):
        for name in names:
            key = name.strip().lower()
            if key in actions and actions[key] != kind:
                raise OptionError(f"action {name!r} is named as a {actions[key]} and a {kind}")
            actions[key] = kind
    searches: dict[str, _Search] = {}
    counts = _Counts()
    if queries is not None:
        _read_queries(queries, searches)
    events_source = "<events>"
    if events is not None:
        events_source = _read_events(events, searches, actions, ordinal_base, counts)
    folded = None if query_ids is None else {" ".join(k.split()): v
                                             for k, v in query_ids.items()}
    rows: list[tuple[str, str, str, int, int, int]] = []
    for qid, search in searches.items():
        if search.text is None or not search.text.strip():
            if search.acted or search.hits:
                counts.no_text += 1
            continue
        text = " ".join(search.text.split())
        key = text
        if folded is not None:
            if text not in folded:
                counts.unmapped[text] += 1
                continue
            key = folded[text]
        page = _page(qid, search, counts, events_source)
        if page is None:
            continue
        rows.extend((qid, key, doc, pos, clicked, purchased)
                    for doc, (pos, clicked, purchased) in page.items())
    if not rows:
        notes = "; ".join(counts.notes())
        raise InputError("no result page could be built from the UBI log"
                         + (f" ({notes})" if notes else ""), source=events_source)
    frame = pl.DataFrame(rows, schema=["session_id", "query_id", "doc_id", "position",
                                       "clicked", "purchased"], orient="row")
    source = str(events) if events is not None else str(queries)
    return ClickLog(frame, source=source, notes=counts.notes(), _locate=lambda row: None)
