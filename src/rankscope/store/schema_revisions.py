"""The schema's revisions: the newest one, a store's own, and migrating between them.

Alembic migrations under ``rankscope.store:migrations``; :func:`head_revision`
reads the newest one from the files' text, so opening an up-to-date store
(:func:`rankscope.store.db.open_store`) imports no alembic.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankscope.store.connections import WRITING

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

__all__ = ["MIGRATION_LOCK", "alembic_config", "current_and_head", "current_revision",
           "downgrade", "head_revision", "upgrade"]

MIGRATION_LOCK = 0x72616E6B73636F70
"""PostgreSQL advisory lock key held while migrating (``rankscop`` in ASCII)."""


def alembic_config(connection: Any) -> Any:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", "rankscope.store:migrations")
    config.attributes["connection"] = connection
    return config


_REVISION = re.compile(r"""^revision\s*=\s*["']([^"']+)["']""", re.MULTILINE)
_DOWN_REVISION = re.compile(r"""^down_revision\s*=\s*(?:["']([^"']+)["']|None)\s*$""",
                            re.MULTILINE)


@functools.cache
def head_revision() -> str | None:
    """The newest schema revision, read from the migration files' text.

    Opening an up-to-date store then needs neither alembic (a slow import)
    nor its script directory. None when the files are not one plain chain
    (a merge of branches): alembic decides then.
    """
    versions = Path(__file__).parent / "migrations" / "versions"
    revisions: set[str] = set()
    parents: set[str] = set()
    for file in versions.glob("*.py"):
        text = file.read_text(encoding="utf-8")
        found = _REVISION.search(text)
        if found is None:
            continue
        down = _DOWN_REVISION.search(text)
        if down is None:
            return None
        revisions.add(found.group(1))
        if down.group(1):
            parents.add(down.group(1))
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 else None


def current_revision(engine: Engine) -> str | None:
    from sqlalchemy import inspect, text

    with engine.connect() as connection:
        if not inspect(connection).has_table("alembic_version"):
            return None
        value = connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
        return None if value is None else str(value)


def current_and_head(engine: Engine) -> tuple[str | None, str]:
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    with engine.connect() as connection:
        current = MigrationContext.configure(connection).get_current_revision()
        head = ScriptDirectory.from_config(alembic_config(connection)).get_current_head()
    return current, str(head)


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Migrate the schema up to ``revision`` (alembic, in one transaction).

    The transaction holds the write lock (SQLite) or an advisory lock
    (PostgreSQL) from its start, so processes migrating at once take turns
    and the later ones find the schema up to date.
    """
    from alembic import command
    from sqlalchemy import text

    with engine.execution_options(**{WRITING: True}).begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"),
                               {"key": MIGRATION_LOCK})
        command.upgrade(alembic_config(connection), revision)


def downgrade(engine: Engine, revision: str = "base") -> None:
    """Migrate the schema down to ``revision`` (``base``: drop every table)."""
    from alembic import command

    with engine.begin() as connection:
        command.downgrade(alembic_config(connection), revision)
