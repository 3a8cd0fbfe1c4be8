"""Alembic migrations of the snapshot store, shipped in the package and run by
:func:`rankscope.store.db.upgrade` (never by hand-written SQL elsewhere)."""
