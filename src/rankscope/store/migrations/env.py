"""Alembic environment: migrations run on the connection rankscope hands over.

:func:`rankscope.store.db.upgrade` puts an open connection in
``config.attributes["connection"]``; there is no ``alembic.ini`` and no URL
here, so the same migrations serve the command line, the web app and tests.
"""

from __future__ import annotations

from alembic import context

from rankscope.store.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run rankscope's migrations through rankscope.store.db.upgrade()")

context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=connection.dialect.name == "sqlite",  # SQLite alters tables by copying
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
