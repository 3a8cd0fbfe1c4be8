"""Credentials of an endpoint: never in the file, read from named environment variables.

An endpoint file is stored with every snapshot, shown on the web app's pages
and quoted in error lines, so a secret written in it leaks. These are
refused, each with the key that holds it and what to write instead:

- a user name or password in ``url`` or ``version_url``
  (``http://user:pass@host``): use ``auth = { type = "basic", ... }``;
- a query parameter whose name says it carries a key (``api_key``,
  ``token``, ``key``, ``access_token``, ``apiKey``, ...), in ``params`` or in
  the query string of ``url``: use ``params_env = { api_key = "VARIABLE" }``;
- such a name among ``headers``, ``variables`` (template parameters, sent in
  the request and stored with it) or a stored template's ``params``, and a
  value that starts with an authorization scheme (``Bearer ...``,
  ``Basic ...``, ``ApiKey ...``) anywhere among them;
- anything but a variable name in ``auth`` (``password_env``,
  ``token_env``, ...).

The variables are read when the endpoint is opened
(:func:`resolve_auth`, :func:`resolve_params`); ``allowed_env`` (the web
app's ``rankscope serve --allow-env``) limits which names may be read.
"""

from __future__ import annotations

import base64
import os
import re
import urllib.parse
from collections.abc import Callable, Collection, Mapping
from typing import Any

from rankscope.errors import ConfigError

__all__ = [
    "AUTH_TYPES",
    "check_no_credentials",
    "check_url_credentials",
    "environment_names",
    "looks_like_credential",
    "resolve_auth",
    "resolve_params",
]

AUTH_TYPES = ("basic", "bearer", "api_key", "header")
_ALWAYS = frozenset({"password", "passwd", "pwd", "secret", "token", "apikey", "authorization",
                     "credential", "credentials", "cookie", "signature", "passphrase"})
_KEY_PARTNERS = frozenset({"api", "access", "auth", "secret", "private", "subscription",
                           "client", "app", "license", "session", "master"})
_SCHEME_VALUE = re.compile(r"^\s*(bearer|basic|apikey|token|digest)\s+\S", re.IGNORECASE)
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)  # apiKey -> api Key
    return [w for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w and w != "x"]


def looks_like_credential(name: str) -> bool:
    """Whether a header, parameter or variable name says it carries a credential.

    Examples
    --------
    >>> [looks_like_credential(n) for n in ("api_key", "token", "key", "access_token",
    ...                                     "apiKey", "X-Api-Key", "Authorization")]
    [True, True, True, True, True, True, True]
    >>> [looks_like_credential(n) for n in ("q", "sort_key", "tokenizer", "max_tokens", "fl")]
    [False, False, False, False, False]
    """
    words = _words(str(name))
    if not words:
        return False
    if _ALWAYS & set(words) or "".join(words) in _ALWAYS | {"accesstoken", "apikey"}:
        return True
    if words == ["key"] or words == ["auth"]:
        return True
    return "key" in words and bool(_KEY_PARTNERS & set(words))


def _fail(message: str, source: str | None) -> ConfigError:
    return ConfigError(message, source=source)


def check_url_credentials(key: str, url: Any, source: str | None = None, *,
                          advice: str | None = None) -> None:
    """Refuse a URL holding a user name, a password or a key-like query parameter.

    ``advice`` says where the credential belongs instead (default: an endpoint
    file's ``auth`` and ``params_env``).

    Raises
    ------
    ConfigError
        Names ``key`` and says where the credential belongs; never repeats it.
    """
    if not isinstance(url, str):
        return
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return  # not a URL: the kind's own check says so
    if parts.username is not None or parts.password is not None:
        raise _fail(f"{key} holds a user name or password (user:password@host): " + (
            advice or "put the user in auth = { type = \"basic\", username = \"...\", "
            "password_env = \"VARIABLE\" } and the password in that environment variable"),
            source)
    for name, _ in urllib.parse.parse_qsl(parts.query, keep_blank_values=True):
        if looks_like_credential(name):
            raise _fail(f"{key} carries the query parameter {name!r}, which looks like a "
                        "credential: " + (advice or f"give it as params_env = {{ {name} = "
                                          "\"VARIABLE\" } and the value in that environment "
                                          "variable"), source)


def _check_table(key: str, table: Any, source: str | None,
                 instead: Callable[[str], str]) -> None:
    if not isinstance(table, dict):
        return
    for name, value in table.items():
        if looks_like_credential(str(name)):
            raise _fail(f"{key}.{name} looks like a credential: {instead(str(name))}", source)
        values = value if isinstance(value, list) else [value]
        if any(isinstance(v, str) and _SCHEME_VALUE.match(v) for v in values):
            raise _fail(f"{key}.{name} holds an authorization value: {instead(str(name))}",
                        source)


def check_no_credentials(data: Mapping[str, Any], source: str | None) -> None:
    """Refuse a credential written in an endpoint file (see the module docstring).

    Raises
    ------
    ConfigError
        Names the key and says where the secret belongs instead.
    """
    auth = data.get("auth")
    if auth is not None:
        if not isinstance(auth, dict):
            raise _fail("auth must be a table, e.g. auth = { type = \"basic\", ... }", source)
        for key in auth:
            if key in ("type", "username", "header") or key.endswith("_env"):
                continue
            raise _fail(
                f"auth.{key}: credentials are referenced by environment variable name "
                f"({key}_env = \"VARIABLE\"), never stored in the file", source)
        kind = auth.get("type")
        if kind not in AUTH_TYPES:
            raise ConfigError(f"auth.type must be one of {', '.join(AUTH_TYPES)}",
                              source=source, value=None if kind is None else str(kind))
    headers = data.get("headers") or {}
    if not isinstance(headers, dict):
        raise _fail("headers must be a table of header = value", source)
    _check_table("headers", headers, source, lambda name: f"put it in headers_env = "
                 f"{{ \"{name}\" = \"VARIABLE\" }} and the value in that environment variable")
    for key in ("url", "version_url"):
        check_url_credentials(key, data.get(key), source)
    _check_table("params", data.get("params"), source, lambda name: f"give it as params_env "
                 f"= {{ {name} = \"VARIABLE\" }} and the value in that environment variable")
    _check_table("variables", data.get("variables"), source, lambda _: "variables are stored "
                 "with every snapshot; send a key with headers_env, params_env or auth, whose "
                 "values stay in environment variables")
    stored = data.get("search_template")
    if isinstance(stored, dict):
        _check_table("search_template.params", stored.get("params"), source,
                     lambda _: "a stored template's parameters are stored with every "
                     "snapshot; send a key with headers_env or auth")
    for key in ("headers_env", "params_env"):
        table = data.get(key)
        if table is not None and not isinstance(table, dict):
            raise _fail(f"{key} must be a table of name = \"VARIABLE\"", source)


def environment_names(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Every environment variable an endpoint names: ``{key in the file: variable name}``.

    Examples
    --------
    >>> environment_names({"headers_env": {"X-Key": "SHOP_KEY"},
    ...                    "auth": {"type": "bearer", "token_env": "ES_TOKEN"}})
    {'headers_env.X-Key': 'SHOP_KEY', 'auth.token_env': 'ES_TOKEN'}
    """
    names: dict[str, Any] = {}
    for table in ("headers_env", "params_env"):
        for key, var in (settings.get(table) or {}).items():
            names[f"{table}.{key}"] = var
    auth = settings.get("auth")
    if isinstance(auth, dict):
        for key, var in auth.items():
            if key.endswith("_env"):
                names[f"auth.{key}"] = var
    return names


def check_environment_names(settings: Mapping[str, Any], allowed_env: Collection[str] | None,
                            source: str | None) -> None:
    """Refuse a variable name that is malformed, or not in ``allowed_env`` (when given)."""
    for key, var in environment_names(settings).items():
        _check_name(var, key, source, allowed_env)


def _check_name(name: Any, key: str, source: str | None,
                allowed_env: Collection[str] | None) -> str:
    if not isinstance(name, str) or not _ENV_NAME.match(name):
        raise ConfigError(f"{key} must name an environment variable (letters, digits, _)",
                          source=source, value=None if name is None else str(name))
    if allowed_env is not None and name not in allowed_env:
        shown = ", ".join(sorted(allowed_env)) or "none"
        raise ConfigError(f"{key} names the environment variable {name}, which this server "
                          f"does not let endpoints read (allowed: {shown}; its operator allows "
                          "more with rankscope serve --allow-env)", source=source)
    return name


def _env(name: Any, key: str, source: str | None, allowed_env: Collection[str] | None) -> str:
    name = _check_name(name, key, source, allowed_env)
    value = os.environ.get(name)
    if value is None:
        raise ConfigError(f"environment variable {name} is not set ({key})", source=source)
    return value


def resolve_auth(config: Any, *, allowed_env: Collection[str] | None = None) -> dict[str, str]:
    """The headers that carry credentials, read from the environment now.

    Parameters
    ----------
    config : EndpointConfig
    allowed_env : collection of str, optional
        The only variables that may be read (the web app's allow-list);
        None: any (the command line).

    Raises
    ------
    ConfigError
        A variable named in the file is not set, or not allowed.
    """
    settings, source = config.settings, config.source
    headers: dict[str, str] = {}
    for header, var in (settings.get("headers_env") or {}).items():
        headers[str(header)] = _env(var, f"headers_env.{header}", source, allowed_env)
    auth = settings.get("auth")
    if not auth:
        return headers
    kind = auth["type"]
    if kind == "basic":
        user = auth.get("username")
        if user is None:
            user = _env(auth.get("username_env"), "auth.username_env", source, allowed_env)
        password = _env(auth.get("password_env"), "auth.password_env", source, allowed_env)
        token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        headers["Authorization"] = f"Basic {token}"
    elif kind == "bearer":
        headers["Authorization"] = "Bearer " + _env(auth.get("token_env"), "auth.token_env",
                                                    source, allowed_env)
    elif kind == "api_key":  # Elasticsearch / OpenSearch API keys
        headers["Authorization"] = "ApiKey " + _env(auth.get("key_env"), "auth.key_env",
                                                    source, allowed_env)
    else:
        header = auth.get("header")
        if not isinstance(header, str) or not header:
            raise _fail("auth.header must name the header that carries the key", source)
        headers[header] = _env(auth.get("value_env"), "auth.value_env", source, allowed_env)
    return headers


def resolve_params(config: Any, *,
                   allowed_env: Collection[str] | None = None) -> list[tuple[str, str]]:
    """The query parameters that carry credentials (``params_env``), read now.

    Raises
    ------
    ConfigError
        A variable named in the file is not set, or not allowed.
    """
    settings, source = config.settings, config.source
    return [(str(name), _env(var, f"params_env.{name}", source, allowed_env))
            for name, var in (settings.get("params_env") or {}).items()]
