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

Pages beyond the first are asked for with ``start``/``rows`` (``offset``/
``limit`` for the JSON API). An answer whose ``responseHeader`` says
``partialResults: true`` (``timeAllowed`` ran out, a shard was tolerated
missing) is partial.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from rankscope.search.client import HttpRequest, SearchClient
from rankscope.search.remote import RemoteEndpoint
from rankscope.search.templates import render_text, render_value
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

    can_explain = True
    _DEBUG = (("debugQuery", "true"), ("debug.explain.structured", "true"))

    def explained(self, request: HttpRequest) -> HttpRequest:
        """The request with ``debugQuery`` and structured explanations (``/select``
        parameters, or the JSON Request API's ``params`` block)."""
        if self.api == "select" or not isinstance(request.body, dict):
            names = {name for name, _ in self._DEBUG}
            params = [(k, v) for k, v in request.params if k not in names]
            return HttpRequest(request.method, request.url, [*params, *self._DEBUG],
                               request.body)
        given = request.body.get("params")
        block = dict(given) if isinstance(given, dict) else {}
        block.update(self._DEBUG)
        return HttpRequest(request.method, request.url, request.params,
                           {**request.body, "params": block})

    def hit_explanation(self, raw_hit: Any, doc_id: str, data: Any) -> Any:
        """``debug.explain`` of the hit's unique key (structured; a text one kept as text)."""
        debug = data.get("debug") if isinstance(data, dict) else None
        explain = debug.get("explain") if isinstance(debug, dict) else None
        found = explain.get(doc_id) if isinstance(explain, dict) else None
        if isinstance(found, str):
            return {"value": None, "description": found.strip(), "details": []}
        return found if isinstance(found, dict) else None

    def templates(self) -> list[Any]:
        if self.api == "json":
            return [self.template, self.params]
        return [self.params]

    def page_request(self, values: Mapping[str, Any], depth: int, offset: int,
                     size: int) -> HttpRequest | str:
        first = self.build_request(values, depth)
        if self.api == "select":
            pairs = [(k, v) for k, v in first.params if k not in ("start", "rows")]
            start = dict(first.params).get("start", "0")
            if not start.isdigit():
                return f"its start parameter is not a number ({start!r})"
            pairs += [("start", str(int(start) + offset)), ("rows", str(size))]
            return HttpRequest("GET", first.url, params=pairs)
        body = first.body
        if not isinstance(body, dict):
            return "the template is not a JSON object"
        start = body.get("offset", 0)
        if isinstance(start, bool) or not isinstance(start, int):
            return f"the template's offset is not a number ({start!r})"
        return HttpRequest("POST", first.url, params=first.params,
                           body={**body, "offset": start + offset, "limit": size})

    def page_size(self, request: HttpRequest) -> int | None:
        if self.api == "select":
            rows = dict(request.params).get("rows", "")
            return int(rows) if rows.isdigit() else None
        limit = request.body.get("limit") if isinstance(request.body, dict) else None
        return limit if isinstance(limit, int) and not isinstance(limit, bool) else None

    def partial(self, data: Any) -> str | None:
        header = data.get("responseHeader") if isinstance(data, dict) else None
        if isinstance(header, dict) and header.get("partialResults") is True:
            details = header.get("partialResultsDetails")
            return "partial results" + (f" ({details})" if isinstance(details, str) else "")
        return None

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
