"""The LLM answer cache in the store (``llm_answers``); a cache file of an earlier version
(its own ``answers`` table) has its answers moved in.

Revision ID: 0006_platform
Revises: 0005_grading
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_platform"
down_revision = "0005_grading"
branch_labels = None
depends_on = None

_LATER = ("finish_reason", "reasoning")


def upgrade() -> None:
    op.create_table(
        "llm_answers",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("model", sa.Text(), nullable=False),
        sa.Column("answer", sa.Text(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=True),
        sa.Column("completion_tokens", sa.Integer(), nullable=True),
        sa.Column("created", sa.Float(), nullable=False),
        sa.Column("finish_reason", sa.Text(), nullable=True),
        sa.Column("reasoning", sa.Text(), nullable=True),
    )
    bind = op.get_bind()
    inspector = sa.inspect(bind)
    if "answers" in inspector.get_table_names():  # a cache file of an earlier version
        have = {c["name"] for c in inspector.get_columns("answers")}
        later = ", ".join(c if c in have else "NULL" for c in _LATER)
        op.execute("INSERT INTO llm_answers (key, model, answer, prompt_tokens, "
                   "completion_tokens, created, finish_reason, reasoning) "
                   "SELECT key, model, answer, prompt_tokens, completion_tokens, created, "
                   f"{later} FROM answers")
        op.drop_table("answers")


def downgrade() -> None:
    op.drop_table("llm_answers")
