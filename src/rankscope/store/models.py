"""The store's tables of snapshots (SQLAlchemy 2), shared with the web app.

::

    projects ─< query_sets ─< queries
        └────< endpoints ─< snapshots >─ query_sets
                              └─< snapshot_queries >─ queries
                                      └─< snapshot_hits

Every table has an integer primary key; every timestamp is UTC (stored
naive on SQLite, with time zone on PostgreSQL, always returned aware).
The schema is created and changed only by the alembic migrations in
:mod:`rankscope.store.migrations`; a test checks that they agree with these
models.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from rankscope.store.base import Base, JSONType, UTCDateTime, utcnow

__all__ = [
    "SNAPSHOT_STATUSES",
    "Base",
    "Endpoint",
    "Project",
    "Query",
    "QuerySet",
    "Snapshot",
    "SnapshotHit",
    "SnapshotQuery",
    "UTCDateTime",
    "utcnow",
]

SNAPSHOT_STATUSES = ("running", "complete", "incomplete", "failed")


class Project(Base):
    """A workspace; the command line uses one named ``default``."""

    __tablename__ = "projects"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(Text, unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class QuerySet(Base):
    """A list of queries, identified by its name and the SHA-256 of its content."""

    __tablename__ = "query_sets"
    __table_args__ = (UniqueConstraint("project_id", "name", "content_sha256"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"),
                                            index=True)
    name: Mapped[str] = mapped_column(Text)
    source: Mapped[str | None] = mapped_column(Text)
    content_sha256: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    queries: Mapped[list[Query]] = relationship(back_populates="query_set",
                                                order_by="Query.position")


class Query(Base):
    """One query: its id in the set, its text, named parameters and information need."""

    __tablename__ = "queries"
    __table_args__ = (UniqueConstraint("query_set_id", "query_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    query_set_id: Mapped[int] = mapped_column(ForeignKey("query_sets.id", ondelete="CASCADE"),
                                              index=True)
    position: Mapped[int] = mapped_column(Integer)
    query_id: Mapped[str] = mapped_column(Text)
    text: Mapped[str] = mapped_column(Text)
    params: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    need: Mapped[str | None] = mapped_column(Text)

    query_set: Mapped[QuerySet] = relationship(back_populates="queries")


class Endpoint(Base):
    """A search endpoint of a project, by name; its latest configuration (no secrets)."""

    __tablename__ = "endpoints"
    __table_args__ = (UniqueConstraint("project_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"),
                                            index=True)
    name: Mapped[str] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(String(32))
    config: Mapped[dict[str, Any]] = mapped_column(JSONType)
    config_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    toml: Mapped[str | None] = mapped_column(Text)
    """The endpoint file as a curator wrote it in the app (None: from the command line)."""
    base_dir: Mapped[str | None] = mapped_column(Text)
    """Where its relative paths (an embedded corpus) start."""


class Snapshot(Base):
    """What an endpoint returned for a query set, at one time, with one configuration."""

    __tablename__ = "snapshots"
    __table_args__ = (
        CheckConstraint("status IN ('running', 'complete', 'incomplete', 'failed')",
                        name="status"),
        CheckConstraint("depth >= 1", name="depth"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    endpoint_id: Mapped[int] = mapped_column(ForeignKey("endpoints.id", ondelete="CASCADE"),
                                             index=True)
    query_set_id: Mapped[int] = mapped_column(ForeignKey("query_sets.id", ondelete="CASCADE"),
                                              index=True)
    name: Mapped[str] = mapped_column(Text, index=True)
    status: Mapped[str] = mapped_column(String(16), default="running")
    depth: Mapped[int] = mapped_column(Integer)
    engine_version: Mapped[str | None] = mapped_column(Text)
    config: Mapped[dict[str, Any]] = mapped_column(JSONType)
    config_hash: Mapped[str] = mapped_column(String(64))
    keep_raw: Mapped[bool] = mapped_column(Boolean, default=False)
    owner: Mapped[str | None] = mapped_column(Text)
    """``host:pid`` of the process taking it, to tell a crashed snapshot from a running one."""
    started_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    heartbeat_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    n_queries: Mapped[int] = mapped_column(Integer, default=0)
    n_done: Mapped[int] = mapped_column(Integer, default=0)
    n_failed: Mapped[int] = mapped_column(Integer, default=0)
    n_hits: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text)
    n_partial: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    """Queries whose answer the engine marked partial (a timeout, failed shards)."""
    n_short: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    """Queries with fewer results than the depth although the engine matched more."""
    n_duplicates: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    """Hits dropped, over all queries, because their document was listed above them."""
    n_retries: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    """Requests retried, over all queries."""

    endpoint: Mapped[Endpoint] = relationship()
    query_set: Mapped[QuerySet] = relationship()


class SnapshotQuery(Base):
    """One query of a snapshot: the request, the answer's hash and latency, or the error."""

    __tablename__ = "snapshot_queries"
    __table_args__ = (
        UniqueConstraint("snapshot_id", "query_row_id"),
        CheckConstraint("status IN ('ok', 'error')", name="status"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    snapshot_id: Mapped[int] = mapped_column(ForeignKey("snapshots.id", ondelete="CASCADE"),
                                             index=True)
    query_row_id: Mapped[int] = mapped_column(ForeignKey("queries.id", ondelete="CASCADE"),
                                              index=True)
    status: Mapped[str] = mapped_column(String(16))
    request: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    latency_ms: Mapped[float | None] = mapped_column(Float)
    raw_sha256: Mapped[str | None] = mapped_column(String(64))
    raw: Mapped[bytes | None] = mapped_column(LargeBinary)
    total_hits: Mapped[int | None] = mapped_column(BigInteger)
    n_hits: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    partial: Mapped[str | None] = mapped_column(Text)
    """Why the engine marked its answer partial (None: a whole answer)."""
    short: Mapped[str | None] = mapped_column(Text)
    """Why fewer than the depth were kept although the engine matched more."""
    duplicates: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    """Hits dropped because their document was listed above them."""
    pages: Mapped[int] = mapped_column(Integer, default=1, server_default=text("1"))
    retries: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    retry_reasons: Mapped[dict[str, int] | None] = mapped_column(JSONType)
    """``{"HTTP 503": 2, "timeout": 1}``: why requests were retried."""

    query: Mapped[Query] = relationship()
    hits: Mapped[list[SnapshotHit]] = relationship(order_by="SnapshotHit.rank",
                                                   cascade="all, delete-orphan")


class SnapshotHit(Base):
    """One ranked result, with what a grader sees of it."""

    __tablename__ = "snapshot_hits"
    __table_args__ = (
        UniqueConstraint("snapshot_query_id", "rank"),
        CheckConstraint("rank >= 1", name="rank"),
        Index("ix_snapshot_hits_doc_id", "doc_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    snapshot_query_id: Mapped[int] = mapped_column(
        ForeignKey("snapshot_queries.id", ondelete="CASCADE"), index=True)
    rank: Mapped[int] = mapped_column(Integer)
    doc_id: Mapped[str] = mapped_column(Text)
    score: Mapped[float | None] = mapped_column(Float)
    title: Mapped[str | None] = mapped_column(Text)
    snippet: Mapped[str | None] = mapped_column(Text)
    url: Mapped[str | None] = mapped_column(Text)
    image: Mapped[str | None] = mapped_column(Text)
    fields: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    explanation: Mapped[Any | None] = mapped_column(JSONType)
    """Why the engine ranked it there (``rankscope snapshot --explain``), else None."""

