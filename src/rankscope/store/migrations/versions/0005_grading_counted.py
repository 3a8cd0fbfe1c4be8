"""Assignment without a scan: ``tasks.grades_counted`` kept by the database, indexes for the
next task and for a grader's own grades of an evaluation.

``tasks.grades_counted`` is the number of grades that fill the task's slots: active, on
its evaluation's scale, of a rater that counts. Triggers keep it exact whoever writes
(grading, undo, imports, adjudication, an LLM judge counted or not, a new run's tasks,
hand-written SQL): on grades (insert, delete, and an update of ``item_id``, ``rater_id``,
``scale`` or ``active``), on ``raters.counts``, on ``evaluations.scale`` and on a new
task. ``ix_tasks_assignment`` (evaluation, grades counted, position, id) is the order in
which results are handed out, so the next task is the first open row of an index range
instead of a sort of every task. ``ix_grades_rater_evaluation`` replaces
``ix_grades_rater_id``: a grader's grades of one evaluation (their walk, their count).

SQLite drops a table's triggers when a batch migration copies the table: a later
migration that rebuilds ``grades``, ``raters``, ``evaluations`` or ``tasks`` creates them
again (:func:`create_triggers`; tests/store/test_counted.py checks they exist at head).

Revision ID: 0005_grading
Revises: 0004_truth
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_grading"
down_revision = "0004_truth"
branch_labels = None
depends_on = None

# the counted grades of the task row {t} (the same text on SQLite and PostgreSQL)
COUNTED = ("(SELECT count(*) FROM grades g JOIN raters r ON r.id = g.rater_id "
           "JOIN evaluations e ON e.id = {t}.evaluation_id "
           "WHERE g.item_id = {t}.item_id AND g.scale = e.scale AND g.active AND r.counts)")


def _recount(where: str) -> str:
    return f"UPDATE tasks SET grades_counted = {COUNTED.format(t='tasks')} WHERE {where}"


GRADE_CHANGED = ("OLD.active IS NOT NEW.active OR OLD.item_id IS NOT NEW.item_id "
                 "OR OLD.scale IS NOT NEW.scale OR OLD.rater_id IS NOT NEW.rater_id")

# (name, timing and event, WHEN condition or "", the recount's WHERE per dialect)
TRIGGERS = (
    ("grades_counted_insert", "AFTER INSERT ON grades", "", "item_id = NEW.item_id"),
    ("grades_counted_update", "AFTER UPDATE OF item_id, rater_id, scale, active ON grades",
     GRADE_CHANGED, "item_id IN (OLD.item_id, NEW.item_id)"),
    ("grades_counted_delete", "AFTER DELETE ON grades", "", "item_id = OLD.item_id"),
    ("raters_counted", "AFTER UPDATE OF counts ON raters", "OLD.counts IS NOT NEW.counts",
     "item_id IN (SELECT item_id FROM grades WHERE rater_id = NEW.id)"),
    ("evaluations_counted", "AFTER UPDATE OF scale ON evaluations",
     "OLD.scale IS NOT NEW.scale", "evaluation_id = NEW.id"),
    ("tasks_counted", "AFTER INSERT ON tasks", "", "id = NEW.id"),
)


def create_triggers(dialect: str) -> None:
    """Create the triggers that keep ``tasks.grades_counted`` (either dialect)."""
    for name, event, when, where in TRIGGERS:
        if dialect == "postgresql":
            condition = when.replace("IS NOT", "IS DISTINCT FROM")
            op.execute(f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ "
                       f"BEGIN {_recount(where)}; RETURN NULL; END $$")
            op.execute(f"CREATE TRIGGER {name} {event} FOR EACH ROW "
                       + (f"WHEN ({condition}) " if condition else "")
                       + f"EXECUTE FUNCTION {name}()")
        else:
            op.execute(f"CREATE TRIGGER {name} {event} FOR EACH ROW "
                       + (f"WHEN {when} " if when else "")
                       + f"BEGIN {_recount(where)}; END")


def drop_triggers(dialect: str) -> None:
    """Drop them (a downgrade; before a SQLite batch migration copies one of the tables)."""
    for name, event, _, _ in TRIGGERS:
        table = event.rsplit(" ", 1)[1]
        if dialect == "postgresql":
            op.execute(f"DROP TRIGGER IF EXISTS {name} ON {table}")
            op.execute(f"DROP FUNCTION IF EXISTS {name}()")
        else:
            op.execute(f"DROP TRIGGER IF EXISTS {name}")


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    op.add_column("tasks", sa.Column("grades_counted", sa.Integer(), nullable=False,
                                     server_default=sa.text("0")))
    op.execute(_recount("1 = 1"))
    op.drop_index(op.f("ix_tasks_evaluation_id"), table_name="tasks")
    op.create_index("ix_tasks_assignment", "tasks",
                    ["evaluation_id", "grades_counted", "position", "id", "grades_wanted"])
    op.drop_index(op.f("ix_grades_rater_id"), table_name="grades")
    op.create_index("ix_grades_rater_evaluation", "grades", ["rater_id", "evaluation_id"])
    create_triggers(dialect)


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    drop_triggers(dialect)
    op.drop_index("ix_grades_rater_evaluation", table_name="grades")
    op.create_index(op.f("ix_grades_rater_id"), "grades", ["rater_id"], unique=False)
    op.drop_index("ix_tasks_assignment", table_name="tasks")
    op.create_index(op.f("ix_tasks_evaluation_id"), "tasks", ["evaluation_id"], unique=False)
    with op.batch_alter_table("tasks") as batch:
        batch.drop_column("grades_counted")
