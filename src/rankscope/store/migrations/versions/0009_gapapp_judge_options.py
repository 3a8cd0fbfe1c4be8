"""An LLM judge's options kept with it, so every run asks the same way: the provider
(``openai`` or ``ollama``), the answer reading (``strict`` or ``lenient``) and the
built-in prompt (none: the evaluation's scale's own). Judges made before are
``openai``, ``strict``, the scale's prompt: what they ran with.

Revision ID: 0009_gapapp
Revises: 0008_numbers
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009_gapapp"
down_revision = "0008_numbers"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("llm_judges") as batch:
        batch.add_column(sa.Column("provider", sa.String(64), nullable=False,
                                   server_default=sa.text("'openai'")))
        batch.add_column(sa.Column("parse", sa.String(16), nullable=False,
                                   server_default=sa.text("'strict'")))
        batch.add_column(sa.Column("prompt", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("llm_judges") as batch:
        batch.drop_column("prompt")
        batch.drop_column("parse")
        batch.drop_column("provider")
