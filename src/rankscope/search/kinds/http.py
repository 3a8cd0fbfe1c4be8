"""``kind = "http"``: any HTTP JSON search API, described by paths into its answer.

Keys: ``hits`` (required: where the list of results is), ``method``, ``params``,
``version_url``, ``version_path``, ``partial_field``. The endpoint is
:class:`rankscope.search.http_json.HttpJsonEndpoint`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rankscope.search.kinds import CheckContext, SearchKind, need_client

if TYPE_CHECKING:
    from rankscope.search.client import SearchClient
    from rankscope.search.types import Endpoint, EndpointConfig


def _check(settings: dict[str, Any], context: CheckContext) -> None:
    if "hits" not in settings:
        raise context.fail("http needs hits = \"PATH\" (where the list of results is, e.g. "
                           "'results[*]')")


def _json(settings: Mapping[str, Any]) -> bool:
    del settings
    return True


def _open(config: EndpointConfig, client: SearchClient | None,
          options: Mapping[str, Any]) -> Endpoint:
    from rankscope.search.http_json import HttpJsonEndpoint

    return HttpJsonEndpoint(config, need_client(client),
                            keep_raw=bool(options.get("keep_raw", False)))


KINDS = (
    SearchKind("http", "any HTTP JSON search API",
               frozenset({"method", "params", "hits", "version_url", "version_path",
                          "partial_field"}), _open, check=_check, json_template=_json),
)
