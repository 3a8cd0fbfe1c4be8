"""``kind = "solr"``: a Solr collection's ``/select`` parameters or its JSON Request API.

Keys: ``collection`` (or ``core``, required), ``handler``, ``api`` (``select`` or
``json``), ``params``. The endpoint is :class:`rankscope.search.solr.SolrEndpoint`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rankscope.search.kinds import CheckContext, SearchKind, need_client

if TYPE_CHECKING:
    from rankscope.search.client import SearchClient
    from rankscope.search.types import Endpoint, EndpointConfig


def _check(settings: dict[str, Any], context: CheckContext) -> None:
    if "core" in settings and "collection" not in settings:
        settings["collection"] = settings.pop("core")
    if not isinstance(settings.get("collection"), str):
        raise context.fail("solr needs collection = \"NAME\" (or core)")
    if settings.get("api", "select") not in ("select", "json"):
        raise context.fail("solr api must be 'select' (/select parameters) or 'json' (the JSON "
                           "Request API)", settings.get("api"))


def _json(settings: Mapping[str, Any]) -> bool:
    return bool(settings.get("api", "select") == "json")


def _open(config: EndpointConfig, client: SearchClient | None,
          options: Mapping[str, Any]) -> Endpoint:
    from rankscope.search.solr import SolrEndpoint

    return SolrEndpoint(config, need_client(client),
                        keep_raw=bool(options.get("keep_raw", False)))


KINDS = (
    SearchKind("solr", "a Solr collection (/select or the JSON Request API)",
               frozenset({"collection", "core", "handler", "api", "params"}), _open,
               check=_check, json_template=_json, explains=True),
)
