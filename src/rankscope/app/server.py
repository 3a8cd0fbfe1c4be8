"""The web app as a server runs it: its store, the operator's boundary, recovery, the demo.

``rankscope serve`` reads its options into :class:`ServerSettings` and calls
:func:`serve`; everything a server decides lives here:

- the store's writer policy (:func:`open_app_store`: SQLite through one
  writer thread, PostgreSQL inline; text with a NUL refused on both);
- the trust boundary from the options and the environment
  (:func:`boundary_for`: ``RANKSCOPE_ALLOW_ENV``, ``RANKSCOPE_ALLOW_HOSTS``);
- the address checked before anything is said (:func:`check_listen`);
- evaluations a stopped server left running, marked failed;
- the demo's set-up on a new database;
- uvicorn's options (its own proxy-header trust off).

Messages for the operator go through the ``say`` and ``warn`` callables the
caller gives (the command line writes them to stdout and stderr).
"""

from __future__ import annotations

import gc
import os
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankscope.errors import DependencyError, OptionError, setting

if TYPE_CHECKING:
    from rankscope.services.boundary import Boundary
    from rankscope.store.db import Store

__all__ = ["DEFAULT_DB", "ServerSettings", "boundary_for", "check_listen", "exposure_warnings",
           "open_app_store", "serve", "uvicorn_options"]

DEFAULT_DB = "rankscope.sqlite"


@dataclass(frozen=True)
class ServerSettings:
    """What the operator set (``rankscope serve``'s options, one field each)."""

    db: str | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    data_dir: str | None = None
    demo: bool = False
    files_dir: str | None = None
    allow_env: Sequence[str | None] = field(default_factory=tuple)
    allow_hosts: Sequence[str | None] = field(default_factory=tuple)
    irds: Sequence[str] = field(default_factory=tuple)
    forwarded_allow_ips: str | None = None

    def database(self) -> str:
        """The database: as given, or a new one in a temporary directory for the demo."""
        if self.db is not None:
            return self.db
        if self.demo:
            import tempfile

            return str(Path(tempfile.mkdtemp(prefix="rankscope-demo-")) / "demo.sqlite")
        return DEFAULT_DB

    def data_directory(self, db: str) -> Path:
        """The app's own files: as given, else the database file's directory (the working
        directory for a database URL)."""
        if self.data_dir:
            return Path(self.data_dir)
        return Path(db).resolve().parent if "://" not in db else Path.cwd()


def open_app_store(db: str) -> Store:
    """The store for the app: SQLite through one writer thread, PostgreSQL inline.

    Text with a NUL and integers past 64 bits are refused (a 400) the same on
    both backends (:func:`rankscope.store.unstorable.refuse_unstorable`).
    """
    from rankscope.store.db import (
        InlineWriter,
        ThreadWriter,
        open_store,
        store_url,
    )
    from rankscope.store.unstorable import refuse_unstorable

    url = store_url(db)
    writer = ThreadWriter() if url.startswith("sqlite") else InlineWriter()
    store = open_store(db, writer=writer)
    refuse_unstorable(store.engine)
    return store


def boundary_for(settings: ServerSettings, store: Store | None, data_dir: Path) -> Boundary:
    """The server's :class:`~rankscope.services.boundary.Boundary` from its settings and the
    environment (``RANKSCOPE_ALLOW_ENV``, ``RANKSCOPE_ALLOW_HOSTS`` add to the settings)."""
    from rankscope.services.boundary import Boundary

    return Boundary.for_server(
        store, data_dir, files_dir=settings.files_dir,
        allow_env=[*settings.allow_env, os.environ.get("RANKSCOPE_ALLOW_ENV")],
        allow_hosts=[*settings.allow_hosts, os.environ.get("RANKSCOPE_ALLOW_HOSTS")],
        irds=settings.irds)


def uvicorn_options(settings: ServerSettings) -> dict[str, Any]:
    """What ``uvicorn.run`` is given: uvicorn's own proxy-header trust is off (by default it
    believes X-Forwarded-For from 127.0.0.1); the app trusts ``forwarded_allow_ips`` only."""
    return {"host": settings.host, "port": settings.port, "log_level": "warning",
            "access_log": False, "proxy_headers": False, "server_header": False}


def _set_start_up_aside() -> None:
    """Take what exists once the app is built out of the collector's generations.

    The imports, the store and the app are about 150,000 objects that live
    as long as the server and are never garbage; left in the oldest generation, every
    full collection walks them all (0.1 s on this project's hosts, a pause for whoever
    is waiting). Collected once, then frozen (:func:`gc.freeze`): later collections
    walk only what the requests made.
    """
    gc.collect()
    gc.freeze()


def check_listen(host: str, port: int) -> None:
    """Refuse, before anything is said or opened, an address the server could not listen on.

    The address is bound once and let go (``SO_REUSEADDR``, as uvicorn binds
    it): a host that is no address of this machine, a name that does not
    resolve, a port in use or not allowed is an :class:`OptionError`.
    """
    if not 0 < port < 65536:
        raise OptionError(f"{setting('port')} must be 1 to 65535, not {port}")
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        raise OptionError(f"{setting('host')} {host}: not an address or name this machine "
                          f"can listen on ({exc})") from None
    family, kind, proto, _, address = found[0]
    try:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as exc:
        raise OptionError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def exposure_warnings(settings: ServerSettings, boundary: Boundary) -> list[str]:
    """What an operator should know about the boundary they set (said, never fatal)."""
    out = []
    for net in boundary.hosts.networks:
        if net.prefixlen == 0:
            out.append(f"{setting('allow_hosts')} {net} lets web users reach every address of "
                       "its family, this machine's included")
    if settings.forwarded_allow_ips and settings.forwarded_allow_ips.strip() == "*":
        out.append(f"{setting('forwarded_allow_ips')} '*' believes X-Forwarded-For from any "
                   "client: use it only when the app is reachable through the proxy alone")
    return out


def serve(settings: ServerSettings, *, say: Callable[[str], None],
          warn: Callable[[str], None]) -> None:
    """Check the address, open the store, recover, set up the demo, and serve until stopped.

    Raises
    ------
    DependencyError
        The ``app`` extra is not installed.
    OptionError
        An address the server cannot listen on, a boundary entry that is not
        one, or the demo asked on a database that has users.
    """
    try:
        import uvicorn

        from rankscope.app.factory import create_app
    except ImportError as exc:
        raise DependencyError(exc.name or "fastapi", "app", "rankscope serve") from None
    check_listen(settings.host, settings.port)
    db = settings.database()
    data_dir = settings.data_directory(db)
    store = open_app_store(db)
    try:
        boundary = boundary_for(settings, store, data_dir)
        from rankscope.services.campaign_runs import recover_interrupted_runs

        for evaluation_id in recover_interrupted_runs(store):
            warn(f"note: evaluation #{evaluation_id} was running when the server stopped; "
                 "marked failed (run it again)")
        from rankscope.services.tries import recover_interrupted_tries

        for evaluation_id, number in recover_interrupted_tries(store):
            warn(f"note: try #{number} of evaluation #{evaluation_id} was running when the "
                 "server stopped; marked failed (run it again)")
        address = f"http://{settings.host}:{settings.port}/"
        if settings.demo:
            _set_up_demo(store, db, boundary, address, say)
        say(f"rankscope serving {address} (database {db}; Ctrl-C stops)")
        for warning in exposure_warnings(settings, boundary):
            warn(f"warning: {warning}")
        app = create_app(store, data_dir, boundary=boundary,
                         forwarded_allow_ips=settings.forwarded_allow_ips)
        _set_start_up_aside()
        uvicorn.run(app, **uvicorn_options(settings))
    finally:
        store.close()


def _set_up_demo(store: Store, db: str, boundary: Boundary, address: str,
                 say: Callable[[str], None]) -> None:
    """The demo collection and its accounts, on a database without users."""
    from rankscope.services.accounts import list_users
    from rankscope.services.app_demo import setup_demo

    if list_users(store):
        raise OptionError(f"{setting('demo')} needs a new database; {db} has users already")
    say("setting up the demo (building the search index)...")
    login = setup_demo(store, boundary.files_dir / "demo", boundary=boundary)
    say(f"demo ready: sign in at {address}login as {login.admin} / {login.admin_password} "
        f"(admin) or {login.judge} / {login.judge_password} (judge); evaluation "
        f"#{login.evaluation_id} is ready to grade\n"
        f"  #{login.baseline_id}: the baseline, graded by the shipped judgments; "
        f"#{login.tuned_id}: the tuned endpoint at depth 20, compared with it (its holes are "
        "to grade)")
