"""What every remote kind shares: render, send, parse, map the hits, page, tell what is off.

A kind says how to build its request (:meth:`RemoteEndpoint.build_request`),
where its hit list is (:meth:`hit_list`), where its total is, where a field
of a hit is looked up (:meth:`lookup`), how to ask for the next page
(:meth:`page_request`) and how its answers say they are partial
(:meth:`partial`); this class does the rest:

- **order**: hits are kept in the order the engine listed them, never
  re-sorted (a sort by a field, equal scores, no scores);
- **duplicates**: a document listed again is dropped, its first position
  kept, and counted (:attr:`SearchResponse.duplicates`);
- **paging**: when fewer than the depth came back, the page was cut by the
  size asked for (where the kind knows it) and the engine matched more than
  it returned (where it says), the next page is asked for, up to the
  depth; a template using ``{{offset}}`` or ``{{page}}`` pages itself,
  otherwise the kind's own parameters do
  (``from``/``size``, ``start``/``rows``, ``offset``/``limit``). An endpoint
  that cannot page says why (:attr:`SearchResponse.short`);
- **partial answers** (a timeout, failed shards) are recorded with their
  reason (:attr:`SearchResponse.partial`), and **retries** with theirs;

and turns a body that is not JSON, or does not map, into a
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
    PAGING_NAMES,
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

    can_explain = False
    """Whether the kind can ask its engine why each hit is there (:meth:`explained`)."""

    def __init__(self, config: EndpointConfig, client: SearchClient, *, keep_raw: bool = False):
        self.config = config
        self.client = client
        self.keep_raw = keep_raw
        self.explain = False
        """Ask the engine to explain each hit (``open_endpoint(..., explain=True)``)."""
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
        partial = settings.get("partial_field")
        self.partial_path = parse_path(partial, key="partial_field") if partial else None

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

    def page_request(self, values: Mapping[str, Any], depth: int, offset: int,
                     size: int) -> HttpRequest | str:
        """The request for ``size`` more hits after the first ``offset``, or why there is none.

        Used when the templates do not page themselves (no ``{{offset}}`` or
        ``{{page}}``).
        """
        return ("this endpoint cannot page: put {{offset}} (results already received) or "
                "{{page}} (from 1) in its url, params or template")

    def explained(self, request: HttpRequest) -> HttpRequest:
        """``request`` asking the engine to explain each hit (kinds that can)."""
        return request

    def hit_explanation(self, raw_hit: Any, doc_id: str, data: Any) -> Any:
        """The engine's explanation of one hit of an explained request (None: none given)."""
        return None

    def partial(self, data: Any) -> str | None:
        """Why the answer is partial, where the response says it is (None: whole)."""
        if self.partial_path is None:
            return None
        value = self.partial_path.first(data)
        return f"{self.partial_path.text} is {json.dumps(value)}" if value else None

    def page_size(self, request: HttpRequest) -> int | None:
        """How many hits ``request`` asked for, where the kind knows (None: unknown)."""
        return None

    def templates(self) -> list[Any]:
        """Every template value whose placeholders are rendered (body, params, url)."""
        return [self.template]

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
        names: set[str] = set()
        for template in self.templates():
            names |= placeholder_names(template)
        return names

    def pages_itself(self) -> bool:
        """Whether a template asks for pages with ``{{offset}}`` or ``{{page}}``."""
        return any(placeholder_names(t, with_defaults=True) & PAGING_NAMES
                   for t in self.templates())

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
        """The ranked hits of one parsed response, duplicates dropped (errors name the query)."""
        raw_hits = self._raw_hits(query, request, data, body)
        hits: list[Hit] = []
        self._add_hits(query, request, body, raw_hits, hits, set(), depth, data=data)
        return hits

    def _raw_hits(self, query: QueryItem, request: HttpRequest, data: Any,
                  body: bytes) -> list[Any]:
        raw_hits = self.hit_list(data)
        if raw_hits is None:
            raise self._mapping_error(query, request, f"has no hit list at "
                                      f"{self.hits_description()!r}", body)
        return raw_hits

    def _doc_ids(self, query: QueryItem, request: HttpRequest, body: bytes,
                 raw_hits: list[Any], first_position: int) -> list[str]:
        id_path = self.paths["id_field"]
        doc_path = id_path if id_path is not None else parse_path("id")
        ids = []
        for position, raw in enumerate(raw_hits, start=first_position):
            doc_id = _doc_id(self.lookup(doc_path, raw))
            if doc_id is None:
                raise self._mapping_error(
                    query, request, f"has hit {position} without a document id at "
                    f"{doc_path.text!r}", body)
            ids.append(doc_id)
        return ids

    def _add_hits(self, query: QueryItem, request: HttpRequest, body: bytes,
                  raw_hits: list[Any], hits: list[Hit], seen: set[str], depth: int,
                  first_position: int = 1, data: Any = None) -> int:
        """Append one page's hits in the engine's order, up to ``depth``; duplicates dropped.

        Returns how many were dropped as duplicates (of the hits looked at).
        """
        ids = self._doc_ids(query, request, body, raw_hits, first_position)
        dropped = 0
        score_path = self.paths.get("score_field")
        for doc_id, raw in zip(ids, raw_hits, strict=True):
            if len(hits) >= depth:
                break
            if doc_id in seen:
                dropped += 1  # listed again (e.g. by two shards): its first position stands
                continue
            seen.add(doc_id)
            shown: dict[str, Any] = {}
            for name in _DISPLAY:
                path = self.paths.get(f"{name}_field")
                shown[name] = display_text(self.lookup(path, raw)) if path else None
            fields = {name: self.lookup(path, raw) for name, path in self.display_paths.items()}
            hits.append(Hit(
                doc_id=doc_id,
                score=_score(self.lookup(score_path, raw)) if score_path else None,
                title=shown["title"], snippet=shown["snippet"], url=shown["url"],
                image=shown["image"],
                fields={k: v for k, v in fields.items() if v is not None},
                explanation=self.hit_explanation(raw, doc_id, data) if self.explain else None,
            ))
        return dropped

    def hits_description(self) -> str:
        """Where the hit list is expected (for messages)."""
        return "hits"

    def next_page(self, values: Mapping[str, Any], depth: int, offset: int, page: int,
                  size: int) -> HttpRequest | str:
        """The request for page ``page`` (``offset`` hits received so far), or why none."""
        if self.pages_itself():
            following: HttpRequest | str = self.build_request(
                {**values, "offset": offset, "page": page}, depth)
        else:
            following = self.page_request(values, depth, offset, size)
        if self.explain and isinstance(following, HttpRequest):
            return self.explained(following)
        return following

    def _parse(self, query: QueryItem, request: HttpRequest, body: bytes) -> Any:
        try:
            return json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            reason = str(exc).split(":")[0]
            raise self._mapping_error(query, request, f"is not JSON ({reason})",
                                      body) from None

    async def search(self, query: QueryItem, depth: int) -> SearchResponse:
        """Send one query (page after page up to ``depth`` when needed) and map the answers."""
        request = self.render(query, depth)
        if self.explain:
            request = self.explained(request)
        values = self._values(query, depth)
        requests = [request]
        hits: list[Hit] = []
        seen: set[str] = set()
        bodies: list[bytes] = []
        retried: list[str] = []
        partial: list[str] = []
        latency = 0.0
        duplicates = 0
        offset = 0
        total: int | None = None
        short: str | None = None
        first_size: int | None = None
        while True:
            page = len(requests)
            reply = await self.client.send(request, query_id=query.query_id)
            bodies.append(reply.body)
            latency += reply.latency_ms
            retried.extend(reply.retried)
            data = self._parse(query, request, reply.body)
            raw_hits = self._raw_hits(query, request, data, reply.body)
            if page == 1:
                total, first_size = self.total(data), len(raw_hits)
            said = self.partial(data)
            if said:
                partial.append(said if page == 1 else f"page {page}: {said}")
            if page > 1 and raw_hits and set(self._doc_ids(
                    query, request, reply.body, raw_hits, offset + 1)) <= seen:
                short = (f"page {page} listed only documents of the earlier pages: the "
                         "endpoint seems to ignore its paging parameters")
                break
            duplicates += self._add_hits(query, request, reply.body, raw_hits, hits, seen,
                                         depth, offset + 1, data=data)
            offset += len(raw_hits)
            if len(hits) >= depth:
                break
            if not raw_hits:
                if page > 1 and total is not None and offset < total:
                    short = (f"page {page} came back empty although the engine matched "
                             f"{total} (received {offset})")
                break
            # Another page only when this one was cut by the size asked for (a page that
            # came back short of it is the engine's whole answer: a collapse, a min_score)
            # and more matched; a kind that cannot say the size it asked relies on the total.
            asked = self.page_size(request)
            if asked is not None:
                more = len(raw_hits) >= asked and (total is None or total > offset)
            else:
                more = total is not None and total > offset
            if not more:
                break
            step = max(1, min(first_size or depth, depth - len(hits)))
            following = self.next_page(values, depth, offset, page + 1, step)
            if isinstance(following, str):
                matched = f"the engine matched {total}" if total is not None else \
                    "the page was full"
                short = f"{len(hits)} of {depth} kept, {matched}: {following}"
                break
            request = following
            requests.append(request)
        described = requests[0].describe()
        if len(requests) > 1:
            described["next_pages"] = [r.describe() for r in requests[1:]]
        raw = b"\n".join(bodies)
        return SearchResponse(
            query=query,
            hits=tuple(hits),
            request=described,
            latency_ms=latency,
            raw_sha256=hashlib.sha256(raw).hexdigest(),
            raw=raw if self.keep_raw else None,
            total_hits=total,
            partial="; ".join(partial) or None,
            short=short,
            duplicates=duplicates,
            pages=len(requests),
            retried=tuple(retried),
        )
