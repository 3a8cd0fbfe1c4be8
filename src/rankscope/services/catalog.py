"""A project's query sets and search endpoints, as curators give them to the app.

Query sets are read with the library's strict reader
(:func:`rankscope.search.queries.parse_queries`: TSV ``query_id<TAB>text``
with optional ``need`` and parameter columns, or TREC topics); endpoints are
TOML text checked by :func:`rankscope.search.config.endpoint_from_dict`,
which refuses credentials in the file (they are named by environment
variable and read only when a snapshot is taken), and by the server's
:class:`~rankscope.services.boundary.Boundary` (files inside its directory,
only the variables and hosts its operator allows).
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from rankscope.errors import ConfigError, InputError, NotFoundError
from rankscope.services.limits import MAX_NAME, check_spec, spec_field
from rankscope.store.models import Endpoint, Query, QuerySet, utcnow

if TYPE_CHECKING:
    from collections.abc import Sequence

    from sqlalchemy.orm import Session

    from rankscope.search.types import EndpointConfig, QueryItem
    from rankscope.services.accounts import Actor
    from rankscope.services.boundary import Boundary
    from rankscope.store.db import Store

__all__ = [
    "MAX_TEXT",
    "EndpointSpec",
    "EndpointView",
    "QuerySetSpec",
    "QuerySetView",
    "endpoint_config",
    "get_endpoint",
    "get_query_set",
    "import_query_set",
    "import_query_set_from_collection",
    "list_endpoints",
    "list_query_sets",
    "query_set_queries",
    "save_endpoint",
]

MAX_TEXT = 5 * 1024 * 1024
"""The largest query set or endpoint text accepted (5 MiB)."""


@dataclass(frozen=True)
class QuerySetSpec:
    """A query set: TSV (``query_id<TAB>text[<TAB>need]``) or TREC topics, as text; or
    ``collection``: ``irds:NAME``, a public collection the operator allows.

    Each field's meaning and limit are written once, here (``spec_field``): the
    service checks them and the API's input model is derived from them.
    """

    name: str = spec_field(doc="The query set's name (default queries).", limit=MAX_NAME,
                           label="the query set's name")
    text: str = spec_field("", doc="The queries: TSV or TREC topics (up to 5 MiB).",
                           limit=MAX_TEXT, label="the query set")
    source: str | None = spec_field(None, doc="The file's name, named by errors.",
                                    limit=MAX_NAME, label="the file name")
    collection: str | None = spec_field(
        None, doc="A public collection's queries instead of text: irds:NAME.", limit=MAX_NAME,
        label="the collection")


@dataclass(frozen=True)
class EndpointSpec:
    """An endpoint file's TOML text (credentials only as environment variable names)."""

    toml: str = spec_field(doc="The endpoint file (TOML, up to 5 MiB).", limit=MAX_TEXT,
                           label="the endpoint")
    name: str | None = spec_field(None, doc="Its name (default: the file's own name).",
                                  limit=MAX_NAME, label="the endpoint's name")


@dataclass(frozen=True)
class QuerySetView:
    """A query set as listed."""

    id: int
    project_id: int
    name: str
    n_queries: int
    created_at: str


@dataclass(frozen=True)
class EndpointView:
    """An endpoint as listed (its settings hold no secret, only variable names)."""

    id: int
    project_id: int
    name: str
    kind: str
    toml: str | None
    config_hash: str
    updated_at: str


def _size(text: str, what: str) -> None:
    if len(text.encode("utf-8")) > MAX_TEXT:
        raise InputError(f"{what} is larger than {MAX_TEXT // (1024 * 1024)} MiB")


def import_query_set(store: Store, actor: Actor, project_id: int, name: str, text: str,
                     source: str | None = None) -> QuerySetView:
    """Read a query set (TSV or TREC topics) into the project; the same content is kept once.

    Raises
    ------
    ParseError
        A malformed line (its number), a repeated query id, no query at all.
    """
    from rankscope.search.queries import parse_queries

    _size(text, "the query set")
    check_spec(QuerySetSpec(name, text, source))
    name = name.strip() or "queries"
    label = source or name
    queries = parse_queries(text.lstrip("\ufeff"), label)
    if not queries:
        raise InputError("no query in the file", source=label)
    return _keep_query_set(store, actor, project_id, name, source, queries)


def import_query_set_from_collection(store: Store, actor: Actor, project_id: int, name: str,
                                     collection: str, allowed: Sequence[str]) -> QuerySetView:
    """A public collection's queries (``irds:NAME``, read from ir_datasets' cache) as a
    query set, when the operator allows that collection (``allowed``: name patterns).

    Raises
    ------
    ForbiddenError
        The collection is not among those allowed.
    InputError
        Not ``irds:NAME``, no such collection, its files not in the cache, more
        text than a query set file may hold, a name too long or with a NUL.
    """
    from rankscope.data.irds import check_allowed, is_irds
    from rankscope.search.queries import read_queries

    check_spec(QuerySetSpec(name, collection=collection))
    collection = collection.strip()
    if not is_irds(collection):
        raise InputError("a collection is named irds:NAME, e.g. irds:beir/scifact/test",
                         value=collection)
    check_allowed(collection, allowed)
    queries = read_queries(collection)
    _size("".join(q.text + (q.need or "") for q in queries), "the query set")
    return _keep_query_set(store, actor, project_id, name.strip() or collection, collection,
                           queries)


def _keep_query_set(store: Store, actor: Actor, project_id: int, name: str,
                    source: str | None, queries: Sequence[QueryItem]) -> QuerySetView:
    from rankscope.services.projects import require_project
    from rankscope.store.snapshot_writes import query_set_for

    items = list(queries)

    def work(session: Session) -> QuerySetView:
        project = require_project(session, actor, project_id, "curator")
        qs = query_set_for(session, project, name, source, items)
        return QuerySetView(qs.id, project.id, qs.name, len(items), qs.created_at.isoformat())

    return store.write(work)


def _query_set_row(session: Session, actor: Actor, query_set_id: int) -> QuerySet:
    from rankscope.services.projects import require_project

    qs = session.get(QuerySet, query_set_id)
    if qs is None:
        raise NotFoundError(f"no query set #{query_set_id}")
    require_project(session, actor, qs.project_id, "judge")
    return qs


def list_query_sets(store: Store, actor: Actor, project_id: int) -> list[QuerySetView]:
    """The project's query sets, newest first."""
    from rankscope.services.projects import require_project

    with store.read() as session:
        require_project(session, actor, project_id, "judge")
        rows = session.execute(
            select(QuerySet, func.count(Query.id))
            .outerjoin(Query, Query.query_set_id == QuerySet.id)
            .where(QuerySet.project_id == project_id).group_by(QuerySet.id)
            .order_by(QuerySet.id.desc())).all()
        return [QuerySetView(q.id, q.project_id, q.name, int(n), q.created_at.isoformat())
                for q, n in rows]


def get_query_set(store: Store, actor: Actor, query_set_id: int) -> QuerySetView:
    """One query set (NotFoundError when the actor cannot see it)."""
    with store.read() as session:
        qs = _query_set_row(session, actor, query_set_id)
        n = session.scalar(select(func.count(Query.id)).where(Query.query_set_id == qs.id)) or 0
        return QuerySetView(qs.id, qs.project_id, qs.name, int(n), qs.created_at.isoformat())


def query_set_queries(store: Store, actor: Actor, query_set_id: int) -> list[dict[str, Any]]:
    """``query_id, text, need, params`` of every query, in order."""
    with store.read() as session:
        _query_set_row(session, actor, query_set_id)
        return [{"query_id": q.query_id, "text": q.text, "need": q.need, "params": q.params}
                for q in session.scalars(select(Query).where(Query.query_set_id == query_set_id)
                                         .order_by(Query.position))]


def _check_storable(node: Any, source: str, key: str = "") -> None:
    """Refuse, at any key, a number TOML reads as nan or infinite (``nan``, ``inf``,
    ``1e309``) and a text holding NUL (``"\\u0000"``): no setting means them, and
    PostgreSQL keeps neither in JSON."""
    if isinstance(node, float) and not math.isfinite(node):
        raise ConfigError(f"{key or 'a value'} must be a finite number", source=source,
                          value=str(node))
    if isinstance(node, str) and "\x00" in node:
        raise ConfigError(f"{key or 'a value'} may not hold a NUL character", source=source)
    items = node.items() if isinstance(node, dict) else (
        enumerate(node) if isinstance(node, list) else ())
    for k, v in items:
        if isinstance(k, str) and "\x00" in k:
            raise ConfigError(f"a key under {key or 'the top'} may not hold a NUL character",
                              source=source)
        _check_storable(v, source, f"{key}[{k}]" if isinstance(k, int) else
                        (f"{key}.{k}" if key else str(k)))


def _parse_endpoint(text: str, name: str | None, base_dir: str,
                    boundary: Boundary) -> tuple[dict[str, Any], EndpointConfig]:
    from rankscope.search.config import endpoint_from_dict

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML: {exc}", source=name or "endpoint") from None
    if name:
        data["name"] = name
    _check_storable(data, name or str(data.get("name", "endpoint")).replace("\x00", ""))
    config = endpoint_from_dict(data, source=f"endpoint {data.get('name', '')}".strip(),
                                base_dir=base_dir, files=boundary.files)
    boundary.check_endpoint(config)
    return data, config


def save_endpoint(store: Store, actor: Actor, project_id: int, text: str, *,
                  boundary: Boundary, name: str | None = None,
                  base_dir: str | Path | None = None) -> EndpointView:
    """Add an endpoint from TOML text, or replace the one of the same name.

    ``boundary`` is the server's (the files, variables, hosts and public
    collections the operator allows: an embedded corpus named ``irds:NAME``
    must match one of its ``irds`` patterns); ``base_dir`` is where relative
    paths start (an embedded engine's corpus), inside the boundary's files
    directory (default: that directory).

    Raises
    ------
    ConfigError
        Bad TOML, an unknown key, a credential in the text, a file outside
        the files directory, a variable not allowed (names the key).
    OutboundError
        A host the operator does not allow.
    ForbiddenError
        An embedded corpus ``irds:NAME`` the operator does not allow.
    FileAccessError
        An allowed ``irds:NAME`` corpus whose documents are not in ir_datasets' cache.
    """
    from rankscope.services.projects import require_project

    _size(text, "the endpoint")
    check_spec(EndpointSpec(text, name))
    base = str(Path(base_dir if base_dir is not None else boundary.files_dir).resolve())
    _, config = _parse_endpoint(text, name, base, boundary)
    corpus = config.settings.get("corpus") if config.kind == "embedded" else None
    if corpus is not None:
        from rankscope.data.irds import check_cached, is_irds

        if is_irds(corpus):  # allowed by the boundary; said now if not in the cache
            check_cached(str(corpus), "docs")

    def work(session: Session) -> EndpointView:
        require_project(session, actor, project_id, "curator")
        row = session.scalar(select(Endpoint).where(Endpoint.project_id == project_id,
                                                    Endpoint.name == config.name))
        now = utcnow()
        if row is None:
            row = Endpoint(project_id=project_id, name=config.name, created_at=now)
            session.add(row)
        row.kind, row.config, row.config_hash = config.kind, dict(config.settings), \
            config.config_hash
        row.toml, row.base_dir, row.updated_at = text, base, now
        session.flush()
        return _endpoint_view(row)

    return store.write(work)


def _endpoint_view(row: Endpoint) -> EndpointView:
    return EndpointView(row.id, row.project_id, row.name, row.kind, row.toml, row.config_hash,
                        row.updated_at.isoformat())


def _endpoint_row(session: Session, actor: Actor, endpoint_id: int) -> Endpoint:
    from rankscope.services.projects import require_project

    row = session.get(Endpoint, endpoint_id)
    if row is None:
        raise NotFoundError(f"no endpoint #{endpoint_id}")
    require_project(session, actor, row.project_id, "judge")
    return row


def get_endpoint(store: Store, actor: Actor, endpoint_id: int) -> EndpointView:
    """One endpoint (NotFoundError when the actor cannot see it)."""
    with store.read() as session:
        return _endpoint_view(_endpoint_row(session, actor, endpoint_id))


def list_endpoints(store: Store, actor: Actor, project_id: int) -> list[EndpointView]:
    """The project's endpoints, by name."""
    from rankscope.services.projects import require_project

    with store.read() as session:
        require_project(session, actor, project_id, "judge")
        return [_endpoint_view(r) for r in session.scalars(
            select(Endpoint).where(Endpoint.project_id == project_id).order_by(Endpoint.name))]


def endpoint_config(row: Endpoint, boundary: Boundary) -> EndpointConfig:
    """The configuration of a stored endpoint, checked again by today's boundary, ready to open."""
    from rankscope.search.config import endpoint_from_dict

    base = row.base_dir or str(boundary.files_dir)
    if row.toml is not None:
        return _parse_endpoint(row.toml, row.name, base, boundary)[1]
    config = endpoint_from_dict(dict(row.config), source=f"endpoint {row.name}", base_dir=base,
                                files=boundary.files)
    boundary.check_endpoint(config)
    return config
