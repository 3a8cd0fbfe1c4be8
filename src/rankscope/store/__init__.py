"""The database: every table of rankscope (snapshots, the web app's projects, users,
grades and campaigns, the LLM answer cache), SQLAlchemy models, alembic migrations,
one way to write.

One database for the command line and the web app (SQLite by default, PostgreSQL by URL).
Needs the ``store`` extra (SQLAlchemy 2, alembic, psycopg)::

    from rankscope.store.db import open_store
    store = open_store("snapshots.sqlite")
    store.write(lambda session: ...)   # one transaction, through the store's writer

See :mod:`rankscope.store.db` (opening, migrations, writers),
:mod:`rankscope.store.models` (tables) and :mod:`rankscope.store.snapshots`
(snapshots in and out).
"""

from importlib.util import find_spec as _find_spec

from rankscope.errors import DependencyError

# Every module of the store needs both; say which extra to install, once, here (alembic is
# only looked for: importing it takes longer than opening an up-to-date store).
for _name in ("sqlalchemy", "alembic"):
    if _find_spec(_name) is None:
        raise DependencyError(_name, "store", "the database (store)")
