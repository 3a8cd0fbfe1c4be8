"""Any JSON search API: a request template and a declarative response mapping.

``method`` (GET, or POST when there is a body ``template``), ``url`` (a
placeholder in it is percent-encoded), ``params`` (the query string,
rendered one parameter at a time), ``template`` (a JSON body) and
``headers``. The response is mapped by paths (:mod:`rankscope.search.paths`):
``hits`` is where the list of results is (``results`` or ``results[*]``,
``data.items``), and ``id_field``, ``score_field``, ``title_field``,
``snippet_field``, ``url_field``, ``image_field`` and ``display_fields``
are paths inside one result; ``total_field`` a path in the whole response,
and ``partial_field`` one whose true value marks the answer as partial.
No user code runs.

Paging: a template (``url``, ``params`` or body) that uses ``{{offset}}``
(results already received, from 0) or ``{{page}}`` (the page's number,
from 1) is sent again for the next page while fewer than the depth came
back and ``total_field`` says more matched; without either placeholder the
endpoint cannot page, and says so.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from rankscope.errors import ConfigError
from rankscope.search.client import HttpRequest, SearchClient
from rankscope.search.paths import Path, parse_path
from rankscope.search.remote import RemoteEndpoint
from rankscope.search.templates import PLACEHOLDER, render_text, render_value
from rankscope.search.types import EndpointConfig

__all__ = ["HttpJsonEndpoint"]


class HttpJsonEndpoint(RemoteEndpoint):
    """A JSON search API described entirely by its endpoint file."""

    default_paths: Mapping[str, str | None] = {
        "id_field": "id", "score_field": None, "title_field": "title",
        "snippet_field": None, "url_field": "url", "image_field": "image",
    }

    def __init__(self, config: EndpointConfig, client: SearchClient, *, keep_raw: bool = False):
        super().__init__(config, client, keep_raw=keep_raw)
        settings = config.settings
        self.url = str(settings["url"])
        method = str(settings.get("method", "POST" if self.template is not None else "GET"))
        if method.upper() not in ("GET", "POST", "PUT"):
            raise ConfigError("method must be GET or POST", source=config.source, value=method)
        self.method = method.upper()
        self.params: dict[str, Any] = dict(settings.get("params") or {})
        self.hits_path = parse_path(str(settings["hits"]), key="hits")
        version_url = settings.get("version_url")
        self.version_url = str(version_url) if version_url else None
        version_path = settings.get("version_path")
        self.version_path = parse_path(version_path, key="version_path") if version_path else None

    def templates(self) -> list[Any]:
        return [self.template, self.params, self.url]

    def build_request(self, values: Mapping[str, Any], depth: int) -> HttpRequest:
        url = PLACEHOLDER.sub(
            lambda m: quote(render_text(m.group(0), values), safe=""), self.url)
        pairs: list[tuple[str, str]] = []
        for name, value in self.params.items():
            for one in value if isinstance(value, list) else [value]:
                text = one if isinstance(one, str) else json.dumps(one)
                pairs.append((name, render_text(text, values)))
        body = render_value(self.template, values) if self.template is not None else None
        return HttpRequest(self.method, url, params=pairs, body=body)

    def hit_list(self, data: Any) -> list[Any] | None:
        steps = self.hits_path.steps
        if steps and steps[-1] is None:  # "results[*]": every element of the list(s) reached
            parents = Path(self.hits_path.text, steps[:-1]).resolve(data)
            if not parents or not all(isinstance(p, list) for p in parents):
                return None
            return [item for parent in parents for item in parent]
        found = self.hits_path.resolve(data)
        if len(found) == 1 and isinstance(found[0], list):
            return list(found[0])  # "results" names the list itself
        return None

    def hits_description(self) -> str:
        return self.hits_path.text

    async def version(self) -> str | None:
        if self.version_url is None or self.version_path is None:
            return None
        data = await self.client.get_json(self.version_url)
        value = self.version_path.first(data)
        return None if value is None else str(value)
