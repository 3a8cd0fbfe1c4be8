"""Search-engine kinds: one module per kind in this package, each declaring a :class:`SearchKind`.

An endpoint file's ``kind`` names one of them. A kind says which keys of the file it
reads beyond the common ones, checks them (and may normalise them), says whether its
template is JSON, and opens the endpoint. :func:`kinds` finds every module of this
package the first time it is asked and reads its ``KINDS`` (a tuple of
:class:`SearchKind`), so adding a kind is one file here (and its test); nothing else
lists the kinds. docs/extending.md shows a whole one.

Remote kinds (``remote=True``) also accept the HTTP keys of :data:`REMOTE_KEYS` and a
``url``, and open over the one search client (:mod:`rankscope.search.client`: retries,
rate limits, the operator's host policy), given to ``open`` as ``client``.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankscope.errors import ConfigError

if TYPE_CHECKING:
    from rankscope.search.client import SearchClient
    from rankscope.search.files import FileScope
    from rankscope.search.types import Endpoint, EndpointConfig

__all__ = ["COMMON_KEYS", "REMOTE_KEYS", "CheckContext", "SearchKind", "find_kind", "kinds",
           "need_client"]

COMMON_KEYS = frozenset({
    "kind", "name", "description", "template", "template_file", "template_syntax",
    "id_field", "score_field", "title_field", "snippet_field", "url_field", "image_field",
    "display_fields", "variables",
})
"""Keys every kind reads."""

REMOTE_KEYS = frozenset({
    "url", "headers", "headers_env", "params_env", "auth", "timeout", "concurrency", "rps",
    "max_retries", "backoff", "max_backoff", "max_retry_after", "verify_tls", "total_field",
})
"""Keys every remote (HTTP) kind reads: where it is, how to reach it, how hard to try."""


@dataclass(frozen=True)
class CheckContext:
    """What a kind's check may need besides the settings."""

    source: str | None
    """The endpoint file's name, for messages."""
    base: Path
    """Where relative paths start."""
    files: FileScope | None
    """Where the files it names must be (a web user's endpoint); None: anywhere."""

    def fail(self, message: str, value: Any = None) -> ConfigError:
        """A :class:`ConfigError` naming the file (and the value)."""
        return ConfigError(message, source=self.source,
                           value=None if value is None else str(value))


def _no_check(settings: dict[str, Any], context: CheckContext) -> None:
    del settings, context


def _no_json(settings: Mapping[str, Any]) -> bool:
    del settings
    return False


@dataclass(frozen=True)
class SearchKind:
    """One kind of search endpoint, as an endpoint file names it.

    Parameters
    ----------
    name : str
        The value of ``kind`` in the file.
    summary : str
        One line: what it talks to.
    keys : frozenset of str
        The keys it reads beyond :data:`COMMON_KEYS` (and :data:`REMOTE_KEYS`
        when remote); any other key is refused with a "did you mean".
    open : callable
        ``open(config, client, options) -> Endpoint``: ``client`` is a
        :class:`~rankscope.search.client.SearchClient` for a remote kind, None
        otherwise; ``options`` are :func:`~rankscope.search.config.open_endpoint`'s
        (``keep_raw``, ...). Import heavy modules inside it, not at the top.
    remote : bool
        An HTTP kind: needs ``url`` (http or https) and gets a client.
    check : callable, optional
        ``check(settings, context)``: refuse a bad value (``context.fail``),
        fill in or rename keys; runs after the common checks.
    json_template : callable, optional
        ``json_template(settings)``: whether ``template`` is JSON (checked when read).
    explains : bool
        Its endpoints can say why each hit is there (``open_endpoint(..., explain=True)``
        sets their ``explain``); False: asking is refused.
    """

    name: str
    summary: str
    keys: frozenset[str]
    open: Callable[[EndpointConfig, SearchClient | None, Mapping[str, Any]], Endpoint]
    remote: bool = True
    check: Callable[[dict[str, Any], CheckContext], None] = field(default=_no_check)
    json_template: Callable[[Mapping[str, Any]], bool] = field(default=_no_json)
    explains: bool = False

    def allowed_keys(self) -> frozenset[str]:
        """Every key a file of this kind may hold."""
        return COMMON_KEYS | (REMOTE_KEYS if self.remote else frozenset()) | self.keys


def need_client(client: SearchClient | None) -> SearchClient:
    """The client a remote kind's ``open`` is given (a TypeError if a caller gave none)."""
    if client is None:
        raise TypeError("a remote search kind is opened with its client")
    return client


_FOUND: dict[str, SearchKind] = {}


def kinds() -> dict[str, SearchKind]:
    """Every kind, by name (the modules of this package, read on the first call).

    Raises
    ------
    TypeError
        A module's ``KINDS`` is not a tuple of :class:`SearchKind`, or two modules
        declare one name (a mistake in the package, not in a user's file).
    """
    if not _FOUND:
        found: dict[str, SearchKind] = {}
        for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
            module = importlib.import_module(f"{__name__}.{info.name}")
            declared = getattr(module, "KINDS", None)
            if not isinstance(declared, tuple) or not all(
                    isinstance(k, SearchKind) for k in declared):
                raise TypeError(f"{module.__name__}.KINDS must be a tuple of SearchKind")
            for kind in declared:
                if kind.name in found:
                    raise TypeError(f"search kind {kind.name!r} declared twice")
                found[kind.name] = kind
        _FOUND.update(found)
    return dict(_FOUND)


def find_kind(name: Any, source: str | None = None) -> SearchKind:
    """The kind ``name`` names (raises :class:`ConfigError` naming the known ones)."""
    known = kinds()
    if not isinstance(name, str) or name not in known:
        raise ConfigError(f"kind must be one of {', '.join(known)}", source=source,
                          value=None if name is None else str(name))
    return known[name]
