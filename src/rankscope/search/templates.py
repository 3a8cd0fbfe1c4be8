"""Request templates: ``{{query}}`` and ``{{name}}`` placeholders, rendered safely.

A JSON template is parsed once, then rendered by walking the parsed value:
every string in it (keys included) has its placeholders replaced, so a query
holding quotes, backslashes, newlines or ``{{`` is only ever the content of
one JSON string and can never change the request's structure. A string that
is exactly one placeholder takes the parameter's value with its type (the
built-in ``{{depth}}`` becomes the number 10, a TOML list stays a list);
inside a longer string the value is substituted as text. Replacement is one
pass over the template, so text coming from a value is never scanned again.

Placeholders are ``{{name}}`` or ``{{name|default}}`` (the default is used
when no value is given); names are letters, digits, ``_``, ``.`` and ``-``.
A placeholder written outside a JSON string (``"size": {{depth}}``) is read
as if quoted. Built-in names: ``query`` (the query text), ``depth`` (hits
asked for), ``offset`` (results received before this page: 0, then what the
earlier pages returned) and ``page`` (the page's number, from 1), and
``keyword1``, ``keyword2``, ... (the query's words split on spaces and
commas, empty past the last, as Quepid does).

Plain-text templates (the embedded engine's query, Solr parameters, URL
query strings) are rendered the same way on their one string.

:func:`import_template` converts other tools' placeholder syntaxes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from rankscope.errors import ConfigError

__all__ = [
    "BUILTIN_NAMES",
    "PAGING_NAMES",
    "SYNTAXES",
    "import_template",
    "parse_json_template",
    "placeholder_names",
    "render_text",
    "render_value",
    "template_params",
]

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][\w.\-]*)\s*(?:\|([^{}]*))?\}\}")
BUILTIN_NAMES = frozenset({"query", "depth", "offset", "page"})
PAGING_NAMES = frozenset({"offset", "page"})
"""Placeholders with which a template asks for the next page itself."""
_KEYWORD = re.compile(r"keyword(\d+)")
SYNTAXES = ("mustache", "quepid", "opensearch", "rre", "auto")


class MissingParameter(KeyError):
    """A placeholder with neither a value nor a default (caught by callers)."""


def template_params(text: str, depth: int, params: Mapping[str, Any]) -> dict[str, Any]:
    """The values a template sees for one query: built-ins, then ``params`` over them.

    The values of the first page (``offset`` 0, ``page`` 1).

    Examples
    --------
    >>> sorted(template_params("red shoes", 10, {"brand": "acme"}).items())
    [('brand', 'acme'), ('depth', 10), ('keyword1', 'red'), ('keyword2', 'shoes'), \
('offset', 0), ('page', 1), ('query', 'red shoes')]
    """
    values: dict[str, Any] = {"query": text, "depth": depth, "offset": 0, "page": 1}
    for i, word in enumerate(w for w in re.split(r"[ ,]+", text) if w):
        values[f"keyword{i + 1}"] = word
    values.update(params)
    return values


def _lookup(name: str, default: str | None, values: Mapping[str, Any]) -> Any:
    if name in values:
        return values[name]
    if default is not None:
        return default
    if _KEYWORD.fullmatch(name):
        return ""  # fewer words than the template names: empty, as Quepid does
    raise MissingParameter(name)


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False)


def render_text(text: str, values: Mapping[str, Any]) -> str:
    """Replace every placeholder in ``text`` by its value as text (one pass).

    Raises
    ------
    MissingParameter
        A placeholder has no value and no default.

    Examples
    --------
    >>> render_text('title:"{{query}}"', {"query": 'a "b" {{query}}'})
    'title:"a "b" {{query}}"'
    """

    def one(match: re.Match[str]) -> str:
        return _as_text(_lookup(match.group(1), match.group(2), values))

    return PLACEHOLDER.sub(one, text)


def _render_string(text: str, values: Mapping[str, Any]) -> Any:
    whole = PLACEHOLDER.fullmatch(text) if "{{" in text else None
    if whole is not None:
        return _lookup(whole.group(1), whole.group(2), values)
    return render_text(text, values)


def render_value(template: Any, values: Mapping[str, Any]) -> Any:
    """Render a parsed JSON template: a new value, the template is not changed.

    Examples
    --------
    >>> tree = {"query": {"match": {"title": "{{query}}"}}, "size": "{{depth}}"}
    >>> render_value(tree, {"query": 'say "hi"\\n', "depth": 5})
    {'query': {'match': {'title': 'say "hi"\\n'}}, 'size': 5}
    """
    if isinstance(template, str):
        return _render_string(template, values)
    if isinstance(template, list):
        return [render_value(v, values) for v in template]
    if isinstance(template, dict):
        return {render_text(str(k), values): render_value(v, values)
                for k, v in template.items()}
    return template


def placeholder_names(template: Any, *, with_defaults: bool = False) -> set[str]:
    """Names of the placeholders anywhere in ``template`` (those with a default only if asked)."""
    found: set[str] = set()
    if isinstance(template, str):
        found.update(m.group(1) for m in PLACEHOLDER.finditer(template)
                     if with_defaults or m.group(2) is None)
    elif isinstance(template, list):
        for v in template:
            found |= placeholder_names(v, with_defaults=with_defaults)
    elif isinstance(template, dict):
        for k, v in template.items():
            found |= (placeholder_names(str(k), with_defaults=with_defaults)
                      | placeholder_names(v, with_defaults=with_defaults))
    return found


def _quote_bare_placeholders(text: str) -> str:
    """Put JSON quotes around placeholders written outside strings."""
    out: list[str] = []
    i, n = 0, len(text)
    in_string = False
    while i < n:
        ch = text[i]
        if in_string:
            out.append(ch)
            if ch == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if ch == '"':
                in_string = False
            i += 1
            continue
        if ch == '"':
            in_string = True
            out.append(ch)
            i += 1
            continue
        if text.startswith("{{", i):
            match = PLACEHOLDER.match(text, i)
            if match is not None:
                out.append(json.dumps(match.group(0)))
                i = match.end()
                continue
        out.append(ch)
        i += 1
    return "".join(out)


def parse_json_template(text: str, *, source: str | None = None, key: str = "template") -> Any:
    """Parse a JSON request template (bare placeholders allowed outside strings).

    Raises
    ------
    ConfigError
        The template is not JSON; names the file, the key and where.
    """
    try:
        return json.loads(_quote_bare_placeholders(text))
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{key} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})",
            source=source,
        ) from None


_QUEPID_MAGIC = re.compile(r"#\$([A-Za-z_][\w.]*)(?:\|([^#]*))?##")
_QUEPID_CURATOR = re.compile(r"##([A-Za-z_]\w*)##")
_RRE = re.compile(r"\$([A-Za-z_]\w*)")
_SEARCH_TEXT = re.compile(r"%([A-Za-z_]\w*)%")


def _mustache(name: str, default: str | None) -> str:
    return "{{" + name + ("" if default is None else "|" + default) + "}}"


def _from_quepid(text: str) -> str:
    def magic(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name.startswith("qOption."):
            name = name[len("qOption."):]
        elif name.startswith("keyword."):  # 0-based legacy form: keyword.0 is keyword1
            index = name[len("keyword."):]
            if index.isdigit():
                name = f"keyword{int(index) + 1}"
        return _mustache(name, default)

    text = _QUEPID_MAGIC.sub(magic, text)
    return _QUEPID_CURATOR.sub(lambda m: _mustache(m.group(1), None), text)


def _from_opensearch(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        return _mustache("query" if name == "SearchText" else name, None)

    return _SEARCH_TEXT.sub(one, text)


def _from_rre(text: str) -> str:
    return _RRE.sub(lambda m: _mustache(m.group(1), None), text)


def _detect(text: str) -> str:
    if _QUEPID_MAGIC.search(text) or _QUEPID_CURATOR.search(text):
        return "quepid"
    if "%SearchText%" in text:
        return "opensearch"
    if re.search(r"\$query\b", text):
        return "rre"
    return "mustache"


def import_template(text: str, syntax: str = "auto") -> str:
    """Convert another tool's placeholders to rankscope's ``{{name}}`` syntax.

    Parameters
    ----------
    text : str
        The template as the other tool stores it.
    syntax : {"auto", "quepid", "opensearch", "rre", "mustache"}
        ``quepid``: ``#$query##``, ``#$keyword1##``, ``#$keyword.0##``
        (0-based), ``#$keyword2|default##``, ``#$qOption.name##`` and curator
        variables ``##name##``; ``opensearch``: the Search Relevance
        Workbench's ``%SearchText%`` (and ``%name%``); ``rre``: Rated Ranking
        Evaluator's ``$query`` (and ``$name``); ``mustache``: unchanged;
        ``auto``: the first of these found in the text.

    Returns
    -------
    str
        The template with ``{{query}}``-style placeholders.

    Examples
    --------
    >>> import_template('{"q": "#$query##", "boost": ##titleBoost##}')
    '{"q": "{{query}}", "boost": {{titleBoost}}}'
    >>> import_template('{"query": "%SearchText%"}', "opensearch")
    '{"query": "{{query}}"}'
    """
    if syntax not in SYNTAXES:
        raise ConfigError(f"template_syntax must be one of {', '.join(SYNTAXES)}, not {syntax!r}")
    if syntax == "auto":
        syntax = _detect(text)
    if syntax == "quepid":
        return _from_quepid(text)
    if syntax == "opensearch":
        return _from_opensearch(text)
    if syntax == "rre":
        return _from_rre(text)
    return text
