"""The embedded engine on tantivy (``engine = "tantivy"``, the ``tantivy`` extra).

The same corpus, fields, weights and query handling as the SQLite engine
(:mod:`rankscope.search.embedded`), with tantivy's BM25 and tokenizers:
``tokenizer = "default"`` (lower case, split on non-alphanumerics) or
``"en_stem"`` (the same plus an English stemmer). The index is a directory
(``index``, default ``<name>.tantivy``) rebuilt when the corpus or the
settings change, into a temporary directory swapped in when complete.
Results are ordered by score, then document id ascending.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from rankscope.errors import ConfigError, DependencyError
from rankscope.search.embedded import EmbeddedEndpoint, fts_query, query_terms
from rankscope.search.embedded_index import (
    TANTIVY_META_FILE,
    check_index_target,
    corpus_fingerprint,
    corpus_records,
    corpus_source,
    index_lock,
)
from rankscope.search.types import EndpointConfig

__all__ = ["META_FILE", "TantivyEndpoint"]

META_FILE = TANTIVY_META_FILE
"""Written into every index this engine builds (what :func:`check_index_target` looks for)."""
_META = META_FILE
_TOKENIZERS = ("default", "en_stem", "raw", "whitespace")


def _tantivy() -> Any:
    try:
        import tantivy
    except ImportError:
        raise DependencyError("tantivy", "tantivy", "the tantivy embedded engine") from None
    return tantivy


class TantivyEndpoint(EmbeddedEndpoint):
    """A BM25 search over a JSONL corpus with tantivy."""

    def __init__(self, config: EndpointConfig, *, keep_raw: bool = False) -> None:
        settings = dict(config.settings)
        settings.setdefault("tokenizer", "default")
        settings.setdefault("index", f"{config.name}.tantivy")
        patched = EndpointConfig(config.kind, config.name, settings, config.config_hash,
                                 config.source, config.base_dir, config.files)
        super().__init__(patched, keep_raw=keep_raw)
        self.config = config
        if self.settings.tokenizer not in _TOKENIZERS:
            raise ConfigError(f"tantivy tokenizer must be one of {', '.join(_TOKENIZERS)}",
                              source=config.source, value=self.settings.tokenizer)
        if self._own_bm25():
            raise ConfigError("the tantivy engine's BM25 has k1 = 1.2 and b = 0.75 built in: "
                              "vary k1 and b with engine = \"fts5\"", source=config.source,
                              value=f"k1 = {self.settings.k1:g}, b = {self.settings.b:g}")
        self._tv = _tantivy()
        self._index: Any = None

    def _build(self, corpus_sha: str) -> None:
        s = self.settings
        builder = self._tv.SchemaBuilder()
        builder.add_text_field("doc_id", stored=True, tokenizer_name="raw")
        builder.add_text_field("body", stored=True, tokenizer_name="raw", index_option="basic")
        for name in s.fields:
            builder.add_text_field(name, tokenizer_name=s.tokenizer)
        schema = builder.build()
        check_index_target(s.index, engine="tantivy")  # never replace what it did not make
        # names of its own: two threads (or processes) building at once must not share one
        s.index.parent.mkdir(parents=True, exist_ok=True)
        temp = Path(tempfile.mkdtemp(prefix=f".{s.index.name}.", suffix=".tmp",
                                     dir=s.index.parent))
        try:
            index = self._tv.Index(schema, path=str(temp))
            writer = index.writer()
            seen: set[str] = set()
            for number, doc_id, line, doc in corpus_records(s):
                if doc_id in seen:
                    from rankscope.errors import ParseError

                    raise ParseError(f"document id {doc_id!r} appears twice",
                                     source=corpus_source(s), line=number)
                seen.add(doc_id)
                values: dict[str, Any] = {"doc_id": doc_id, "body": line}
                for name in s.fields:
                    value = doc.get(name, "")
                    values[name] = value if isinstance(value, str) else json.dumps(
                        value, ensure_ascii=False)
                writer.add_document(self._tv.Document(**values))
            writer.commit()
            writer.wait_merging_threads()
            (temp / _META).write_text(json.dumps(
                {"corpus_sha256": corpus_sha, "settings_hash": self._hash()}))
            old = Path(tempfile.mkdtemp(prefix=f".{s.index.name}.", suffix=".old",
                                        dir=s.index.parent))
            if s.index.exists():
                os.replace(s.index, old)
            os.replace(temp, s.index)
            shutil.rmtree(old, ignore_errors=True)
        finally:
            shutil.rmtree(temp, ignore_errors=True)

    def _hash(self) -> str:
        return hashlib.sha256(("tantivy:" + self.settings.index_hash()).encode()).hexdigest()

    def _open(self) -> Any:
        if self._index is None:
            s = self.settings
            corpus_sha = corpus_fingerprint(s)
            with index_lock(s.index):  # check, build and open as one step among threads
                try:
                    meta = json.loads((s.index / _META).read_text())
                except (OSError, ValueError):
                    meta = {}
                if (meta.get("corpus_sha256") != corpus_sha
                        or meta.get("settings_hash") != self._hash()):
                    self._build(corpus_sha)
                self._index = self._tv.Index.open(str(s.index))
            self._corpus_sha = corpus_sha
        return self._index

    def rank(self, text: str, depth: int) -> tuple[list[tuple[str, float, str]], dict[str, Any],
                                                   int]:
        index = self._open()
        terms = query_terms(text)
        match = fts_query(terms)
        boosts = dict(zip(self.settings.fields, self.settings.weights, strict=True))
        request: dict[str, Any] = {"method": "tantivy", "index": self.settings.index.name,
                                   "text": text, "match": match, "weights": boosts,
                                   "limit": depth}
        if not terms:
            return [], request, 0
        query = index.parse_query(match, self.settings.fields, field_boosts=boosts)
        searcher = index.searcher()
        # Fetch a little more than asked, so ties at the cut are ordered by id as documented.
        result = searcher.search(query, depth + 32, count=True)
        rows = []
        for score, address in result.hits:
            doc = searcher.doc(address)
            rows.append((str(doc["doc_id"][0]), -float(score), str(doc["body"][0])))
        rows.sort(key=lambda row: (row[1], row[0]))
        return rows[:depth], request, int(result.count or 0)

    def explain_rows(self, text: str, rows: list[tuple[str, float, str]]) -> list[Any]:
        """tantivy's own explanation of each ranked row (its ``Query.explain``)."""
        if not rows:
            return []
        index = self._open()
        boosts = dict(zip(self.settings.fields, self.settings.weights, strict=True))
        query = index.parse_query(fts_query(query_terms(text)), self.settings.fields,
                                  field_boosts=boosts)
        searcher = index.searcher()
        wanted = {d for d, _, _ in rows}
        found: dict[str, Any] = {}
        for _, address in searcher.search(query, len(rows) + 32).hits:
            doc_id = str(searcher.doc(address)["doc_id"][0])
            if doc_id in wanted:
                found[doc_id] = json.loads(query.explain(searcher, address).to_json())
        return [found.get(d) for d, _, _ in rows]

    async def version(self) -> str | None:
        self._open()
        corpus = (self._corpus_sha or "")[:12]
        version = str(getattr(self._tv, "__version__", "tantivy")).split(",")[0]
        return f"{version}; corpus sha256:{corpus}"
