"""Variants of an endpoint: the same file with some keys changed (a sweep's grid, a try).

A change names what it sets by a **dotted key** of the endpoint file
(``weights.title``, ``tokenizer``, ``k1``, ``params.qf``,
``search_template.params.size``, a key holding a dot quoted:
``display_fields."a.b"``) or by a **template placeholder**: ``{{boost}}``,
``variables.boost``, or the bare name ``boost`` when the endpoint's templates
use ``{{boost}}`` (it then sets ``variables.boost``, which every query's
request renders). Values are TOML scalars where they parse as one (``4``,
``0.5``, ``true``, ``"porter unicode61"``), else the text as written, so
``--grid tokenizer=unicode61,porter unicode61`` gives two strings.

A variant is checked exactly like a file (:func:`rankscope.search.config.endpoint_from_dict`:
unknown keys with a "did you mean", credentials refused, files inside the
web app's :class:`~rankscope.search.files.FileScope`); the file it comes from
is never written. Setting ``template`` drops the file's ``template_file``
and ``template_syntax`` (the new text is a mustache template), and setting
``template_file`` drops ``template``. An embedded engine whose variant
changes how its index is built (``fields``, ``tokenizer``, ``id_field``,
``engine``, ``corpus``) gets an index file of its own beside the file's
(``<index>.<8 hex digits>``): variants never rebuild each other's index.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankscope.errors import ConfigError, OptionError
from rankscope.search.templates import BUILTIN_NAMES, placeholder_names

if TYPE_CHECKING:
    from rankscope.search.files import FileScope
    from rankscope.search.types import EndpointConfig

__all__ = [
    "Change",
    "apply_changes",
    "describe",
    "format_value",
    "parse_assignment",
    "parse_key",
    "parse_scalar",
    "parse_values",
    "resolve_key",
    "toml_text",
    "varied_config",
]

_BARE = re.compile(r"[A-Za-z0-9_-]+")
_INDEX_KEYS = ("fields", "tokenizer", "id_field", "engine", "corpus")
"""Keys of an embedded endpoint that shape its index (a variant changing one gets its own)."""


@dataclass(frozen=True)
class Change:
    """One key set to one value: ``path`` the keys from the top of the file."""

    path: tuple[str, ...]
    value: Any

    @property
    def key(self) -> str:
        """The dotted key as TOML writes it (``weights.title``, ``display_fields."a.b"``)."""
        return ".".join(_toml_key(part) for part in self.path)


def parse_scalar(text: str) -> Any:
    """A value as TOML reads it when it is one scalar, else the text itself (stripped).

    Numbers, booleans and quoted strings are read as TOML; dates, arrays,
    tables and anything else stay the text as written.

    Examples
    --------
    >>> parse_scalar("4"), parse_scalar("0.5"), parse_scalar("true"), parse_scalar('"1"')
    (4, 0.5, True, '1')
    >>> parse_scalar("porter unicode61"), parse_scalar("2024-01-01")
    ('porter unicode61', '2024-01-01')
    """
    stripped = text.strip()
    try:
        value = tomllib.loads(f"v = {stripped}")["v"]
    except (tomllib.TOMLDecodeError, ValueError):
        return stripped
    if isinstance(value, bool | int | float | str):
        return _finite(value, stripped)
    return stripped


def _finite(value: Any, text: str) -> Any:
    """``value``, unless a number TOML reads as nan or infinite (``nan``, ``inf``, ``1e309``):
    no setting means it, and a store keeps no such number in JSON.

    Raises
    ------
    OptionError
        A number that is not finite.
    """
    if isinstance(value, float) and not math.isfinite(value):
        raise OptionError(f"{text!r} is not a finite number (TOML reads it as {value})")
    return value


def parse_values(text: str) -> list[Any]:
    """The values of ``V1,V2,...`` (each :func:`parse_scalar`), or of a TOML array.

    A value holding a comma is given in a TOML array: ``["a,b", "c"]``.

    Examples
    --------
    >>> parse_values("1, 2,4")
    [1, 2, 4]
    >>> parse_values('["a,b", 3]')
    ['a,b', 3]
    """
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            values = tomllib.loads(f"v = {stripped}")["v"]
        except tomllib.TOMLDecodeError as exc:
            raise OptionError(f"not a TOML array: {exc}", ) from None
        if not all(isinstance(v, bool | int | float | str) for v in values):
            raise OptionError("the values of a TOML array must be numbers, booleans or "
                              f"strings, not {stripped!r}")
        return [_finite(v, stripped) for v in values]
    parts = [part.strip() for part in stripped.split(",")]
    if not stripped or any(not part for part in parts):
        raise OptionError(f"an empty value in {text!r} (give V1,V2,...; a value holding a "
                          "comma goes in a TOML array: [\"a,b\", \"c\"])")
    return [parse_scalar(part) for part in parts]


def parse_key(text: str) -> tuple[str, ...]:
    """The parts of a dotted key (TOML's: bare parts, or quoted ones holding dots).

    Examples
    --------
    >>> parse_key("weights.title"), parse_key('display_fields."a.b"'), parse_key("{{boost}}")
    (('weights', 'title'), ('display_fields', 'a.b'), ('{{boost}}',))
    """
    stripped = text.strip()
    if re.fullmatch(r"\{\{\s*[A-Za-z_][\w.\-]*\s*\}\}", stripped):
        return (stripped,)
    try:
        table = tomllib.loads(f"{stripped} = 0")
    except tomllib.TOMLDecodeError:
        raise OptionError(f"{text!r} is not a key: write a dotted key of the endpoint file "
                          "(weights.title) or a template placeholder ({{boost}})") from None
    parts: list[str] = []
    node: Any = table
    while isinstance(node, dict):
        (name, node), = node.items()
        parts.append(name)
    return tuple(parts)


def parse_assignment(text: str) -> tuple[tuple[str, ...], list[Any]]:
    """``KEY=V1,V2,...`` as (the key's parts, the values).

    Examples
    --------
    >>> parse_assignment("weights.title=1,4")
    (('weights', 'title'), [1, 4])
    """
    key, sep, values = text.partition("=")
    if not sep or not key.strip():
        raise OptionError(f"give KEY=V1,V2,... (e.g. weights.title=1,2,4), not {text!r}")
    path = parse_key(key)
    try:
        return path, parse_values(values)
    except OptionError as exc:  # said with its key
        raise OptionError(f"{key.strip()}: {exc}") from None


def _placeholders(config: EndpointConfig) -> set[str]:
    settings = config.settings
    found: set[str] = set()
    for key in ("template", "url", "params", "search_template", "headers"):
        if key in settings:
            found |= placeholder_names(settings[key], with_defaults=True)
    return {n for n in found if n not in BUILTIN_NAMES
            and not (n.startswith("keyword") and n[7:].isdigit())}


def resolve_key(config: EndpointConfig, path: Sequence[str]) -> tuple[str, ...]:
    """Where a change's key goes in the file: a placeholder becomes ``variables.NAME``.

    ``{{name}}`` and ``variables.name`` are template variables; a bare name
    the endpoint's templates use as a placeholder (and the file does not
    hold as a key) is one too; anything else is a key of the file, checked
    when the variant is read.

    Raises
    ------
    OptionError
        ``{{name}}`` naming a built-in placeholder (``query``, ``depth``...).
    """
    parts = tuple(path)
    if len(parts) == 1 and parts[0].startswith("{{"):
        name = parts[0].strip("{} ")
        if name in BUILTIN_NAMES:
            raise OptionError(f"{{{{{name}}}}} is set by rankscope for every request (the "
                              "query, the depth, the page), not by a change")
        return ("variables", name)
    variables = config.settings.get("variables") or {}
    if len(parts) == 1 and parts[0] not in config.settings and (
            parts[0] in _placeholders(config) or parts[0] in variables):
        return ("variables", parts[0])
    return parts


def apply_changes(data: Mapping[str, Any], changes: Sequence[Change]) -> dict[str, Any]:
    """A copy of an endpoint's keys (as read from its TOML) with the changes made.

    Raises
    ------
    ConfigError
        A change reaching into a key that holds a value, not a table.
    """
    out = copy.deepcopy(dict(data))
    for change in changes:
        node = out
        for depth, part in enumerate(change.path[:-1]):
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            elif not isinstance(child, dict):
                above = ".".join(change.path[:depth + 1])
                raise ConfigError(f"{change.key}: {above} is not a table (it holds "
                                  f"{json.dumps(child, ensure_ascii=False)[:60]})")
            node = child
        node[change.path[-1]] = change.value
    top = {change.path[0] for change in changes}
    if "template" in top:
        for key in ("template_file", "template_syntax"):
            if key not in top:
                out.pop(key, None)
    elif "template_file" in top:
        out.pop("template", None)
    return out


def _pin_index(data: dict[str, Any], original: Mapping[str, Any], name: str) -> None:
    """Keep an embedded variant on the file's index, or on one of its own when it builds
    another (other fields, tokenizer, id field, engine or corpus); an index a change
    names is left as given."""
    if data.get("kind") != "embedded" or data.get("index") != original.get("index"):
        return
    from rankscope.search.embedded_index import default_index_name

    index = str(original.get("index") or default_index_name(
        name, str(original.get("engine", "fts5"))))
    shaping = {k: data.get(k) for k in _INDEX_KEYS}
    if shaping == {k: original.get(k) for k in _INDEX_KEYS}:
        data["index"] = index
        return
    digest = hashlib.sha256(json.dumps(shaping, sort_keys=True, default=str).encode())
    data["index"] = f"{index}.{digest.hexdigest()[:8]}"


def varied_config(data: Mapping[str, Any], changes: Sequence[Change], *, name: str,
                  source: str | None, base_dir: str | Path | None,
                  files: FileScope | None = None) -> EndpointConfig:
    """The endpoint ``data`` (its TOML keys) with ``changes``, named ``name``, checked.

    Raises
    ------
    ConfigError, ForbiddenError
        As :func:`rankscope.search.config.endpoint_from_dict` for a file.
    """
    from rankscope.search.config import endpoint_from_dict

    changed = apply_changes(data, changes)
    _pin_index(changed, data, str(data.get("name") or name))
    changed["name"] = name
    return endpoint_from_dict(changed, source=source, base_dir=base_dir, files=files)


def format_value(value: Any) -> str:
    """A value as TOML writes it (strings quoted only when they would not read back).

    Examples
    --------
    >>> format_value(4), format_value(0.5), format_value("unicode61"), format_value("a b")
    ('4', '0.5', 'unicode61', '"a b"')
    """
    if isinstance(value, str) and parse_scalar(value) == value and value.strip() == value \
            and "," not in value and " " not in value and value:
        return value
    return _toml_value(value)


def describe(changes: Sequence[Change]) -> str:
    """The changes in one line: ``weights.title=4 tokenizer="porter unicode61"``.

    Examples
    --------
    >>> describe([Change(("weights", "title"), 4), Change(("k1",), 0.9)])
    'weights.title=4 k1=0.9'
    """
    return " ".join(f"{c.key}={format_value(c.value)}" for c in changes) or "(as written)"


# -- writing TOML ---------------------------------------------------------------------

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f",
            "\r": "\\r"}


def _toml_string(text: str) -> str:
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _toml_key(key: str) -> str:
    return key if _BARE.fullmatch(key) else _toml_string(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        inner = ", ".join(f"{_toml_key(str(k))} = {_toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    raise ConfigError(f"cannot write {type(value).__name__} to TOML: {value!r}")


def toml_text(data: Mapping[str, Any], header: str = "") -> str:
    """An endpoint's keys as a TOML file (tables inline), which :mod:`tomllib` reads back.

    Examples
    --------
    >>> print(toml_text({"kind": "embedded", "weights": {"title": 4.0}}), end="")
    kind = "embedded"
    weights = { title = 4.0 }
    """
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    lines += [f"{_toml_key(str(k))} = {_toml_value(v)}" for k, v in data.items()]
    return "\n".join(lines) + "\n"
