"""Whether an evaluation's snapshot records why each result is there
(``evaluations.explain``: the engine's explanation per hit, as a try's does).

Adding a column with ``batch_alter_table`` may copy ``evaluations`` on SQLite, which
drops its triggers: 0005_grading's counted-grades triggers are dropped before and made
again after, both ways (as 0008_numbers does).

Revision ID: 0010_gaptune
Revises: 0009_gapapp
Create Date: 2026-11-27
"""

from __future__ import annotations

from importlib import import_module

import sqlalchemy as sa
from alembic import op

revision = "0010_gaptune"
down_revision = "0009_gapapp"
branch_labels = None
depends_on = None

_COUNTED = import_module("rankscope.store.migrations.versions.0005_grading_counted")


def _rebuilding() -> bool:
    """Whether ``batch_alter_table`` may copy the table (SQLite), dropping its triggers."""
    return bool(op.get_bind().dialect.name == "sqlite")


def upgrade() -> None:
    if _rebuilding():
        _COUNTED.drop_triggers("sqlite")
    with op.batch_alter_table("evaluations") as batch:
        batch.add_column(sa.Column("explain", sa.Boolean(), nullable=False,
                                   server_default=sa.text("false")))
    if _rebuilding():
        _COUNTED.create_triggers("sqlite")


def downgrade() -> None:
    if _rebuilding():
        _COUNTED.drop_triggers("sqlite")
    with op.batch_alter_table("evaluations") as batch:
        batch.drop_column("explain")
    if _rebuilding():
        _COUNTED.create_triggers("sqlite")
