"""Elasticsearch (6, 7, 8) and OpenSearch (1, 2): ``_search`` and search templates.

The request is ``POST {url}/{index}/_search`` with the rendered ``template``
as its body (default: a ``multi_match`` of the query over every field), and
``size`` set to the depth when the template does not set it. With
``search_template = { id = "NAME" }`` (a stored template) or ``{ source =
... }`` (inline mustache, left for the engine to render) the request is
``POST {url}/{index}/_search/template`` with ``params`` rendered from
``search_template.params``.

The hit list is ``hits.hits``; a field path is looked up in the hit
(``_id``, ``_score``, ``highlight.text[0]``) and then in its ``_source``, so
``title_field = "title"`` finds ``_source.title``. ``hits.total`` is a number
before Elasticsearch 7 (and with ``rest_total_hits_as_int``) and an object
``{value, relation}`` since: both are read.

Pages beyond the first are asked for with ``from``/``size`` (added to the
rendered template, ``from`` counted from the template's own); a stored
search template pages only when its ``params`` use ``{{offset}}`` or
``{{page}}``, and a template using ``search_after`` does not page. An answer
with ``timed_out: true`` or failed shards (``_shards.failed > 0``) is
partial.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from rankscope.errors import ConfigError
from rankscope.search.client import HttpRequest, SearchClient
from rankscope.search.paths import Path
from rankscope.search.remote import RemoteEndpoint
from rankscope.search.templates import render_value
from rankscope.search.types import EndpointConfig

__all__ = ["DEFAULT_TEMPLATE", "ElasticsearchEndpoint"]

DEFAULT_TEMPLATE: dict[str, Any] = {"query": {"multi_match": {"query": "{{query}}"}}}


class ElasticsearchEndpoint(RemoteEndpoint):
    """An Elasticsearch or OpenSearch index."""

    default_paths: Mapping[str, str | None] = {
        "id_field": "_id", "score_field": "_score", "title_field": "title",
        "snippet_field": None, "url_field": "url", "image_field": "image",
    }

    def __init__(self, config: EndpointConfig, client: SearchClient, *, keep_raw: bool = False):
        super().__init__(config, client, keep_raw=keep_raw)
        settings = config.settings
        self.base = str(settings["url"]).rstrip("/")
        self.index = quote(str(settings["index"]), safe=",*-_.+")
        stored = settings.get("search_template")
        if stored is not None:
            if not isinstance(stored, dict) or ("id" in stored) == ("source" in stored):
                raise ConfigError("search_template needs exactly one of id = \"NAME\" or "
                                  "source = ...", source=config.source)
            if self.template is not None:
                raise ConfigError("give template or search_template, not both",
                                  source=config.source)
        self.stored: dict[str, Any] | None = dict(stored) if stored is not None else None
        if self.template is None and self.stored is None:
            self.template = DEFAULT_TEMPLATE

    can_explain = True

    def explained(self, request: HttpRequest) -> HttpRequest:
        """The request with ``"explain": true`` (``_search`` and ``_search/template`` alike)."""
        if not isinstance(request.body, dict):
            return request
        return HttpRequest(request.method, request.url, request.params,
                           {**request.body, "explain": True})

    def hit_explanation(self, raw_hit: Any, doc_id: str, data: Any) -> Any:
        """The hit's ``_explanation`` (a tree of value, description, details)."""
        return raw_hit.get("_explanation") if isinstance(raw_hit, dict) else None

    def templates(self) -> list[Any]:
        if self.stored is not None:
            return [self.stored.get("params", {})]
        return [self.template]

    def page_request(self, values: Mapping[str, Any], depth: int, offset: int,
                     size: int) -> HttpRequest | str:
        if self.stored is not None:
            return ("a stored search template pages only when its params use {{offset}} "
                    "(for from) or {{page}}")
        rendered = render_value(self.template, values)
        if not isinstance(rendered, dict):
            return "the template is not a JSON object"
        if "search_after" in rendered:
            return "the template uses search_after (give it no size below the depth)"
        start = rendered.get("from", 0)
        if isinstance(start, bool) or not isinstance(start, int):
            return f"the template's from is not a number ({start!r})"
        rendered["from"] = start + offset
        rendered["size"] = size
        return HttpRequest("POST", f"{self.base}/{self.index}/_search", body=rendered)

    def page_size(self, request: HttpRequest) -> int | None:
        size = request.body.get("size") if isinstance(request.body, dict) else None
        return size if isinstance(size, int) and not isinstance(size, bool) else None

    def partial(self, data: Any) -> str | None:
        if not isinstance(data, dict):
            return None
        reasons = []
        if data.get("timed_out") is True:
            reasons.append("timed out")
        shards = data.get("_shards")
        if isinstance(shards, dict):
            failed = shards.get("failed")
            if isinstance(failed, int) and not isinstance(failed, bool) and failed > 0:
                reasons.append(f"{failed} of {shards.get('total', '?')} shards failed")
        return "; ".join(reasons) or None

    def build_request(self, values: Mapping[str, Any], depth: int) -> HttpRequest:
        if self.stored is not None:
            body: dict[str, Any] = {k: v for k, v in self.stored.items() if k != "params"}
            body["params"] = render_value(self.stored.get("params", {}), values)
            return HttpRequest("POST", f"{self.base}/{self.index}/_search/template", body=body)
        rendered = render_value(self.template, values)
        if isinstance(rendered, dict) and "size" not in rendered:
            rendered["size"] = depth
        return HttpRequest("POST", f"{self.base}/{self.index}/_search", body=rendered)

    def hit_list(self, data: Any) -> list[Any] | None:
        hits = data.get("hits") if isinstance(data, dict) else None
        inner = hits.get("hits") if isinstance(hits, dict) else None
        return inner if isinstance(inner, list) else None

    def hits_description(self) -> str:
        return "hits.hits"

    def total(self, data: Any) -> int | None:
        hits = data.get("hits") if isinstance(data, dict) else None
        total = hits.get("total") if isinstance(hits, dict) else None
        if isinstance(total, dict):
            total = total.get("value")
        return total if isinstance(total, int) and not isinstance(total, bool) else None

    def lookup(self, path: Path, hit: Any) -> Any:
        found = path.resolve(hit)
        if not found and isinstance(hit, dict) and isinstance(hit.get("_source"), dict):
            found = path.resolve(hit["_source"])
        return found[0] if found else None

    async def version(self) -> str | None:
        data = await self.client.get_json(self.base + "/")
        version = data.get("version") if isinstance(data, dict) else None
        if not isinstance(version, dict) or "number" not in version:
            return None
        distribution = version.get("distribution") or "elasticsearch"
        return f"{distribution} {version['number']}"
