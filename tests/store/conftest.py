"""Databases for the store tests: a SQLite file, and PostgreSQL when RANKSCOPE_TEST_PG_URL is set.

Each PostgreSQL test gets a database of its own (created and dropped here) on the
server the URL names (CI starts one with scripts/pg_test_server.sh).
"""

from __future__ import annotations

import os
import uuid

import pytest

PG_URL = os.environ.get("RANKSCOPE_TEST_PG_URL")


def _fresh_pg_database() -> tuple[str, str]:
    import psycopg

    from rankscope.store.db import store_url

    url = store_url(PG_URL or "")
    name = "rs_" + uuid.uuid4().hex[:12]
    admin = url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin, autocommit=True) as con:
        con.execute(f'CREATE DATABASE "{name}"')
    return url.rsplit("/", 1)[0] + "/" + name, name


def _drop_pg_database(name: str) -> None:
    import psycopg

    admin = (PG_URL or "").replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin, autocommit=True) as con:
        con.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    pytest.importorskip("sqlalchemy")
    if request.param == "sqlite":
        yield str(tmp_path / "store.sqlite")
        return
    if not PG_URL:
        pytest.skip("RANKSCOPE_TEST_PG_URL is not set (no PostgreSQL server for this run)")
    url, name = _fresh_pg_database()
    try:
        yield url
    finally:
        _drop_pg_database(name)
