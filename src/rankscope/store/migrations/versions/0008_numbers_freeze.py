"""Evaluations frozen in time: when (``frozen_at``), how (``frozen_how``: a curator's
``explicit`` freeze or ``complete`` grading), by whom, and how many counted grades the
numbers rest on (``frozen_grades``), and the raters kept apart then (``frozen_apart``: an
LLM judge a curator lets count later does not enter numbers frozen before).

Revision ID: 0008_numbers
Revises: 0007_tuning
Create Date: 2026-11-27
"""

from __future__ import annotations

from importlib import import_module

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from rankscope.store.models import UTCDateTime

revision = "0008_numbers"
down_revision = "0007_tuning"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
# SQLite's batch copy of evaluations drops its triggers: 0005_grading's are made again
_COUNTED = import_module("rankscope.store.migrations.versions.0005_grading_counted")


def _rebuilding() -> bool:
    """Whether ``batch_alter_table`` copies the table (SQLite), dropping its triggers."""
    return bool(op.get_bind().dialect.name == "sqlite")


def upgrade() -> None:
    if _rebuilding():
        _COUNTED.drop_triggers("sqlite")
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
    if _rebuilding():
        _COUNTED.create_triggers("sqlite")


def downgrade() -> None:
    if _rebuilding():
        _COUNTED.drop_triggers("sqlite")
    with op.batch_alter_table("evaluations") as batch:
        batch.drop_constraint(op.f("ck_evaluations_frozen_how"), type_="check")
        batch.drop_constraint(op.f("fk_evaluations_frozen_by_users"), type_="foreignkey")
        for name in ("frozen_apart", "frozen_grades", "frozen_by", "frozen_how", "frozen_at"):
            batch.drop_column(name)
    if _rebuilding():
        _COUNTED.create_triggers("sqlite")
