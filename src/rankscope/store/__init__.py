"""The snapshot store: SQLAlchemy models, alembic migrations, one way to write.

The same database the web app uses (SQLite by default, PostgreSQL by URL).
Needs the ``store`` extra (SQLAlchemy 2, alembic, psycopg)::

    from rankscope.store.db import open_store
    store = open_store("snapshots.sqlite")
    store.write(lambda session: ...)   # one transaction, through the store's writer

See :mod:`rankscope.store.db` (opening, migrations, writers),
:mod:`rankscope.store.models` (tables) and :mod:`rankscope.store.snapshots`
(snapshots in and out).
"""

from rankscope.errors import DependencyError

try:  # every module of the store needs both; say which extra to install, once, here
    import alembic as _alembic  # noqa: F401
    import sqlalchemy as _sqlalchemy  # noqa: F401
except ImportError as _missing:
    raise DependencyError(_missing.name or "sqlalchemy", "store", "the snapshot store") from None
