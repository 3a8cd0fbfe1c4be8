"""The tuning loop: why a result is there (``snapshot_hits.explanation``), numbered tries of
an evaluation's endpoint (``tries``), and results added to a query's judged pool from a try
or by hand (``tasks.origin``, ``added_by``, ``shown``).

Adding the constraints copies ``tasks`` on SQLite (a batch migration), which drops its
triggers: 0005_grading's counted-grades triggers are dropped before and created again
after, both ways.

Revision ID: 0007_tuning
Revises: 0006_platform
Create Date: 2026-02-02
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from rankscope.store.models import UTCDateTime

revision = "0007_tuning"
down_revision = "0006_platform"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def _counted() -> Any:
    """0005_grading's migration module: its triggers (a module name starting with a digit)."""
    import importlib

    return importlib.import_module("rankscope.store.migrations.versions.0005_grading_counted")


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    with op.batch_alter_table("snapshot_hits") as batch:
        batch.add_column(sa.Column("explanation", JSON, nullable=True))
    if dialect == "sqlite":
        _counted().drop_triggers(dialect)
    with op.batch_alter_table("tasks") as batch:
        batch.add_column(sa.Column("origin", sa.String(length=16), nullable=False,
                                   server_default=sa.text("'snapshot'")))
        batch.add_column(sa.Column("added_by", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("shown", JSON, nullable=True))
        batch.create_foreign_key(op.f("fk_tasks_added_by_users"), "users", ["added_by"], ["id"],
                                 ondelete="SET NULL")
        batch.create_check_constraint(op.f("ck_tasks_origin"),
                                      "origin IN ('snapshot', 'try', 'hand')")
    if dialect == "sqlite":
        _counted().create_triggers(dialect)
    op.create_table(
        "tries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("evaluation_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("changes", JSON, nullable=False),
        sa.Column("config", JSON, nullable=False),
        sa.Column("config_hash", sa.String(length=64), nullable=False),
        sa.Column("scope", sa.String(length=16), nullable=False),
        sa.Column("query_row_id", sa.Integer(), nullable=True),
        sa.Column("snapshot_id", sa.Integer(), nullable=True),
        sa.Column("results", JSON, nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("made_evaluation_id", sa.Integer(), nullable=True),
        sa.Column("created_by", sa.Integer(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.CheckConstraint("status IN ('running', 'done', 'failed')",
                           name=op.f("ck_tries_status")),
        sa.CheckConstraint("scope IN ('query', 'all')", name=op.f("ck_tries_scope")),
        sa.ForeignKeyConstraint(["evaluation_id"], ["evaluations.id"],
                                name=op.f("fk_tries_evaluation_id_evaluations"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["query_row_id"], ["queries.id"],
                                name=op.f("fk_tries_query_row_id_queries"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["snapshot_id"], ["snapshots.id"],
                                name=op.f("fk_tries_snapshot_id_snapshots"),
                                ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["made_evaluation_id"], ["evaluations.id"],
                                name=op.f("fk_tries_made_evaluation_id_evaluations"),
                                ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["created_by"], ["users.id"],
                                name=op.f("fk_tries_created_by_users"), ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tries")),
        sa.UniqueConstraint("evaluation_id", "number", name=op.f("uq_tries_evaluation_id")),
    )
    op.create_index(op.f("ix_tries_evaluation_id"), "tries", ["evaluation_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_tries_evaluation_id"), table_name="tries")
    op.drop_table("tries")
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        _counted().drop_triggers(dialect)
    with op.batch_alter_table("tasks") as batch:
        batch.drop_constraint(op.f("ck_tasks_origin"), type_="check")
        batch.drop_constraint(op.f("fk_tasks_added_by_users"), type_="foreignkey")
        batch.drop_column("shown")
        batch.drop_column("added_by")
        batch.drop_column("origin")
    if dialect == "sqlite":
        _counted().create_triggers(dialect)
    with op.batch_alter_table("snapshot_hits") as batch:
        batch.drop_column("explanation")
