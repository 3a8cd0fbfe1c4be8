"""Alembic migrations of the store (every table of the database), shipped in the package and run by
:func:`rankscope.store.db.upgrade` (never by hand-written SQL elsewhere)."""
