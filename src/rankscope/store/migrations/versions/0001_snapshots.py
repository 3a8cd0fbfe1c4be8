"""Snapshots: projects, query sets, queries, endpoints, snapshots and their hits.

Revision ID: 0001
Revises:
Create Date: 2025-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from rankscope.store.models import UTCDateTime

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "projects",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_projects"),
        sa.UniqueConstraint("name", name="uq_projects_name"),
    )
    op.create_table(
        "query_sets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("source", sa.Text(), nullable=True),
        sa.Column("content_sha256", sa.String(64), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE",
                                name="fk_query_sets_project_id_projects"),
        sa.PrimaryKeyConstraint("id", name="pk_query_sets"),
        sa.UniqueConstraint("project_id", "name", "content_sha256",
                            name="uq_query_sets_project_id"),
    )
    op.create_index("ix_query_sets_project_id", "query_sets", ["project_id"])
    op.create_table(
        "queries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("query_set_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("query_id", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("params", JSON, nullable=False),
        sa.Column("need", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["query_set_id"], ["query_sets.id"], ondelete="CASCADE",
                                name="fk_queries_query_set_id_query_sets"),
        sa.PrimaryKeyConstraint("id", name="pk_queries"),
        sa.UniqueConstraint("query_set_id", "query_id", name="uq_queries_query_set_id"),
    )
    op.create_index("ix_queries_query_set_id", "queries", ["query_set_id"])
    op.create_table(
        "endpoints",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("config", JSON, nullable=False),
        sa.Column("config_hash", sa.String(64), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE",
                                name="fk_endpoints_project_id_projects"),
        sa.PrimaryKeyConstraint("id", name="pk_endpoints"),
        sa.UniqueConstraint("project_id", "name", name="uq_endpoints_project_id"),
    )
    op.create_index("ix_endpoints_project_id", "endpoints", ["project_id"])
    op.create_table(
        "snapshots",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("endpoint_id", sa.Integer(), nullable=False),
        sa.Column("query_set_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("depth", sa.Integer(), nullable=False),
        sa.Column("engine_version", sa.Text(), nullable=True),
        sa.Column("config", JSON, nullable=False),
        sa.Column("config_hash", sa.String(64), nullable=False),
        sa.Column("keep_raw", sa.Boolean(), nullable=False),
        sa.Column("owner", sa.Text(), nullable=True),
        sa.Column("started_at", UTCDateTime(), nullable=False),
        sa.Column("heartbeat_at", UTCDateTime(), nullable=False),
        sa.Column("finished_at", UTCDateTime(), nullable=True),
        sa.Column("n_queries", sa.Integer(), nullable=False),
        sa.Column("n_done", sa.Integer(), nullable=False),
        sa.Column("n_failed", sa.Integer(), nullable=False),
        sa.Column("n_hits", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.CheckConstraint("status IN ('running', 'complete', 'incomplete', 'failed')",
                           name="ck_snapshots_status"),
        sa.CheckConstraint("depth >= 1", name="ck_snapshots_depth"),
        sa.ForeignKeyConstraint(["endpoint_id"], ["endpoints.id"], ondelete="CASCADE",
                                name="fk_snapshots_endpoint_id_endpoints"),
        sa.ForeignKeyConstraint(["query_set_id"], ["query_sets.id"], ondelete="CASCADE",
                                name="fk_snapshots_query_set_id_query_sets"),
        sa.PrimaryKeyConstraint("id", name="pk_snapshots"),
    )
    op.create_index("ix_snapshots_endpoint_id", "snapshots", ["endpoint_id"])
    op.create_index("ix_snapshots_query_set_id", "snapshots", ["query_set_id"])
    op.create_index("ix_snapshots_name", "snapshots", ["name"])
    op.create_table(
        "snapshot_queries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("snapshot_id", sa.Integer(), nullable=False),
        sa.Column("query_row_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("request", JSON, nullable=True),
        sa.Column("latency_ms", sa.Float(), nullable=True),
        sa.Column("raw_sha256", sa.String(64), nullable=True),
        sa.Column("raw", sa.LargeBinary(), nullable=True),
        sa.Column("total_hits", sa.BigInteger(), nullable=True),
        sa.Column("n_hits", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.CheckConstraint("status IN ('ok', 'error')", name="ck_snapshot_queries_status"),
        sa.ForeignKeyConstraint(["snapshot_id"], ["snapshots.id"], ondelete="CASCADE",
                                name="fk_snapshot_queries_snapshot_id_snapshots"),
        sa.ForeignKeyConstraint(["query_row_id"], ["queries.id"], ondelete="CASCADE",
                                name="fk_snapshot_queries_query_row_id_queries"),
        sa.PrimaryKeyConstraint("id", name="pk_snapshot_queries"),
        sa.UniqueConstraint("snapshot_id", "query_row_id",
                            name="uq_snapshot_queries_snapshot_id"),
    )
    op.create_index("ix_snapshot_queries_snapshot_id", "snapshot_queries", ["snapshot_id"])
    op.create_index("ix_snapshot_queries_query_row_id", "snapshot_queries", ["query_row_id"])
    op.create_table(
        "snapshot_hits",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("snapshot_query_id", sa.Integer(), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("doc_id", sa.Text(), nullable=False),
        sa.Column("score", sa.Float(), nullable=True),
        sa.Column("title", sa.Text(), nullable=True),
        sa.Column("snippet", sa.Text(), nullable=True),
        sa.Column("url", sa.Text(), nullable=True),
        sa.Column("image", sa.Text(), nullable=True),
        sa.Column("fields", JSON, nullable=False),
        sa.CheckConstraint("rank >= 1", name="ck_snapshot_hits_rank"),
        sa.ForeignKeyConstraint(["snapshot_query_id"], ["snapshot_queries.id"],
                                ondelete="CASCADE",
                                name="fk_snapshot_hits_snapshot_query_id_snapshot_queries"),
        sa.PrimaryKeyConstraint("id", name="pk_snapshot_hits"),
        sa.UniqueConstraint("snapshot_query_id", "rank", name="uq_snapshot_hits_snapshot_query_id"),
    )
    op.create_index("ix_snapshot_hits_snapshot_query_id", "snapshot_hits", ["snapshot_query_id"])
    op.create_index("ix_snapshot_hits_doc_id", "snapshot_hits", ["doc_id"])


def downgrade() -> None:
    for table in ("snapshot_hits", "snapshot_queries", "snapshots", "endpoints", "queries",
                  "query_sets", "projects"):
        op.drop_table(table)
