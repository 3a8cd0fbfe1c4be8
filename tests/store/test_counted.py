"""The triggers that keep ``tasks.grades_counted`` exist at the newest revision.

SQLite drops a table's triggers when a batch migration copies the table: a later
migration that rebuilds grades, raters, evaluations or tasks without creating them again
fails here (what they keep is checked in tests/app/test_assignment.py).
"""

from __future__ import annotations

import pytest

sa = pytest.importorskip("sqlalchemy")

from rankscope.store.db import downgrade, open_store  # noqa: E402

TRIGGERS = {"grades_counted_insert": "grades", "grades_counted_update": "grades",
            "grades_counted_delete": "grades", "raters_counted": "raters",
            "evaluations_counted": "evaluations", "tasks_counted": "tasks"}


def triggers(store) -> dict[str, str]:
    """Trigger name -> table, as the database lists them."""
    with store.engine.connect() as con:
        if store.dialect == "sqlite":
            rows = con.execute(sa.text(
                "SELECT name, tbl_name FROM sqlite_master WHERE type = 'trigger'"))
        else:
            rows = con.execute(sa.text(
                "SELECT tgname, relname FROM pg_trigger JOIN pg_class ON pg_class.oid = tgrelid "
                "WHERE NOT tgisinternal"))
        return {str(name): str(table) for name, table in rows}


def test_the_counted_grades_triggers_exist_at_head_and_go_with_a_downgrade(db_url):
    store = open_store(db_url)
    try:
        assert triggers(store) == TRIGGERS
        downgrade(store.engine, "0004_truth")  # the revision before it
        assert triggers(store) == {}
        assert "grades_counted" not in {
            c["name"] for c in sa.inspect(store.engine).get_columns("tasks")}
    finally:
        store.close()
