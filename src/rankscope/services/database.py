"""Opening the app's database for a command (``rankscope user``): one call, one policy.

Writes run inline (a command is one thread); text with a NUL is refused as
the app refuses it. A database named to be read is never created
(``create=False``): a SQLite file that does not exist, or a database without
rankscope's tables, is a :class:`~rankscope.errors.StoreError`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rankscope.store.db import Store

__all__ = ["open_database"]


def open_database(target: str | Path, *, create: bool = True) -> Store:
    """The database at a path or URL (``create``: a new one where there is none)."""
    from rankscope.store.db import open_store
    from rankscope.store.unstorable import refuse_unstorable

    store = open_store(target, create=create)
    refuse_unstorable(store.engine)
    return store
