"""Endpoint files: read a TOML description, check it, and open the endpoint it names.

Every kind shares a small shape (``kind``, ``name``, ``url``, ``template`` or
``template_file``, ``id_field``); each kind adds its own keys (see
docs/snapshots.md) and is declared in its own module of
:mod:`rankscope.search.kinds`, which this module only looks up. Unknown keys are
refused with a "did you mean", so a typo never silently changes what is
measured. Credentials are referenced by the name of an environment variable
(``password_env = "ES_PASSWORD"``) and read only when the endpoint is opened; a
credential written in the file itself is refused
(:mod:`rankscope.search.credentials`). An endpoint a web user wrote names files
only inside the operator's directory (:mod:`rankscope.search.files`).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rankscope.errors import ConfigError
from rankscope.search.credentials import check_no_credentials, resolve_auth, resolve_params
from rankscope.search.files import FileScope
from rankscope.search.kinds import CheckContext, SearchKind, find_kind
from rankscope.search.paths import parse_path
from rankscope.search.templates import import_template, parse_json_template
from rankscope.search.types import Endpoint, EndpointConfig

__all__ = [
    "OPERATIONAL_KEYS",
    "endpoint_from_dict",
    "explains",
    "load_endpoint",
    "open_endpoint",
    "resolve_auth",
    "resolve_params",
]

OPERATIONAL_KEYS = frozenset({
    "name", "description", "timeout", "concurrency", "rps", "max_retries", "backoff",
    "max_backoff", "max_retry_after", "headers_env", "params_env", "auth",
})
"""Keys that do not change what an engine returns: left out of the config hash."""

_PATH_KEYS = ("id_field", "score_field", "title_field", "snippet_field", "url_field",
              "image_field", "hits", "total_field", "version_path", "partial_field")


def _fail(message: str, source: str | None, value: Any = None) -> ConfigError:
    return ConfigError(message, source=source, value=None if value is None else str(value))


def _suggest(key: str, allowed: set[str]) -> str:
    close = difflib.get_close_matches(key, sorted(allowed), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _check_keys(data: Mapping[str, Any], kind: SearchKind, source: str | None) -> None:
    allowed = set(kind.allowed_keys())
    for key in data:
        if key not in allowed:
            raise _fail(f"unknown key {key!r} for kind {kind.name!r}{_suggest(key, allowed)}",
                        source)


def _template_text(data: dict[str, Any], base: Path, source: str | None,
                   files: FileScope | None) -> str | None:
    if "template" in data and "template_file" in data:
        raise _fail("give template or template_file, not both", source)
    text: Any = data.get("template")
    if "template_file" in data:
        if files is not None:
            file = files.resolve(data["template_file"], key="template_file", base=base,
                                 source=source)
        else:
            file = base / str(data["template_file"])
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise _fail("template_file is not UTF-8 text", source,
                        data["template_file"] if files is not None else str(file)) from None
        except OSError as exc:
            raise _fail(f"template_file cannot be read ({exc.strerror})", source,
                        data["template_file"] if files is not None else str(file)) from None
    if text is None:
        return None
    if isinstance(text, dict | list):  # a TOML table: already a parsed value
        return json.dumps(text, ensure_ascii=False)
    if not isinstance(text, str):
        raise _fail("template must be a string (JSON text) or a table", source)
    return import_template(text, str(data.get("template_syntax", "mustache")))


def _config_hash(settings: Mapping[str, Any]) -> str:
    shaping = {k: v for k, v in settings.items() if k not in OPERATIONAL_KEYS}
    text = json.dumps(shaping, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def endpoint_from_dict(
    data: Mapping[str, Any], *, source: str | None = None, base_dir: str | Path | None = None,
    files: FileScope | None = None,
) -> EndpointConfig:
    """Check an endpoint description (as read from TOML) and return its config.

    Parameters
    ----------
    data : mapping
        The keys of the file.
    source : str, optional
        The file name, for messages.
    base_dir : path, optional
        Where relative paths (``template_file``, ``corpus``, ``index``) start
        (default: the current directory).
    files : FileScope, optional
        Where those paths must lead (an endpoint a web user wrote); None:
        anywhere (the command line).

    Raises
    ------
    ConfigError
        A missing or unknown key, a bad value, a credential in the file, a
        template that does not parse, a path that does not parse, a file
        outside ``files``.
    ForbiddenError
        With ``files``: an embedded corpus ``irds:NAME`` the operator does not
        allow (``files.irds``).
    """
    settings = dict(data)
    kind = find_kind(settings.get("kind"), source)
    _check_keys(settings, kind, source)
    check_no_credentials(settings, source)
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    name = settings.get("name")
    if name is None:
        name = Path(source).stem if source else kind.name
    if not isinstance(name, str) or not name.strip():
        raise _fail("name must be a non-empty string", source, name)
    settings["name"] = name
    template = _template_text(settings, base, source, files)
    settings.pop("template_file", None)
    settings.pop("template_syntax", None)
    if template is not None:
        settings["template"] = template
        if kind.json_template(settings):
            parse_json_template(template, source=source)
    if kind.remote:
        url = settings.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise _fail("url must be an http:// or https:// address", source, url)
    kind.check(settings, CheckContext(source, base, files))
    for key in _PATH_KEYS:
        if key in settings and settings[key] is not None:
            parse_path(settings[key], key=key, source=source)
    display = settings.get("display_fields", {})
    if not isinstance(display, dict):
        raise _fail("display_fields must be a table of name = \"path\"", source)
    for field_name, path in display.items():
        parse_path(path, key=f"display_fields.{field_name}", source=source)
    variables = settings.get("variables", {})
    if not isinstance(variables, dict):
        raise _fail("variables must be a table of name = value", source)
    for key in ("timeout", "rps", "backoff", "max_backoff", "max_retry_after"):
        value = settings.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)
                                  or value <= 0):
            raise _fail(f"{key} must be a number > 0", source, value)
    for key in ("concurrency", "max_retries", "snippet_length"):
        value = settings.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < (0 if key == "max_retries" else 1)):
            raise _fail(f"{key} must be a whole number >= "
                        f"{0 if key == 'max_retries' else 1}", source, value)
    return EndpointConfig(
        kind=kind.name,
        name=name,
        settings=settings,
        config_hash=_config_hash(settings),
        source=source,
        base_dir=str(base),
        files=files,
    )


def load_endpoint(path: str | Path) -> EndpointConfig:
    """Read and check an endpoint TOML file.

    Raises
    ------
    FileAccessError, ConfigError
    """
    from rankscope.errors import FileAccessError

    file = Path(path)
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise FileAccessError(f"cannot read the endpoint file ({exc.strerror})",
                              source=str(path)) from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError("not UTF-8 text", source=str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML: {exc}", source=str(path)) from None
    return endpoint_from_dict(data, source=str(path), base_dir=file.resolve().parent)


def open_endpoint(config: EndpointConfig, **options: Any) -> Endpoint:
    """Open the endpoint a config describes (a context manager; close it after use).

    Parameters
    ----------
    config : EndpointConfig
    **options
        ``explain`` (record why each hit is there: Elasticsearch and
        OpenSearch ``explain``, Solr ``debugQuery``, the embedded engine's
        BM25 terms), ``keep_raw`` (keep raw response bodies), and for remote
        kinds ``timeout``, ``concurrency``, ``rps``, ``max_retries``
        overriding the file, ``allowed_env`` (the only environment variables
        it may read) and ``outbound`` (a :class:`~rankscope.outbound.hosts.HostPolicy`:
        the only hosts it may reach), and the test hooks ``sleep``, ``rng``,
        ``transport``.

    Raises
    ------
    DependencyError
        A remote kind without httpx (the ``search`` extra), or the tantivy
        engine without tantivy.
    ConfigError
        ``explain`` asked of a kind that cannot explain (the ``http`` kind).
    """
    kind = find_kind(config.kind, config.source)
    client = None
    if kind.remote:
        from rankscope.search.client import SearchClient

        client = SearchClient.for_config(config, **options)
    endpoint = kind.open(config, client, options)
    if options.get("explain"):
        if not kind.explains:
            raise ConfigError(f"the {kind.name} kind cannot say why a result is there (no "
                              "explain API): explanations come from elasticsearch, opensearch, "
                              "solr and embedded endpoints", source=config.source)
        endpoint.explain = True  # type: ignore[attr-defined]
    return endpoint


def explains(config: EndpointConfig | str) -> bool:
    """Whether the endpoint's kind (or the kind so named) can say why each result is there
    (nothing is opened)."""
    if isinstance(config, str):
        return find_kind(config).explains
    return find_kind(config.kind, config.source).explains
