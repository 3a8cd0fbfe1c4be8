"""Opening the store (migrated by :mod:`rankscope.store.schema_revisions`), writing to it.

``open_store("snapshots.sqlite")`` (a file path) or ``open_store(URL)``
(``sqlite:///...``, ``postgresql+psycopg://user@host/db``; a plain
``postgresql://`` is read as psycopg 3). The schema is brought to the
newest revision on open (alembic, in place).

SQLite is opened in WAL mode with ``foreign_keys=ON``, a busy timeout and
``synchronous=FULL`` (a commit that returned survives a crash of the
process and of the machine). Its write transactions (and the migration)
start with ``BEGIN IMMEDIATE``: the write lock is taken at the start, where
the busy timeout waits for it, never half-way through (a read transaction
that later writes cannot wait: SQLite answers "database is locked" at once),
so several processes writing to one file all succeed. On PostgreSQL the
migration holds an advisory lock, so processes opening a new database at
once migrate it once.

**Writes** go through :meth:`Store.write` with a function of a session: the
function runs in its own transaction, committed when it returns, rolled back
when it raises. Who runs it is the store's *writer*: inline in the caller's
thread (the command line, one process), or one thread owning every write
(:class:`ThreadWriter`, what a multi-user app puts in front of SQLite so no
request ever meets "database is locked"; writes that wait for it together
share one commit, each in its savepoint). Code written against
:meth:`Store.write` works unchanged with either.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from rankscope.errors import DependencyError, StoreError
from rankscope.store.connections import SINGLE, WRITING
from rankscope.store.connections import make_engine as _engine
from rankscope.store.schema_revisions import (
    alembic_config,
    current_and_head,
    current_revision,
    downgrade,
    head_revision,
    upgrade,
)
from rankscope.store.unstorable import UNSTORABLE, first_unstorable, refuse_unstorable

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine
    from sqlalchemy.orm import Session

__all__ = [
    "UNSTORABLE",
    "InlineWriter",
    "Store",
    "ThreadWriter",
    "Writer",
    "check_target",
    "downgrade",
    "first_unstorable",
    "open_store",
    "refuse_unstorable",
    "require",
    "serialize",
    "shown_url",
    "store_url",
    "upgrade",
]

T = TypeVar("T")



def require() -> None:
    """Raise :class:`DependencyError` when the ``store`` extra is missing (nothing imported)."""
    from importlib.util import find_spec

    for name in ("sqlalchemy", "alembic"):  # alembic is imported only to migrate
        if find_spec(name) is None:
            raise DependencyError(name, "store", "the database (store)")


def shown_url(target: str | Path) -> str:
    """A store's file path or URL as messages print it: a password in it replaced by ``***``.

    Error lines end up in CI logs and bug reports; the URL's user, host and
    database say which store was meant without its secret.

    Examples
    --------
    >>> shown_url("postgresql://ann:s3cret@db.example/ratings")
    'postgresql://ann:***@db.example/ratings'
    >>> shown_url("runs/snapshots.sqlite")
    'runs/snapshots.sqlite'
    """
    text = str(target)
    scheme, sep, rest = text.partition("://")
    if not sep:
        return text
    authority, slash, path = rest.partition("/")
    userinfo, at, host = authority.rpartition("@")
    if not at or ":" not in userinfo:
        return text
    user = userinfo.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}{slash}{path}"


def store_url(target: str | Path) -> str:
    """The SQLAlchemy URL for a file path or URL.

    Examples
    --------
    >>> store_url("postgresql://u@h/db")
    'postgresql+psycopg://u@h/db'
    >>> store_url("sqlite:///x.sqlite")
    'sqlite:///x.sqlite'
    """
    text = str(target)
    if text.startswith(("postgresql://", "postgres://")):
        return "postgresql+psycopg://" + text.split("://", 1)[1]
    if "://" in text:
        return text
    return "sqlite:///" + str(Path(text).expanduser().resolve())


class Writer(Protocol):
    """Runs a unit of work (already wrapped in its transaction) and returns its result."""

    def run(self, job: Callable[[], T]) -> T:
        """Run ``job`` and return what it returns (raising what it raises)."""
        ...

    def close(self) -> None:
        """Stop accepting work."""
        ...


class InlineWriter:
    """Runs each write in the calling thread (one process, one writer)."""

    def run(self, job: Callable[[], T]) -> T:
        """Run ``job`` now."""
        return job()

    def close(self) -> None:
        """Nothing to stop."""


class ThreadWriter:
    """Runs every write, in order, on one thread that owns the writing.

    Callers on any thread block until their write is committed (or has
    failed, in which case they get its exception). Writes of a store that
    wait together share one commit (group commit, at most ``max_group``):
    each runs in a savepoint of one transaction, in the order they came (a
    write sees the ones before it, as one after another would), a failed
    one is rolled back alone, and every answer waits for the commit. A
    commit (an fsync with SQLite's ``synchronous=FULL``) then serves many
    graders at once; a write that waits alone is committed alone.
    """

    def __init__(self, max_group: int = 32) -> None:
        if max_group < 1:
            raise ValueError(f"max_group must be at least 1, not {max_group}")
        self.max_group = max_group
        self._queue: queue.SimpleQueue[_Queued | None] = queue.SimpleQueue()  # None: stop
        self._closing = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._serve, name="rankscope-writer",
                                        daemon=True)
        self._thread.start()

    def run(self, job: Callable[[], T]) -> T:
        """Queue ``job`` for the writer thread and wait for its result."""
        done: Future[T] = Future()
        with self._closing:
            if self._closed:
                raise RuntimeError("the writer is closed")
            self._queue.put(_Queued(job, done))
        return done.result()

    def _serve(self) -> None:
        held: list[_Queued | None] = []  # taken from the queue, not yet run
        while True:
            first = held.pop() if held else self._queue.get()
            if first is None:
                return
            group = [first]
            if isinstance(first.job, _Write):
                while len(group) < self.max_group:  # what waits now, never waiting for more
                    try:
                        more = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if more is None or not isinstance(more.job, _Write) \
                            or more.job.store is not first.job.store:
                        held.append(more)
                        break
                    group.append(more)
            if len(group) == 1:
                try:
                    first.done.set_result(first.job())
                except BaseException as exc:  # the caller gets it
                    first.done.set_exception(exc)
                continue
            writes = [cast(_Write, q.job) for q in group]
            try:
                outcomes = writes[0].store._write_group(writes)
            except BaseException as exc:  # an interrupt: every caller of the group gets it
                outcomes = [(False, exc)] * len(group)
            for queued, (ok, value) in zip(group, outcomes, strict=True):
                if ok:
                    queued.done.set_result(value)
                else:
                    queued.done.set_exception(value)

    def close(self) -> None:
        """Finish the queued writes and stop the thread."""
        with self._closing:
            if self._closed:
                return
            self._closed = True
            self._queue.put(None)
        self._thread.join()


class _Queued:
    """A job waiting for the writer thread, and where its outcome goes."""

    __slots__ = ("done", "job")

    def __init__(self, job: Callable[[], Any], done: Future[Any]) -> None:
        self.job = job
        self.done = done


class _Write:
    """One unit of work of a store: :meth:`Store.write`'s job (alone: its own transaction)."""

    def __init__(self, store: Store, work: Callable[[Session], Any]) -> None:
        self.store = store
        self.work = work

    def __call__(self) -> Any:
        with self.store._write_sessions() as session, session.begin():
            return self.work(session)


class Store:
    """An open store (the database): an engine, a session factory and a writer.

    Use :func:`open_store` to make one.
    """

    def __init__(self, url: str, engine: Engine, writer: Writer) -> None:
        from sqlalchemy.orm import sessionmaker

        self.url = url
        self.engine = engine
        self.writer = writer
        self._sessions = sessionmaker(engine, expire_on_commit=False)
        self._writing = engine.execution_options(**{WRITING: True})
        self._write_sessions = sessionmaker(self._writing, expire_on_commit=False)
        # one statement needs no transaction: no BEGIN and ROLLBACK (PostgreSQL's autocommit;
        # SQLite's connections begin no transaction themselves, ours is skipped: SINGLE)
        self._single_sessions = sessionmaker(engine.execution_options(
            **({SINGLE: True} if url.startswith("sqlite") else {"isolation_level": "AUTOCOMMIT"})),
            expire_on_commit=False)

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return str(self.engine.dialect.name)

    @contextlib.contextmanager
    def read(self, *, single: bool = False) -> Iterator[Session]:
        """A session for reading (closed on exit; nothing is committed).

        ``single``: for one statement (an API token's user), read outside a
        transaction on PostgreSQL (two round trips fewer: no BEGIN, no
        ROLLBACK); several statements read this way may see different commits.
        """
        session = (self._single_sessions if single else self._sessions)()
        try:
            yield session
        finally:
            session.rollback()
            session.close()

    def write(self, work: Callable[[Session], T]) -> T:
        """Run ``work(session)`` in one transaction through the writer; its result.

        The transaction is committed when ``work`` returns and rolled back
        when it raises (the exception then reaches the caller).
        """

        return self.writer.run(_Write(self, work))  # type: ignore[no-any-return]

    def _write_group(self, writes: list[_Write]) -> list[tuple[bool, Any]]:
        """Run writes in one transaction, each in a savepoint; their outcomes,
        ``(True, result)`` or ``(False, exception)``, known only once the commit is done."""
        from sqlalchemy.orm import Session as OrmSession

        outcomes: list[tuple[bool, Any]] = []
        try:
            with self._writing.connect() as connection, connection.begin():
                for write in writes:
                    session = OrmSession(bind=connection, expire_on_commit=False,
                                         join_transaction_mode="create_savepoint")
                    try:
                        with session.begin():  # a savepoint: released, or rolled back alone
                            outcomes.append((True, write.work(session)))
                    except Exception as exc:
                        outcomes.append((False, exc))
                    finally:
                        session.close()
        except Exception as exc:  # the commit failed: nothing of the group was written
            return [(False, exc)] * len(writes)
        return outcomes

    def close(self) -> None:
        """Stop the writer and close every connection."""
        self.writer.close()
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def serialize(session: Session, what: str) -> None:
    """Make the session's transaction the only one doing ``what`` until it ends.

    For a write that creates what it does not find (a project, a query set
    by name): on PostgreSQL two transactions could both not find it and
    both insert, and one would fail on the unique constraint; an advisory
    lock keyed by ``what`` makes them take turns. SQLite's write
    transactions already do (``BEGIN IMMEDIATE``).
    """
    if session.get_bind().dialect.name == "postgresql":
        from sqlalchemy import text

        session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:what))"), {"what": what})


def check_target(target: str | Path, *, create: bool = True) -> str:
    """The store's URL, once what can be said of a SQLite file without opening it is checked.

    Raises
    ------
    StoreError
        No such file (``create`` False), or no directory to create it in.
    """
    url = store_url(target)
    if url.startswith("sqlite:///") and url != "sqlite:///:memory:":
        path = Path(url[len("sqlite:///"):])
        if not create and not path.is_file():
            raise StoreError(f"no store at {shown_url(target)}: no such file")
        if not path.parent.is_dir():
            raise StoreError(f"cannot create the store {shown_url(target)}: {path.parent} is not a "
                             "directory")
    return url


def open_store(
    target: str | Path, *, writer: Writer | None = None, migrate: bool = True,
    create: bool = True,
) -> Store:
    """Open (creating or migrating when needed) the store at a path or URL.

    Parameters
    ----------
    target : str or Path
        A file path (SQLite) or a SQLAlchemy URL.
    writer : Writer, optional
        Who runs writes (default :class:`InlineWriter`).
    migrate : bool, default True
        Bring the schema to the newest revision.
    create : bool, default True
        Make a new store where there is none. False, for a store opened to
        be read: a SQLite file that does not exist, or a database without
        rankscope's tables, is a :class:`StoreError` (and nothing is created).

    Raises
    ------
    DependencyError
        SQLAlchemy or alembic is missing (the ``store`` extra).
    StoreError
        The database cannot be reached, or its schema is newer than this
        rankscope knows.
    """
    require()
    from sqlalchemy.exc import SQLAlchemyError

    url = check_target(target, create=create)
    try:
        engine = _engine(url)
        if not create and current_revision(engine) is None:
            engine.dispose()
            raise StoreError(f"no store at {shown_url(target)}: "
                             "the database has no rankscope tables")
        if migrate:
            known_head = head_revision()
            up_to_date = known_head is not None and current_revision(engine) == known_head
            current, head = (known_head, known_head) if up_to_date else current_and_head(engine)
            if current != head:
                from alembic.script import ScriptDirectory

                with engine.connect() as connection:
                    known = {s.revision for s in ScriptDirectory.from_config(
                        alembic_config(connection)).walk_revisions()}
                if current is not None and current not in known:
                    raise StoreError(f"the store {shown_url(target)} has schema revision "
                                     f"{current}, newer than this rankscope knows: "
                                     "upgrade rankscope")
                upgrade(engine)
    except SQLAlchemyError as exc:
        orig = getattr(exc, "orig", None)
        reason = str(orig) if orig is not None else str(exc)
        raise StoreError(f"cannot open the store {shown_url(target)}: "
                         f"{reason.splitlines()[0]}") from None
    return Store(url, engine, writer or InlineWriter())
