"""How each database is connected to: SQLite's pragmas and transactions, PostgreSQL's pool.

SQLite is opened in WAL mode with ``foreign_keys=ON``, a busy timeout and
``synchronous=FULL``; its transactions are begun here (``BEGIN IMMEDIATE``
for a connection with the :data:`WRITING` option). PostgreSQL's pooled
connections are pinged before use only after sitting idle
(:data:`PING_IDLE_S`), not on every checkout. Both pools keep up to
:data:`POOL_SIZE` connections open for reuse.
"""

from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

__all__ = ["BUSY_TIMEOUT_MS", "PING_IDLE_S", "POOL_SIZE", "SINGLE", "WRITING", "make_engine"]

BUSY_TIMEOUT_MS = 30_000
"""How long a SQLite connection waits for the write lock."""
WRITING = "rankscope_writing"
"""Execution option of the connections that write (SQLite: ``BEGIN IMMEDIATE``)."""
SINGLE = "rankscope_single"
"""Execution option of the connections that read one statement (SQLite: no ``BEGIN``; a
statement outside a transaction is its own read transaction, as consistent)."""


POOL_SIZE = 40
"""Connections a store's pool keeps once opened (opened only when that many are in use at
once): as many as the app's worker threads (anyio's default, 40), so a connection given
back is used again by the next request, not closed and opened anew. With SQLAlchemy's
default of 5, 8 graders at once made PostgreSQL start 59 backends in 15 s (one per
request past the fifth, each a new process on the server)."""


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")  # first: WAL may wait for a lock
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.close()
    dbapi_connection.isolation_level = None  # no implicit BEGIN/COMMIT: see _sqlite_begin


def _sqlite_begin(connection: Any) -> None:
    options = connection.get_execution_options()
    if options.get(SINGLE, False):
        return  # one statement: BEGIN and its ROLLBACK would be two statements more
    writing = options.get(WRITING, False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if writing else "BEGIN")


def make_engine(url: str) -> Engine:
    """The engine of a store URL (``sqlite:///...`` or ``postgresql+psycopg://...``)."""
    from sqlalchemy import create_engine, event

    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000},
                               pool_size=POOL_SIZE)
        event.listen(engine, "connect", _sqlite_pragmas)
        # pysqlite opens transactions itself, only before a write: a SAVEPOINT coming
        # first would open it and its RELEASE commit it, half a unit of work. The
        # transactions are ours (SQLAlchemy's recipe for SQLite savepoints).
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    engine = create_engine(url, pool_size=POOL_SIZE)
    event.listen(engine, "connect", _idle_from_now)
    event.listen(engine, "checkin", _idle_from_now)
    event.listen(engine, "checkout", functools.partial(_ping_when_idle, engine.dialect))
    return engine


PING_IDLE_S = 5.0
"""A pooled connection idle longer than this is pinged before use (a server restarted or a
connection cut while idle is replaced, not met by a request); one used more recently is not
(a ping is a round trip: twice per request when every checkout pinged)."""


def _idle_from_now(_dbapi_connection: Any, record: Any) -> None:
    record.info["idle_since"] = time.monotonic()


def _ping_when_idle(dialect: Any, dbapi_connection: Any, record: Any, _proxy: Any) -> None:
    """SQLAlchemy's pre-ping, for connections idle past :data:`PING_IDLE_S` only."""
    from sqlalchemy.exc import DisconnectionError

    if time.monotonic() - record.info.get("idle_since", 0.0) <= PING_IDLE_S:
        return
    try:
        dialect.do_ping(dbapi_connection)
    except dialect.loaded_dbapi.Error as exc:  # the pool replaces it and tries again
        raise DisconnectionError(f"a pooled connection was lost: {exc}") from exc
