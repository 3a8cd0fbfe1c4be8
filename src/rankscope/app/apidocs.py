"""The API's description as a page: its routes grouped by what they act on, docstrings'
markup rendered (``code``, *emphasis*, paragraphs), never shown raw.

The routes' descriptions are their docstrings (reStructuredText, as the rest of
the code): this module turns the little of it they use into safe HTML.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup, escape

__all__ = ["ApiGroup", "ApiRoute", "api_groups", "inline_markup"]

_ROLE = re.compile(r":[\w:]+:(?=`)")
_CODE = re.compile(r"``(.+?)``|`~?([^`]+)`")
_EMPHASIS = re.compile(r"(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])")


def inline_markup(text: str) -> Markup:
    """reStructuredText's (and Markdown's) inline markup of a docstring as safe HTML.

    Paragraphs are separated by blank lines; ````code```` and ```code``` become
    ``<code>``, a role's name (``:func:``) is dropped, ``*words*`` is emphasis;
    everything else is escaped.

    Examples
    --------
    >>> str(inline_markup("Take ``n`` tasks, *once*.\\n\\nA <b>second</b> one."))
    '<p>Take <code>n</code> tasks, <em>once</em>.</p><p>A &lt;b&gt;second&lt;/b&gt; one.</p>'
    >>> str(inline_markup("See :func:`~rankscope.services.grading.undo_last`."))
    '<p>See <code>rankscope.services.grading.undo_last</code>.</p>'
    """
    out = []
    for block in re.split(r"\n\s*\n", text.strip()):
        if not block.strip():
            continue
        html = str(escape(" ".join(line.strip() for line in block.splitlines())))
        html = _ROLE.sub("", html)
        html = _CODE.sub(lambda m: f"<code>{m.group(1) or m.group(2)}</code>", html)
        html = _EMPHASIS.sub(r"<em>\1</em>", html)
        out.append(f"<p>{html}</p>")
    return Markup("".join(out))


@dataclass
class ApiRoute:
    """One operation: method, path, summary, description (HTML) and query parameters."""

    method: str
    path: str
    summary: str
    doc: Markup
    params: list[str]
    anchor: str


@dataclass
class ApiGroup:
    """The routes acting on one kind of thing (``projects``, ``evaluations``, ...)."""

    name: str
    anchor: str
    routes: list[ApiRoute] = field(default_factory=list)


def api_groups(spec: dict[str, Any]) -> list[ApiGroup]:
    """The OpenAPI description's operations grouped by the first segment after ``/api/v1``.

    Examples
    --------
    >>> spec = {"paths": {"/api/v1/projects": {"get": {"summary": "List",
    ...          "description": "The ``projects``."}}, "/api/v1/me": {"get": {}}}}
    >>> [(g.name, [r.path for r in g.routes]) for g in api_groups(spec)]
    [('me', ['/api/v1/me']), ('projects', ['/api/v1/projects'])]
    """
    groups: dict[str, ApiGroup] = {}
    for path, operations in spec.get("paths", {}).items():
        parts = [p for p in path.split("/") if p and p not in ("api", "v1")]
        name = parts[0] if parts else "api"
        group = groups.setdefault(name, ApiGroup(name, "g-" + re.sub(r"\W+", "-", name)))
        for method, op in operations.items():
            anchor = re.sub(r"\W+", "-", f"{method}{path}").strip("-").lower()
            group.routes.append(ApiRoute(
                method.upper(), path, op.get("summary", ""),
                inline_markup(op.get("description", "")),
                [p["name"] for p in op.get("parameters", []) if p.get("in") == "query"],
                anchor))
    return [groups[name] for name in sorted(groups)]
