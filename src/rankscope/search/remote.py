"""What every remote kind shares: render, send, parse, map the hits.

A kind says how to build its request (:meth:`RemoteEndpoint.build_request`),
where its hit list is (:meth:`hit_list`), where its total is, and where a
field of a hit is looked up (:meth:`lookup`); this class does the rest, and
turns a body that is not JSON, or does not map, into a
:class:`~rankscope.errors.SearchRequestError` naming the query.
"""

from __future__ import annotations

import abc
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from rankscope.errors import ConfigError, SearchRequestError
from rankscope.search.client import HttpRequest, SearchClient
from rankscope.search.paths import Path, parse_path
from rankscope.search.templates import (
    BUILTIN_NAMES,
    MissingParameter,
    parse_json_template,
    placeholder_names,
    template_params,
)
from rankscope.search.types import EndpointConfig, Hit, QueryItem, SearchResponse

__all__ = ["RemoteEndpoint", "display_text"]

_DISPLAY = ("title", "snippet", "url", "image")


def display_text(value: Any) -> str | None:
    """A display field as text: a list gives its first element (Solr's multi-valued fields)."""
    while isinstance(value, list):
        if not value:
            return None
        value = value[0]
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _doc_id(value: Any) -> str | None:
    while isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        return value if value.strip() else None
    if isinstance(value, int | float):
        return str(int(value)) if float(value).is_integer() else repr(value)
    return None


def _score(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    score = float(value)
    return score if score == score and abs(score) != float("inf") else None


class RemoteEndpoint(abc.ABC):
    """Base class of the HTTP kinds (Elasticsearch, OpenSearch, Solr, any JSON API)."""

    default_paths: Mapping[str, str | None] = {
        "id_field": "id", "score_field": "score", "title_field": "title",
        "snippet_field": None, "url_field": "url", "image_field": "image",
    }

    def __init__(self, config: EndpointConfig, client: SearchClient, *, keep_raw: bool = False):
        self.config = config
        self.client = client
        self.keep_raw = keep_raw
        settings = config.settings
        self.variables: dict[str, Any] = dict(settings.get("variables") or {})
        template = settings.get("template")
        self.template: Any = (parse_json_template(template, source=config.source)
                              if template is not None else None)
        self.paths: dict[str, Path | None] = {}
        for key, default in self.default_paths.items():
            text = settings.get(key, default)
            self.paths[key] = parse_path(text, key=key) if text else None
        self.display_paths = {name: parse_path(p, key=f"display_fields.{name}")
                              for name, p in (settings.get("display_fields") or {}).items()}
        total = settings.get("total_field")
        self.total_path = parse_path(total, key="total_field") if total else None

    async def __aenter__(self) -> RemoteEndpoint:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self.client.aclose()

    # -- what a kind provides -------------------------------------------------

    @abc.abstractmethod
    def build_request(self, values: Mapping[str, Any], depth: int) -> HttpRequest:
        """The request for one query (``values``: the template's parameters)."""

    @abc.abstractmethod
    def hit_list(self, data: Any) -> list[Any] | None:
        """The list of hits in a parsed response (None: the path is missing)."""

    def total(self, data: Any) -> int | None:
        """How many documents matched, where the response says."""
        if self.total_path is None:
            return None
        value = self.total_path.first(data)
        return int(value) if isinstance(value, int) and not isinstance(value, bool) else None

    def lookup(self, path: Path, hit: Any) -> Any:
        """A field of one hit."""
        return path.first(hit)

    def template_names(self) -> set[str]:
        """Placeholders the request templates use (defaults excluded)."""
        return placeholder_names(self.template)

    async def version(self) -> str | None:
        """The engine's version where it reports one."""
        return None

    # -- shared ---------------------------------------------------------------

    def needed_params(self) -> set[str]:
        """Named parameters each query must give (not built in, not an endpoint variable)."""
        return {n for n in self.template_names()
                if n not in BUILTIN_NAMES and n not in self.variables
                and not (n.startswith("keyword") and n[7:].isdigit())}

    def _values(self, query: QueryItem, depth: int) -> dict[str, Any]:
        values = template_params(query.text, depth, {**self.variables, **query.params})
        values["query"] = query.text
        values["depth"] = depth
        return values

    def render(self, query: QueryItem, depth: int) -> HttpRequest:
        """The request for ``query`` (raises ConfigError for a missing parameter)."""
        try:
            return self.build_request(self._values(query, depth), depth)
        except MissingParameter as exc:
            raise ConfigError(
                f"query {query.query_id}: the template uses {{{{{exc.args[0]}}}}} but neither "
                "the query nor the endpoint's variables give it a value",
                source=self.config.source) from None

    def preview(self, query: QueryItem, depth: int) -> dict[str, Any]:
        """The rendered request for ``query`` (nothing is sent)."""
        return self.render(query, depth).describe()

    def _mapping_error(self, query: QueryItem, request: HttpRequest, what: str,
                       body: bytes) -> SearchRequestError:
        start = body[:120].decode("utf-8", errors="replace").replace("\n", " ")
        return SearchRequestError(
            query.query_id,
            f"the response of {request.method} {request.url} {what}; it starts with {start!r}")

    def map_hits(self, query: QueryItem, request: HttpRequest, data: Any, body: bytes,
                 depth: int) -> list[Hit]:
        """The ranked hits of a parsed response (errors name the query and the path)."""
        raw_hits = self.hit_list(data)
        if raw_hits is None:
            raise self._mapping_error(query, request, f"has no hit list at "
                                      f"{self.hits_description()!r}", body)
        id_path = self.paths["id_field"]
        doc_path = id_path if id_path is not None else parse_path("id")
        hits: list[Hit] = []
        seen: set[str] = set()
        for position, raw in enumerate(raw_hits[:depth], start=1):
            doc_id = _doc_id(self.lookup(doc_path, raw))
            if doc_id is None:
                raise self._mapping_error(
                    query, request, f"has hit {position} without a document id at "
                    f"{doc_path.text!r}", body)
            if doc_id in seen:
                continue  # the same document twice (e.g. collapsed shards): keep its best rank
            seen.add(doc_id)
            shown: dict[str, Any] = {}
            for name in _DISPLAY:
                path = self.paths.get(f"{name}_field")
                shown[name] = display_text(self.lookup(path, raw)) if path else None
            score_path = self.paths.get("score_field")
            fields = {name: self.lookup(path, raw) for name, path in self.display_paths.items()}
            hits.append(Hit(
                doc_id=doc_id,
                score=_score(self.lookup(score_path, raw)) if score_path else None,
                title=shown["title"], snippet=shown["snippet"], url=shown["url"],
                image=shown["image"],
                fields={k: v for k, v in fields.items() if v is not None},
            ))
        return hits

    def hits_description(self) -> str:
        """Where the hit list is expected (for messages)."""
        return "hits"

    async def search(self, query: QueryItem, depth: int) -> SearchResponse:
        """Send one query and map what comes back."""
        request = self.render(query, depth)
        reply = await self.client.send(request, query_id=query.query_id)
        try:
            data = json.loads(reply.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            reason = str(exc).split(":")[0]
            raise self._mapping_error(query, request, f"is not JSON ({reason})",
                                      reply.body) from None
        hits = self.map_hits(query, request, data, reply.body, depth)
        return SearchResponse(
            query=query,
            hits=tuple(hits),
            request=request.describe(),
            latency_ms=reply.latency_ms,
            raw_sha256=hashlib.sha256(reply.body).hexdigest(),
            raw=reply.body if self.keep_raw else None,
            total_hits=self.total(data),
        )
