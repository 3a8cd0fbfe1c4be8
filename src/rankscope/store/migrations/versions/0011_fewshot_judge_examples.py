"""How many few-shot examples an LLM judge of the app shows the model
(``llm_judges.few_shot``): graded results of its evaluation, as ``rankscope judge
--few-shot`` shows judgments' pairs. Judges made before show none: what they ran with.

Revision ID: 0011_fewshot
Revises: 0010_gaptune
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011_fewshot"
down_revision = "0010_gaptune"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("llm_judges") as batch:
        batch.add_column(sa.Column("few_shot", sa.Integer(), nullable=False,
                                   server_default=sa.text("0")))


def downgrade() -> None:
    with op.batch_alter_table("llm_judges") as batch:
        batch.drop_column("few_shot")
