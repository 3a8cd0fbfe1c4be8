"""``kind = "embedded"``: the engine inside rankscope, over a JSONL corpus (or ``irds:``).

Keys: ``corpus`` (required), ``index``, ``fields``, ``weights``, ``tokenizer``,
``engine`` (``fts5``, SQLite's, built in; or ``tantivy``), ``snippet_length``. The
endpoints are :class:`rankscope.search.embedded.EmbeddedEndpoint` and
:class:`rankscope.search.tantivy_engine.TantivyEndpoint`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rankscope.errors import ConfigError
from rankscope.search.kinds import CheckContext, SearchKind

if TYPE_CHECKING:
    from rankscope.search.client import SearchClient
    from rankscope.search.types import Endpoint, EndpointConfig

ENGINES = ("fts5", "tantivy")


def _check(settings: dict[str, Any], context: CheckContext) -> None:
    if not isinstance(settings.get("corpus"), str):
        raise context.fail("embedded needs corpus = \"FILE.jsonl\"")
    if context.files is not None:
        # the corpus (a file in the scope, or an allowed irds:NAME collection) and the
        # index in the scope; the index writable
        from rankscope.search.embedded_index import check_index_target, default_index_name

        base, files = context.base, context.files
        corpus = files.corpus(settings["corpus"], base=base, source=context.source)
        if corpus is not None and not corpus.is_file():
            # refused when the endpoint is saved, not when a run first opens it
            raise context.fail("corpus: no such file in the server's files directory",
                               settings["corpus"])
        engine = settings.get("engine", "fts5")
        index = settings.get("index") or default_index_name(settings["name"], engine)
        target = files.resolve(index, key="index", base=base, source=context.source)
        check_index_target(target, engine=str(engine), source=context.source, value=str(index))


def _open(config: EndpointConfig, client: SearchClient | None,
          options: Mapping[str, Any]) -> Endpoint:
    del client
    keep_raw = bool(options.get("keep_raw", False))
    engine = config.settings.get("engine", "fts5")
    if engine == "tantivy":
        from rankscope.search.tantivy_engine import TantivyEndpoint

        return TantivyEndpoint(config, keep_raw=keep_raw)
    if engine != "fts5":
        raise ConfigError("engine must be 'fts5' (SQLite, built in) or 'tantivy'",
                          source=config.source, value=str(engine))
    from rankscope.search.embedded import EmbeddedEndpoint

    return EmbeddedEndpoint(config, keep_raw=keep_raw)


KINDS = (
    SearchKind("embedded", "the embedded engine over a JSONL corpus",
               frozenset({"corpus", "index", "fields", "weights", "tokenizer", "engine",
                          "snippet_length", "k1", "b"}), _open, remote=False, check=_check,
               explains=True),
)
