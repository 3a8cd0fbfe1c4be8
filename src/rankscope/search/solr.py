"""Solr (8, 9): ``/select`` with parameters, or the JSON Request API (``/query``).

``api = "select"`` (default): ``GET {url}/{collection}/{handler}`` (handler
``select``) with the ``params`` table rendered one parameter at a time (a
list gives the parameter several times), URL-encoded by httpx; defaults
``q = "{{query}}"``, and ``rows`` (the depth), ``fl = "*,score"`` and
``wt = "json"`` when not given. ``api = "json"``: ``POST
{url}/{collection}/query`` with the rendered ``template`` as body (default
``{"query": "{{query}}"}``) and ``limit`` (the depth) and ``fields`` when not
given. Both answer ``response.docs`` (and ``response.numFound``); Solr
returns multi-valued fields as lists, whose first value is shown.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from rankscope.search.client import HttpRequest, SearchClient
from rankscope.search.remote import RemoteEndpoint
from rankscope.search.templates import placeholder_names, render_text, render_value
from rankscope.search.types import EndpointConfig

__all__ = ["SolrEndpoint"]


class SolrEndpoint(RemoteEndpoint):
    """A Solr collection (or core)."""

    def __init__(self, config: EndpointConfig, client: SearchClient, *, keep_raw: bool = False):
        super().__init__(config, client, keep_raw=keep_raw)
        settings = config.settings
        self.base = str(settings["url"]).rstrip("/")
        self.collection = quote(str(settings["collection"]), safe="-_.")
        self.api = str(settings.get("api", "select"))
        self.handler = str(settings.get("handler", "select" if self.api == "select" else "query"))
        self.params: dict[str, Any] = dict(settings.get("params") or {"q": "{{query}}"})
        if self.api == "json" and self.template is None:
            self.template = {"query": "{{query}}"}

    def template_names(self) -> set[str]:
        if self.api == "json":
            return placeholder_names(self.template) | placeholder_names(self.params)
        return placeholder_names(self.params)

    def _param_pairs(self, values: Mapping[str, Any], depth: int) -> list[tuple[str, str]]:
        pairs: list[tuple[str, str]] = []
        for name, value in self.params.items():
            for one in value if isinstance(value, list) else [value]:
                text = one if isinstance(one, str) else json.dumps(one)
                pairs.append((name, render_text(text, values)))
        if self.api == "select":
            names = {n for n, _ in pairs}
            if "rows" not in names:
                pairs.append(("rows", str(depth)))
            if "fl" not in names:
                pairs.append(("fl", "*,score"))
            if "wt" not in names:
                pairs.append(("wt", "json"))
        return pairs

    def build_request(self, values: Mapping[str, Any], depth: int) -> HttpRequest:
        url = f"{self.base}/{self.collection}/{self.handler}"
        if self.api == "select":
            return HttpRequest("GET", url, params=self._param_pairs(values, depth))
        body = render_value(self.template, values)
        if isinstance(body, dict):
            body.setdefault("limit", depth)
            body.setdefault("fields", ["*", "score"])
        extra = self._param_pairs(values, depth) if self.settings_params() else []
        return HttpRequest("POST", url, params=extra, body=body)

    def settings_params(self) -> bool:
        """Whether the file gives URL parameters for the JSON Request API too."""
        return bool(self.config.settings.get("params"))

    def hit_list(self, data: Any) -> list[Any] | None:
        response = data.get("response") if isinstance(data, dict) else None
        docs = response.get("docs") if isinstance(response, dict) else None
        return docs if isinstance(docs, list) else None

    def hits_description(self) -> str:
        return "response.docs"

    def total(self, data: Any) -> int | None:
        response = data.get("response") if isinstance(data, dict) else None
        found = response.get("numFound") if isinstance(response, dict) else None
        return found if isinstance(found, int) and not isinstance(found, bool) else None

    async def version(self) -> str | None:
        data = await self.client.get_json(f"{self.base}/admin/info/system?wt=json")
        lucene = data.get("lucene") if isinstance(data, dict) else None
        spec = lucene.get("solr-spec-version") if isinstance(lucene, dict) else None
        return f"solr {spec}" if isinstance(spec, str) else None
