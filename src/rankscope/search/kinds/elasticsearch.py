"""``kind = "elasticsearch"`` and ``kind = "opensearch"``: the ``_search`` API of an index.

Keys: ``index`` (required), ``search_template`` (a stored template's id). The
endpoint itself is :class:`rankscope.search.elasticsearch.ElasticsearchEndpoint`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rankscope.search.kinds import CheckContext, SearchKind, need_client

if TYPE_CHECKING:
    from rankscope.search.client import SearchClient
    from rankscope.search.types import Endpoint, EndpointConfig


def _check(settings: dict[str, Any], context: CheckContext) -> None:
    if not isinstance(settings.get("index"), str):
        raise context.fail(f"{settings['kind']} needs index = \"NAME\"")


def _json(settings: Mapping[str, Any]) -> bool:
    del settings
    return True


def _open(config: EndpointConfig, client: SearchClient | None,
          options: Mapping[str, Any]) -> Endpoint:
    from rankscope.search.elasticsearch import ElasticsearchEndpoint

    return ElasticsearchEndpoint(config, need_client(client),
                                 keep_raw=bool(options.get("keep_raw", False)))


KINDS = tuple(
    SearchKind(name, f"{label}'s _search API of an index", frozenset({"index", "search_template"}),
               _open, check=_check, json_template=_json, explains=True)
    for name, label in (("elasticsearch", "Elasticsearch"), ("opensearch", "OpenSearch"))
)
