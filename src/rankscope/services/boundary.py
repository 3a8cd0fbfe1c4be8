"""What a web user may make the server do: the operator's settings, checked in one place.

A curator configures endpoints and LLM judges; the operator configures the
server (``rankscope serve``). A :class:`Boundary` holds what the operator
set, and the services that act on a curator's configuration take it:

- **files** (``--files-dir``, default the data directory): every path an
  endpoint names stays inside it, and never names the app's own files
  (:class:`rankscope.search.files.FileScope`);
- **environment variables** (``--allow-env``, ``RANKSCOPE_ALLOW_ENV``; none by
  default): the only ones an endpoint's ``headers_env``, ``params_env`` or
  ``auth`` and a judge's ``api_key_env`` may name;
- **hosts** (``--allow-hosts``, ``RANKSCOPE_ALLOW_HOSTS``): the non-public
  hosts, addresses and ranges endpoints, version URLs and judges may reach
  besides the public internet (:class:`rankscope.outbound.hosts.HostPolicy`);
- **public collections** (``--irds``; none by default): the ir_datasets
  collections (name patterns) a curator may name as ``irds:NAME``, as a
  query set or as an embedded engine's corpus (not a file: read from
  ir_datasets' cache, never downloaded).

Each rule is checked when the configuration is given (a 4xx naming the key)
and again when it is used, since the operator may have changed the settings
in between. The command line, run by a user on their own machine, has no
boundary: it reads any variable and reaches any host its user names.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankscope.errors import OptionError
from rankscope.outbound.hosts import HostPolicy, Resolver

if TYPE_CHECKING:
    from rankscope.search.files import FileScope
    from rankscope.search.types import EndpointConfig
    from rankscope.store.db import Store

__all__ = ["CACHE_FILE", "Boundary", "split_list"]

CACHE_FILE = "llm-answers.sqlite"
"""The LLM judges' answer cache, in the data directory (the same as ``rankscope judge --cache``)."""


def split_list(values: Iterable[str | None]) -> list[str]:
    """Comma- or space-separated entries of options and environment variables, in order.

    Examples
    --------
    >>> split_list(["ES_KEY, OPENAI_API_KEY", None, "10.0.0.0/8 es.internal"])
    ['ES_KEY', 'OPENAI_API_KEY', '10.0.0.0/8', 'es.internal']
    """
    out: list[str] = []
    for value in values:
        if value:
            out.extend(part for part in value.replace(",", " ").split() if part)
    return out


@dataclass(frozen=True)
class Boundary:
    """The operator's settings that bound what a web user may make the server do.

    Parameters
    ----------
    files_dir : Path
        The directory endpoints' files stay in.
    reserved : frozenset of Path
        The app's own files (the SQLite database, the answer cache): an
        endpoint neither reads nor writes them.
    allowed_env : frozenset of str
        The environment variables endpoints and judges may name.
    hosts : HostPolicy
        The hosts they may reach.
    irds : tuple of str
        Name patterns of the ir_datasets collections curators may name
        (``beir/*``); none by default.
    max_in_flight : int
        The most queries the server sends to one endpoint at once, whatever its file's
        ``concurrency`` asks for (a web user's file cannot make it flood a host).
    """

    files_dir: Path
    reserved: frozenset[Path] = frozenset()
    allowed_env: frozenset[str] = frozenset()
    hosts: HostPolicy = field(default_factory=HostPolicy)
    irds: tuple[str, ...] = ()
    max_in_flight: int = 16

    @classmethod
    def for_server(cls, store: Store | None, data_dir: str | Path, *,
                   files_dir: str | Path | None = None, allow_env: Iterable[str | None] = (),
                   allow_hosts: Iterable[str | None] = (), irds: Iterable[str] = (),
                   resolver: Resolver | None = None) -> Boundary:
        """The boundary of a server over ``store`` (its database file is reserved).

        Raises
        ------
        OptionError
            An environment variable or host entry that is not one.
        """
        import re

        data = Path(data_dir).resolve()
        reserved = {data / CACHE_FILE}
        if store is not None and store.dialect == "sqlite" and store.engine.url.database:
            reserved.add(Path(store.engine.url.database).resolve())
        names = split_list(allow_env)
        bad = [n for n in names if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n)]
        if bad:
            raise OptionError(f"--allow-env takes environment variable names, not {bad[0]!r}")
        return cls(files_dir=Path(files_dir).resolve() if files_dir is not None else data,
                   reserved=frozenset(reserved), allowed_env=frozenset(names),
                   hosts=HostPolicy.parse(split_list(allow_hosts), resolver=resolver),
                   irds=tuple(irds))

    @property
    def files(self) -> FileScope:
        """Where endpoints' files may be."""
        from rankscope.search.files import FileScope

        return FileScope(self.files_dir, self.reserved, self.irds)

    def in_flight(self, config: EndpointConfig) -> int:
        """Queries sent at once to the endpoint: its file's ``concurrency`` (4 when it does
        not say), at most :attr:`max_in_flight`."""
        return min(config.concurrency, self.max_in_flight)

    def open_options(self) -> dict[str, Any]:
        """What :func:`rankscope.search.config.open_endpoint` needs to keep the boundary."""
        return {"allowed_env": self.allowed_env, "outbound": self.hosts}

    def check_env(self, name: str, what: str) -> None:
        """Refuse an environment variable the operator did not allow (OptionError, a 400)."""
        if name not in self.allowed_env:
            shown = ", ".join(sorted(self.allowed_env)) or "none"
            raise OptionError(f"{what} names the environment variable {name}, which this "
                              f"server does not let web users name (allowed: {shown}; its "
                              "operator allows more with rankscope serve --allow-env)")

    def check_url(self, url: str, what: str) -> None:
        """Refuse a URL whose host the operator did not allow (OutboundError, a 400)."""
        self.hosts.check_url(url, key=what)

    def check_endpoint(self, config: EndpointConfig) -> None:
        """Refuse an endpoint naming a variable, or pointing at a host, not allowed.

        Raises
        ------
        ConfigError, OutboundError
            Names the key of the endpoint.
        """
        from rankscope.search.credentials import check_environment_names

        settings = config.settings
        check_environment_names(settings, self.allowed_env, config.source)
        for key in ("url", "version_url"):
            value = settings.get(key)
            if isinstance(value, str) and "{{" not in value.split("://", 1)[-1].split("/")[0]:
                self.check_url(value, key)
            elif isinstance(value, str):
                raise OptionError(f"{key}: the host of an endpoint's URL cannot be a "
                                  "template placeholder in the web app")
