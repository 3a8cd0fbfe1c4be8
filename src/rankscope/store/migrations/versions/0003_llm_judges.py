"""LLM judges as graders: the ``llm_judges`` table (a curator's judge of an evaluation) and
``raters.counts`` (whether a rater's grades fill grades-wanted slots and are aggregated).

Revision ID: 0003
Revises: 0002
Create Date: 2025-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from rankscope.store.models import UTCDateTime

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("raters") as batch:
        batch.add_column(sa.Column("counts", sa.Boolean(), nullable=False,
                                   server_default=sa.text("true")))
    op.create_table(
        "llm_judges",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("evaluation_id", sa.Integer(), nullable=False),
        sa.Column("rater_id", sa.Integer(), nullable=False),
        sa.Column("endpoint", sa.Text(), nullable=False),
        sa.Column("model", sa.Text(), nullable=False),
        sa.Column("api_key_env", sa.Text(), nullable=True),
        sa.Column("max_calls", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("last_run", JSON, nullable=True),
        sa.Column("created_by", sa.Integer(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.CheckConstraint("status IN ('idle', 'running', 'done', 'failed')",
                           name=op.f("ck_llm_judges_status")),
        sa.CheckConstraint("max_calls >= 1", name=op.f("ck_llm_judges_max_calls")),
        sa.ForeignKeyConstraint(["evaluation_id"], ["evaluations.id"],
                                name=op.f("fk_llm_judges_evaluation_id_evaluations"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["rater_id"], ["raters.id"],
                                name=op.f("fk_llm_judges_rater_id_raters"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["created_by"], ["users.id"],
                                name=op.f("fk_llm_judges_created_by_users"), ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_llm_judges")),
    )
    op.create_index(op.f("ix_llm_judges_evaluation_id"), "llm_judges", ["evaluation_id"],
                    unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_llm_judges_evaluation_id"), table_name="llm_judges")
    op.drop_table("llm_judges")
    with op.batch_alter_table("raters") as batch:
        batch.drop_column("counts")
