"""Endpoint files: read a TOML description, check it, and open the endpoint it names.

Every kind shares a small shape (``kind``, ``name``, ``url``, ``template`` or
``template_file``, ``id_field``); each kind adds its own keys (see
docs/snapshots.md). Unknown keys are refused with a "did you mean", so a typo
never silently changes what is measured. Credentials are referenced by the
name of an environment variable (``password_env = "ES_PASSWORD"``) and read
only when the endpoint is opened; a credential written in the file itself is
refused (:mod:`rankscope.search.credentials`). An endpoint a web user wrote
names files only inside the operator's directory
(:mod:`rankscope.search.files`).
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
from rankscope.search.paths import parse_path
from rankscope.search.templates import import_template, parse_json_template
from rankscope.search.types import Endpoint, EndpointConfig

__all__ = [
    "KINDS",
    "OPERATIONAL_KEYS",
    "endpoint_from_dict",
    "explains",
    "load_endpoint",
    "open_endpoint",
    "resolve_auth",
    "resolve_params",
]

KINDS = ("elasticsearch", "opensearch", "solr", "http", "embedded")

_COMMON = {
    "kind", "name", "description", "template", "template_file", "template_syntax",
    "id_field", "score_field", "title_field", "snippet_field", "url_field", "image_field",
    "display_fields", "variables",
}
_REMOTE = {
    "url", "headers", "headers_env", "params_env", "auth", "timeout", "concurrency", "rps",
    "max_retries", "backoff", "max_backoff", "max_retry_after", "verify_tls", "total_field",
}
_KEYS: dict[str, set[str]] = {
    "elasticsearch": _COMMON | _REMOTE | {"index", "search_template"},
    "opensearch": _COMMON | _REMOTE | {"index", "search_template"},
    "solr": _COMMON | _REMOTE | {"collection", "core", "handler", "api", "params"},
    "http": _COMMON | _REMOTE | {"method", "params", "hits", "version_url", "version_path",
                                 "partial_field"},
    "embedded": _COMMON | {"corpus", "index", "fields", "weights", "tokenizer", "engine",
                           "snippet_length", "k1", "b"},
}
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


def _check_keys(data: Mapping[str, Any], kind: str, source: str | None) -> None:
    allowed = _KEYS[kind]
    for key in data:
        if key not in allowed:
            raise _fail(f"unknown key {key!r} for kind {kind!r}{_suggest(key, allowed)}", source)


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


def _json_template_kind(data: Mapping[str, Any]) -> bool:
    kind = data["kind"]
    if kind in ("elasticsearch", "opensearch"):
        return True
    if kind == "solr":
        return bool(data.get("api", "select") == "json")
    return bool(kind == "http")


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
    kind = settings.get("kind")
    if kind not in KINDS:
        raise _fail(f"kind must be one of {', '.join(KINDS)}", source, kind)
    _check_keys(settings, kind, source)
    check_no_credentials(settings, source)
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    name = settings.get("name")
    if name is None:
        name = Path(source).stem if source else kind
    if not isinstance(name, str) or not name.strip():
        raise _fail("name must be a non-empty string", source, name)
    settings["name"] = name
    template = _template_text(settings, base, source, files)
    settings.pop("template_file", None)
    settings.pop("template_syntax", None)
    if template is not None:
        settings["template"] = template
        if _json_template_kind(settings):
            parse_json_template(template, source=source)
    if kind != "embedded":
        url = settings.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise _fail("url must be an http:// or https:// address", source, url)
    if kind in ("elasticsearch", "opensearch") and not isinstance(settings.get("index"), str):
        raise _fail(f"{kind} needs index = \"NAME\"", source)
    if kind == "solr":
        if "core" in settings and "collection" not in settings:
            settings["collection"] = settings.pop("core")
        if not isinstance(settings.get("collection"), str):
            raise _fail("solr needs collection = \"NAME\" (or core)", source)
        if settings.get("api", "select") not in ("select", "json"):
            raise _fail("solr api must be 'select' (/select parameters) or 'json' (the JSON "
                        "Request API)", source, settings.get("api"))
    if kind == "http" and "hits" not in settings:
        raise _fail("http needs hits = \"PATH\" (where the list of results is, e.g. "
                    "'results[*]')", source)
    if kind == "embedded" and not isinstance(settings.get("corpus"), str):
        raise _fail("embedded needs corpus = \"FILE.jsonl\"", source)
    if kind == "embedded" and files is not None:
        _check_embedded_files(settings, name, base, source, files)
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
        kind=kind,
        name=name,
        settings=settings,
        config_hash=_config_hash(settings),
        source=source,
        base_dir=str(base),
        files=files,
    )


def _check_embedded_files(settings: Mapping[str, Any], name: str, base: Path,
                          source: str | None, files: FileScope) -> None:
    """The corpus (a file in the scope, or an allowed ``irds:NAME`` collection) and the index
    of an embedded endpoint, in the scope; the index writable."""
    from rankscope.search.embedded import check_index_target, default_index_name

    corpus = files.corpus(settings["corpus"], base=base, source=source)
    if corpus is not None and not corpus.is_file():
        # refused when the endpoint is saved, not when a run first opens it
        raise _fail("corpus: no such file in the server's files directory", source,
                    settings["corpus"])
    engine = settings.get("engine", "fts5")
    index = settings.get("index") or default_index_name(name, engine)
    target = files.resolve(index, key="index", base=base, source=source)
    check_index_target(target, engine=str(engine), source=source, value=str(index))


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
        it may read) and ``outbound`` (a :class:`~rankscope.outbound.HostPolicy`:
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
    endpoint = _open(config, **options)
    if options.get("explain"):
        if not getattr(endpoint, "can_explain", False):
            kind = config.kind
            raise ConfigError(f"the {kind} kind cannot say why a result is there (no explain "
                              "API): explanations come from elasticsearch, opensearch, solr "
                              "and embedded endpoints", source=config.source)
        endpoint.explain = True  # type: ignore[attr-defined]
    return endpoint


def explains(config: EndpointConfig) -> bool:
    """Whether the endpoint's kind can say why each result is there (nothing is opened)."""
    return bool(getattr(_kind_class(config), "can_explain", False))


def _kind_class(config: EndpointConfig) -> Any:
    """The class of the endpoint ``config`` describes."""
    if config.kind == "embedded":
        engine = config.settings.get("engine", "fts5")
        if engine == "tantivy":
            from rankscope.search.tantivy_engine import TantivyEndpoint

            return TantivyEndpoint
        if engine != "fts5":
            raise _fail("engine must be 'fts5' (SQLite, built in) or 'tantivy'", config.source,
                        engine)
        from rankscope.search.embedded import EmbeddedEndpoint

        return EmbeddedEndpoint
    if config.kind in ("elasticsearch", "opensearch"):
        from rankscope.search.elasticsearch import ElasticsearchEndpoint

        return ElasticsearchEndpoint
    if config.kind == "solr":
        from rankscope.search.solr import SolrEndpoint

        return SolrEndpoint
    from rankscope.search.http_json import HttpJsonEndpoint

    return HttpJsonEndpoint


def _open(config: EndpointConfig, **options: Any) -> Endpoint:
    """:func:`open_endpoint` without the explanation option."""
    kind = _kind_class(config)
    keep_raw = bool(options.get("keep_raw", False))
    if config.kind == "embedded":
        return kind(config, keep_raw=keep_raw)  # type: ignore[no-any-return]
    from rankscope.search.client import SearchClient

    client = SearchClient.for_config(config, **options)
    return kind(config, client, keep_raw=keep_raw)  # type: ignore[no-any-return]
