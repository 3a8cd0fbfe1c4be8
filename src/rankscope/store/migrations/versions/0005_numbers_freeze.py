"""Evaluations frozen in time: when (``frozen_at``), how (``frozen_how``: a curator's
``explicit`` freeze or ``complete`` grading), by whom, and how many counted grades the
numbers rest on (``frozen_grades``), and the raters kept apart then (``frozen_apart``: an
LLM judge a curator lets count later does not enter numbers frozen before).

Revision ID: 0005_numbers
Revises: 0004_truth
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from rankscope.store.models import UTCDateTime

revision = "0005_numbers"
down_revision = "0004_truth"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("evaluations") as batch:
        batch.add_column(sa.Column("frozen_at", UTCDateTime(), nullable=True))
        batch.add_column(sa.Column("frozen_how", sa.String(16), nullable=True))
        batch.add_column(sa.Column("frozen_by", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("frozen_grades", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("frozen_apart", JSON, nullable=True))
        batch.create_foreign_key(op.f("fk_evaluations_frozen_by_users"), "users",
                                 ["frozen_by"], ["id"], ondelete="SET NULL")
        batch.create_check_constraint(
            op.f("ck_evaluations_frozen_how"),
            "frozen_how IS NULL OR frozen_how IN ('explicit', 'complete')")


def downgrade() -> None:
    with op.batch_alter_table("evaluations") as batch:
        batch.drop_constraint(op.f("ck_evaluations_frozen_how"), type_="check")
        batch.drop_constraint(op.f("fk_evaluations_frozen_by_users"), type_="foreignkey")
        for name in ("frozen_apart", "frozen_grades", "frozen_by", "frozen_how", "frozen_at"):
            batch.drop_column(name)
