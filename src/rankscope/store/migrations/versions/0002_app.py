"""The judging app: users, sessions, API tokens, memberships, raters, evaluations, items,
grades (superseded, never deleted), tasks with leases, deferrals, adjudications, API batches;
endpoints keep the TOML a curator wrote and the directory its paths start from.

Revision ID: 0002
Revises: 0001
Create Date: 2025-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from rankscope.store.models import UTCDateTime

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("password_hash", sa.Text(), nullable=True),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.CheckConstraint("role IN ('admin', 'curator', 'judge')", name=op.f("ck_users_role")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_users")),
        sa.UniqueConstraint("name", name=op.f("uq_users_name")),
    )
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token_sha256", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("last_used_at", UTCDateTime(), nullable=True),
        sa.Column("revoked_at", UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_api_tokens_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_tokens")),
        sa.UniqueConstraint("token_sha256", name=op.f("uq_api_tokens_token_sha256")),
    )
    op.create_index(op.f("ix_api_tokens_user_id"), "api_tokens", ["user_id"], unique=False)
    op.create_table(
        "items",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("query_key", sa.Text(), nullable=False),
        sa.Column("query_text", sa.Text(), nullable=False),
        sa.Column("doc_id", sa.Text(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_items_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_items")),
        sa.UniqueConstraint("project_id", "query_key", "doc_id", name=op.f("uq_items_project_id")),
    )
    op.create_index(op.f("ix_items_project_id"), "items", ["project_id"], unique=False)
    op.create_table(
        "memberships",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.CheckConstraint(
            "role IN ('admin', 'curator', 'judge')", name=op.f("ck_memberships_role")
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_memberships_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_memberships_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_memberships")),
        sa.UniqueConstraint("user_id", "project_id", name=op.f("uq_memberships_user_id")),
    )
    op.create_index(op.f("ix_memberships_project_id"), "memberships", ["project_id"], unique=False)
    op.create_index(op.f("ix_memberships_user_id"), "memberships", ["user_id"], unique=False)
    op.create_table(
        "raters",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.CheckConstraint("kind IN ('person', 'import', 'llm')", name=op.f("ck_raters_kind")),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_raters_user_id_users"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_raters")),
        sa.UniqueConstraint("name", name=op.f("uq_raters_name")),
        sa.UniqueConstraint("user_id", name=op.f("uq_raters_user_id")),
    )
    op.create_table(
        "user_sessions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token_sha256", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_user_sessions_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_user_sessions")),
        sa.UniqueConstraint("token_sha256", name=op.f("uq_user_sessions_token_sha256")),
    )
    op.create_index(op.f("ix_user_sessions_user_id"), "user_sessions", ["user_id"], unique=False)
    op.create_table(
        "evaluations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("query_set_id", sa.Integer(), nullable=False),
        sa.Column("endpoint_id", sa.Integer(), nullable=False),
        sa.Column("scale", sa.Text(), nullable=False),
        sa.Column("grades_wanted", sa.Integer(), nullable=False),
        sa.Column("strategy", sa.Text(), nullable=False),
        sa.Column("metrics", JSON, nullable=False),
        sa.Column("transforms", JSON, nullable=False),
        sa.Column("null_rules", sa.Boolean(), nullable=False),
        sa.Column("depth", sa.Integer(), nullable=False),
        sa.Column("guidelines", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("baseline_id", sa.Integer(), nullable=True),
        sa.Column("annotation", sa.Text(), nullable=False),
        sa.Column("created_by", sa.Integer(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.CheckConstraint(
            "status IN ('draft', 'running', 'ready', 'failed')", name=op.f("ck_evaluations_status")
        ),
        sa.CheckConstraint("depth >= 1", name=op.f("ck_evaluations_depth")),
        sa.CheckConstraint("grades_wanted >= 1", name=op.f("ck_evaluations_grades_wanted")),
        sa.ForeignKeyConstraint(
            ["baseline_id"],
            ["evaluations.id"],
            name=op.f("fk_evaluations_baseline_id_evaluations"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["created_by"],
            ["users.id"],
            name=op.f("fk_evaluations_created_by_users"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["endpoint_id"],
            ["endpoints.id"],
            name=op.f("fk_evaluations_endpoint_id_endpoints"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_evaluations_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["query_set_id"],
            ["query_sets.id"],
            name=op.f("fk_evaluations_query_set_id_query_sets"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_evaluations")),
    )
    op.create_index(
        op.f("ix_evaluations_endpoint_id"), "evaluations", ["endpoint_id"], unique=False
    )
    op.create_index(op.f("ix_evaluations_project_id"), "evaluations", ["project_id"], unique=False)
    op.create_index(
        op.f("ix_evaluations_query_set_id"), "evaluations", ["query_set_id"], unique=False
    )
    op.create_table(
        "evaluation_snapshots",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("evaluation_id", sa.Integer(), nullable=False),
        sa.Column("snapshot_id", sa.Integer(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["evaluation_id"],
            ["evaluations.id"],
            name=op.f("fk_evaluation_snapshots_evaluation_id_evaluations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["snapshot_id"],
            ["snapshots.id"],
            name=op.f("fk_evaluation_snapshots_snapshot_id_snapshots"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_evaluation_snapshots")),
        sa.UniqueConstraint(
            "evaluation_id", "snapshot_id", name=op.f("uq_evaluation_snapshots_evaluation_id")
        ),
    )
    op.create_index(
        op.f("ix_evaluation_snapshots_evaluation_id"),
        "evaluation_snapshots",
        ["evaluation_id"],
        unique=False,
    )
    op.create_index(
        op.f("ix_evaluation_snapshots_snapshot_id"),
        "evaluation_snapshots",
        ["snapshot_id"],
        unique=False,
    )
    op.create_table(
        "grade_batches",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rater_id", sa.Integer(), nullable=False),
        sa.Column("batch_key", sa.Text(), nullable=False),
        sa.Column("evaluation_id", sa.Integer(), nullable=False),
        sa.Column("response", JSON, nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["evaluation_id"],
            ["evaluations.id"],
            name=op.f("fk_grade_batches_evaluation_id_evaluations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["rater_id"],
            ["raters.id"],
            name=op.f("fk_grade_batches_rater_id_raters"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_grade_batches")),
        sa.UniqueConstraint("rater_id", "batch_key", name=op.f("uq_grade_batches_rater_id")),
    )
    op.create_table(
        "grades",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("rater_id", sa.Integer(), nullable=False),
        sa.Column("scale", sa.Text(), nullable=False),
        sa.Column("value", sa.Float(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("explanation", sa.Text(), nullable=True),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("evaluation_id", sa.Integer(), nullable=True),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("retracted_at", UTCDateTime(), nullable=True),
        sa.Column("superseded_by", sa.Integer(), nullable=True),
        sa.CheckConstraint(
            "source IN ('app', 'api', 'import', 'adjudication', 'llm')",
            name=op.f("ck_grades_source"),
        ),
        sa.CheckConstraint(
            "value IS NOT NULL OR reason IS NOT NULL", name=op.f("ck_grades_null_has_reason")
        ),
        sa.ForeignKeyConstraint(
            ["evaluation_id"],
            ["evaluations.id"],
            name=op.f("fk_grades_evaluation_id_evaluations"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["item_id"], ["items.id"], name=op.f("fk_grades_item_id_items"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["rater_id"], ["raters.id"], name=op.f("fk_grades_rater_id_raters"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["superseded_by"],
            ["grades.id"],
            name=op.f("fk_grades_superseded_by_grades"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_grades")),
    )
    op.create_index(
        "ix_grades_active_rater",
        "grades",
        ["item_id", "rater_id", "scale"],
        unique=True,
        sqlite_where=sa.text("active"),
        postgresql_where=sa.text("active"),
    )
    op.create_index(op.f("ix_grades_evaluation_id"), "grades", ["evaluation_id"], unique=False)
    op.create_index("ix_grades_item_id_scale", "grades", ["item_id", "scale"], unique=False)
    op.create_index(op.f("ix_grades_rater_id"), "grades", ["rater_id"], unique=False)
    op.create_table(
        "tasks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("evaluation_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("query_row_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("grades_wanted", sa.Integer(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.CheckConstraint("grades_wanted >= 1", name=op.f("ck_tasks_grades_wanted")),
        sa.ForeignKeyConstraint(
            ["evaluation_id"],
            ["evaluations.id"],
            name=op.f("fk_tasks_evaluation_id_evaluations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["item_id"], ["items.id"], name=op.f("fk_tasks_item_id_items"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["query_row_id"],
            ["queries.id"],
            name=op.f("fk_tasks_query_row_id_queries"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tasks")),
        sa.UniqueConstraint("evaluation_id", "item_id", name=op.f("uq_tasks_evaluation_id")),
    )
    op.create_index(op.f("ix_tasks_evaluation_id"), "tasks", ["evaluation_id"], unique=False)
    op.create_index(op.f("ix_tasks_item_id"), "tasks", ["item_id"], unique=False)
    op.create_table(
        "adjudications",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Integer(), nullable=False),
        sa.Column("evaluation_id", sa.Integer(), nullable=True),
        sa.Column("curator_id", sa.Integer(), nullable=True),
        sa.Column("grade_id", sa.Integer(), nullable=False),
        sa.Column("scale", sa.Text(), nullable=False),
        sa.Column("value", sa.Float(), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["curator_id"],
            ["users.id"],
            name=op.f("fk_adjudications_curator_id_users"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["evaluation_id"],
            ["evaluations.id"],
            name=op.f("fk_adjudications_evaluation_id_evaluations"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["grade_id"],
            ["grades.id"],
            name=op.f("fk_adjudications_grade_id_grades"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["item_id"],
            ["items.id"],
            name=op.f("fk_adjudications_item_id_items"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_adjudications")),
    )
    op.create_index(op.f("ix_adjudications_item_id"), "adjudications", ["item_id"], unique=False)
    op.create_table(
        "deferrals",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("task_id", sa.Integer(), nullable=False),
        sa.Column("rater_id", sa.Integer(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["rater_id"],
            ["raters.id"],
            name=op.f("fk_deferrals_rater_id_raters"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["task_id"], ["tasks.id"], name=op.f("fk_deferrals_task_id_tasks"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_deferrals")),
        sa.UniqueConstraint("task_id", "rater_id", name=op.f("uq_deferrals_task_id")),
    )
    op.create_index(op.f("ix_deferrals_task_id"), "deferrals", ["task_id"], unique=False)
    op.create_table(
        "leases",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("task_id", sa.Integer(), nullable=False),
        sa.Column("rater_id", sa.Integer(), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["rater_id"], ["raters.id"], name=op.f("fk_leases_rater_id_raters"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["task_id"], ["tasks.id"], name=op.f("fk_leases_task_id_tasks"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_leases")),
        sa.UniqueConstraint("task_id", "rater_id", name=op.f("uq_leases_task_id")),
    )
    op.create_index(op.f("ix_leases_task_id"), "leases", ["task_id"], unique=False)
    op.add_column("endpoints", sa.Column("toml", sa.Text(), nullable=True))
    op.add_column("endpoints", sa.Column("base_dir", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("endpoints") as batch:
        batch.drop_column("base_dir")
        batch.drop_column("toml")
    op.drop_index(op.f("ix_leases_task_id"), table_name="leases")
    op.drop_table("leases")
    op.drop_index(op.f("ix_deferrals_task_id"), table_name="deferrals")
    op.drop_table("deferrals")
    op.drop_index(op.f("ix_adjudications_item_id"), table_name="adjudications")
    op.drop_table("adjudications")
    op.drop_index(op.f("ix_tasks_item_id"), table_name="tasks")
    op.drop_index(op.f("ix_tasks_evaluation_id"), table_name="tasks")
    op.drop_table("tasks")
    op.drop_index(op.f("ix_grades_rater_id"), table_name="grades")
    op.drop_index("ix_grades_item_id_scale", table_name="grades")
    op.drop_index(op.f("ix_grades_evaluation_id"), table_name="grades")
    op.drop_index(
        "ix_grades_active_rater",
        table_name="grades",
        sqlite_where=sa.text("active"),
        postgresql_where=sa.text("active"),
    )
    op.drop_table("grades")
    op.drop_table("grade_batches")
    op.drop_index(op.f("ix_evaluation_snapshots_snapshot_id"), table_name="evaluation_snapshots")
    op.drop_index(op.f("ix_evaluation_snapshots_evaluation_id"), table_name="evaluation_snapshots")
    op.drop_table("evaluation_snapshots")
    op.drop_index(op.f("ix_evaluations_query_set_id"), table_name="evaluations")
    op.drop_index(op.f("ix_evaluations_project_id"), table_name="evaluations")
    op.drop_index(op.f("ix_evaluations_endpoint_id"), table_name="evaluations")
    op.drop_table("evaluations")
    op.drop_index(op.f("ix_user_sessions_user_id"), table_name="user_sessions")
    op.drop_table("user_sessions")
    op.drop_table("raters")
    op.drop_index(op.f("ix_memberships_user_id"), table_name="memberships")
    op.drop_index(op.f("ix_memberships_project_id"), table_name="memberships")
    op.drop_table("memberships")
    op.drop_index(op.f("ix_items_project_id"), table_name="items")
    op.drop_table("items")
    op.drop_index(op.f("ix_api_tokens_user_id"), table_name="api_tokens")
    op.drop_table("api_tokens")
    op.drop_table("users")
