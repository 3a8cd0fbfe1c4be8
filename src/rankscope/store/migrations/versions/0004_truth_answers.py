"""What each query's answer was like: partial (a timeout, failed shards), short of the
depth, with duplicate ids dropped, over how many pages, after which retries; and the
snapshot's counts of each.

Revision ID: 0004_truth
Revises: 0003
Create Date: 2026-01-20
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0004_truth"
down_revision = "0003"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
_QUERY_COUNTS = ("duplicates", "retries")
_SNAPSHOT_COUNTS = ("n_partial", "n_short", "n_duplicates", "n_retries")


def upgrade() -> None:
    with op.batch_alter_table("snapshot_queries") as batch:
        batch.add_column(sa.Column("partial", sa.Text(), nullable=True))
        batch.add_column(sa.Column("short", sa.Text(), nullable=True))
        for name in _QUERY_COUNTS:
            batch.add_column(sa.Column(name, sa.Integer(), nullable=False,
                                       server_default=sa.text("0")))
        batch.add_column(sa.Column("pages", sa.Integer(), nullable=False,
                                   server_default=sa.text("1")))
        batch.add_column(sa.Column("retry_reasons", JSON, nullable=True))
    with op.batch_alter_table("snapshots") as batch:
        for name in _SNAPSHOT_COUNTS:
            batch.add_column(sa.Column(name, sa.Integer(), nullable=False,
                                       server_default=sa.text("0")))


def downgrade() -> None:
    with op.batch_alter_table("snapshots") as batch:
        for name in _SNAPSHOT_COUNTS:
            batch.drop_column(name)
    with op.batch_alter_table("snapshot_queries") as batch:
        for name in ("retry_reasons", "pages", *_QUERY_COUNTS, "short", "partial"):
            batch.drop_column(name)
