"""The app's tables: an old database upgraded in place, constraints that guard grades."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from rankscope.store.db import downgrade, open_store, upgrade
from rankscope.store.models import utcnow

APP_TABLES = {"users", "user_sessions", "api_tokens", "memberships", "raters", "evaluations",
              "evaluation_snapshots", "items", "grades", "tasks", "leases", "deferrals",
              "adjudications", "grade_batches", "llm_judges"}


def alembic_head(connection):
    from alembic.script import ScriptDirectory

    from rankscope.store.schema_revisions import alembic_config

    return ScriptDirectory.from_config(alembic_config(connection)).get_current_head()


def test_a_snapshot_store_of_revision_0001_is_upgraded_in_place(db_url):
    from rankscope.store.db import _engine, store_url

    engine = _engine(store_url(db_url))
    upgrade(engine, "0001")
    with engine.begin() as con:
        con.execute(sa.text("INSERT INTO projects (name, created_at) VALUES ('old', :t)"),
                    {"t": utcnow().replace(tzinfo=None)})
        con.execute(sa.text(
            "INSERT INTO endpoints (project_id, name, kind, config, config_hash, created_at, "
            "updated_at) VALUES (1, 'ep', 'embedded', '{}', 'h', :t, :t)"),
            {"t": utcnow().replace(tzinfo=None)})
    assert not APP_TABLES & set(sa.inspect(engine).get_table_names())
    engine.dispose()
    store = open_store(db_url)  # brings it to the newest revision
    try:
        names = set(sa.inspect(store.engine).get_table_names())
        assert names >= APP_TABLES
        with store.engine.connect() as con:
            assert con.execute(sa.text("SELECT name, toml FROM endpoints")).all() == [
                ("ep", None)]
            assert con.execute(sa.text("SELECT version_num FROM alembic_version")).scalar() \
                == alembic_head(con)  # the newest revision
        downgrade(store.engine, "0001")
        assert not APP_TABLES & set(sa.inspect(store.engine).get_table_names())
        with store.engine.connect() as con:  # the snapshot store's data survived both ways
            assert con.execute(sa.text("SELECT name FROM endpoints")).scalar() == "ep"
        downgrade(store.engine, "base")
        assert set(sa.inspect(store.engine).get_table_names()) <= {"alembic_version"}
    finally:
        store.close()


def test_one_active_grade_per_rater_and_no_null_without_a_reason(store, world):
    from rankscope.store.models_app import Grade, Item, Rater

    with store.read() as s:
        item = s.scalar(sa.select(Item.id).limit(1))
        rater = s.scalar(sa.select(Rater.id).where(Rater.name == "jay"))

    def grade(value, reason=None, active=True):
        return lambda s: s.add(Grade(item_id=item, rater_id=rater, scale="graded", value=value,
                                     reason=reason, source="app", active=active))

    store.write(grade(1.0))
    with pytest.raises(sa.exc.IntegrityError):
        store.write(grade(2.0))  # a second active grade of the same rater
    store.write(grade(2.0, active=False))  # history rows are fine
    with pytest.raises(sa.exc.IntegrityError):
        store.write(grade(None, active=False))  # can't tell without a reason
