"""The embedded engine: BM25 over a JSONL corpus with SQLite FTS5, no server.

Exact semantics (the demo collection's judgments are pooled with them):

- **Index**: one SQLite file. ``docs(rowid INTEGER PRIMARY KEY, doc_id TEXT
  UNIQUE NOT NULL, body TEXT NOT NULL)`` (``body`` = the JSON line, for
  display) and ``fts USING fts5(<fields in order>, tokenize='<tokenizer>')``
  with the same rowid; documents inserted in corpus order; a missing field
  is indexed as the empty string, a non-string field as its JSON text. A
  ``meta`` table records the corpus file's SHA-256 and the settings' hash
  (fields, tokenizer, id field): when either differs the index is rebuilt,
  into a temporary file renamed over the old one, so a crash never leaves a
  half-built index in place.
- **Query**: terms = ``re.findall(r"\\w+", text.casefold())``, duplicates
  dropped keeping the first; no terms, no hits. The FTS5 query is
  ``" OR ".join('"' + t + '"' for t in terms)``: every term quoted, so no
  FTS5 syntax from the user reaches the parser.
- **Ranking**: ``bm25(fts, w1, w2, ...)`` with the weights in field order,
  ``ORDER BY r ASC, doc_id ASC``; score = ``-r`` (higher is better).

Blank lines of the corpus are skipped; any other line must be a JSON object
with an id (a string, or a whole number written as text). The corpus and the
index file (reading, fingerprinting, building, rebuilding when stale) are
:mod:`rankscope.search.embedded_index`; this module reads the endpoint's keys
(:class:`EmbeddedSettings`) and searches (:class:`EmbeddedEndpoint`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

from rankscope.data.irds import is_irds
from rankscope.errors import ConfigError
from rankscope.search.embedded_index import INDEX_FORMAT, default_index_name, ensure_index
from rankscope.search.templates import (
    BUILTIN_NAMES,
    MissingParameter,
    placeholder_names,
    render_text,
    template_params,
)
from rankscope.search.types import EndpointConfig, Hit, QueryItem, SearchResponse

__all__ = [
    "EmbeddedEndpoint",
    "EmbeddedSettings",
    "fts_query",
    "query_terms",
    "snippet_of",
]

SNIPPET_LENGTH = 240


def query_terms(text: str) -> list[str]:
    """The query's terms: ``\\w+`` runs of the case-folded text, first occurrences.

    Examples
    --------
    >>> query_terms("Read a CSV file, then read JSON")
    ['read', 'a', 'csv', 'file', 'then', 'json']
    """
    return list(dict.fromkeys(re.findall(r"\w+", text.casefold())))


def fts_query(terms: list[str]) -> str:
    """The FTS5 MATCH string: each term quoted, joined by OR.

    Examples
    --------
    >>> fts_query(["json", "dumps"])
    '"json" OR "dumps"'
    """
    return " OR ".join('"' + t + '"' for t in terms)


def snippet_of(value: Any, length: int = SNIPPET_LENGTH) -> str | None:
    """The start of a text, cut at a word boundary within ``length`` characters.

    Examples
    --------
    >>> snippet_of("one two three four", 9)
    'one two …'
    """
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    if len(text) <= length:
        return text
    cut = text[:length]
    space = cut.rfind(" ")
    if space > length // 2:
        cut = cut[:space]
    return cut.rstrip() + " …"


class EmbeddedSettings:
    """The embedded keys of an endpoint file, checked, with paths resolved."""

    def __init__(self, config: EndpointConfig) -> None:
        settings, source = config.settings, config.source
        base = Path(config.base_dir or ".")
        corpus = str(settings["corpus"])
        # an ir_datasets collection by name (irds:NAME), or a JSONL file
        self.corpus_irds: str | None = corpus if is_irds(corpus) else None
        index = settings.get("index") or default_index_name(config.name,
                                                            settings.get("engine", "fts5"))
        if config.files is not None:  # a web user's endpoint: inside the operator's directory
            # (an irds:NAME corpus is no file: the operator allows the collection, or not)
            self.corpus = config.files.corpus(corpus, base=base, source=source) or base / corpus
            self.index = config.files.resolve(index, key="index", base=base, source=source)
        else:
            self.corpus = base / corpus
            self.index = base / str(index)
        self.quote_lines = config.files is None
        """Errors quote a corpus line only for the user's own files (the command line)."""
        fields = settings.get("fields", ["title", "text"])
        if (not isinstance(fields, list) or not fields
                or not all(isinstance(f, str) and re.fullmatch(r"[A-Za-z_]\w*", f)
                           for f in fields) or len(set(fields)) != len(fields)):
            raise ConfigError("fields must be a list of distinct names (letters, digits, _)",
                              source=source, value=str(fields))
        self.fields: list[str] = list(fields)
        weights = settings.get("weights", {})
        if not isinstance(weights, dict) or any(k not in self.fields for k in weights):
            raise ConfigError("weights must be a table over the indexed fields",
                              source=source, value=str(weights))
        self.weights: list[float] = []
        for name in self.fields:
            value = weights.get(name, 1.0)
            if (isinstance(value, bool) or not isinstance(value, int | float)
                    or not 0 <= value < float("inf")):  # NaN and infinity too
                raise ConfigError(f"weights.{name} must be a number >= 0", source=source,
                                  value=str(value))
            self.weights.append(float(value))
        tokenizer = settings.get("tokenizer", "unicode61")
        if not isinstance(tokenizer, str) or not re.fullmatch(r"[\w\s\"'=.-]+", tokenizer):
            raise ConfigError("tokenizer must be an FTS5 tokenizer spec such as "
                              "'porter unicode61'", source=source, value=str(tokenizer))
        self.tokenizer: str = tokenizer
        from rankscope.search.fts5_bm25 import bm25_parameters

        self.k1, self.b = bm25_parameters(settings, source)
        self.id_field = str(settings.get("id_field", "id"))
        self.title_field = str(settings.get("title_field", "title"))
        self.snippet_field = str(settings.get("snippet_field", "text"))
        self.url_field = str(settings.get("url_field", "url"))
        self.image_field = str(settings.get("image_field", "image"))
        self.snippet_length = int(settings.get("snippet_length", SNIPPET_LENGTH))
        template = settings.get("template", "{{query}}")
        if not isinstance(template, str):
            raise ConfigError("template must be a string for the embedded engine",
                              source=source)
        self.template: str = template

    def index_hash(self) -> str:
        """A hash of what shapes the index (not the weights, applied at query time)."""
        text = json.dumps({"format": INDEX_FORMAT, "fields": self.fields,
                           "tokenizer": self.tokenizer, "id_field": self.id_field},
                          sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()




class EmbeddedEndpoint:
    """A BM25 search over a JSONL corpus (see the module docstring)."""

    def __init__(self, config: EndpointConfig, *, keep_raw: bool = False) -> None:
        self.config = config
        self.keep_raw = keep_raw
        self.settings = EmbeddedSettings(config)
        self.variables: dict[str, Any] = dict(config.settings.get("variables") or {})
        self._corpus_sha: str | None = None
        self._con: sqlite3.Connection | None = None
        self._bm25: Any = None
        self.explain = False
        """Record why each hit is there (its BM25 terms): ``open_endpoint(..., explain=True)``."""

    can_explain = True
    """The embedded engine says why a document scored what it did (its BM25 terms)."""

    async def __aenter__(self) -> EmbeddedEndpoint:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _connection(self) -> sqlite3.Connection:
        if self._con is None:
            self._corpus_sha = ensure_index(self.settings)
            uri = self.settings.index.resolve().as_uri() + "?mode=ro"
            self._con = sqlite3.connect(uri, uri=True, check_same_thread=False)
        return self._con

    def needed_params(self) -> set[str]:
        """Named parameters each query must give."""
        return {n for n in placeholder_names(self.settings.template)
                if n not in BUILTIN_NAMES and n not in self.variables
                and not (n.startswith("keyword") and n[7:].isdigit())}

    def rank(self, text: str, depth: int) -> tuple[list[tuple[str, float, str]], dict[str, Any],
                                                   int]:
        """(doc id, bm25 value r, body) best first, the request as recorded, and the match count."""
        con = self._connection()
        terms = query_terms(text)
        match = fts_query(terms)
        request: dict[str, Any] = {
            "method": "fts5", "index": self.settings.index.name, "text": text,
            "match": match, "weights": self.settings.weights, "limit": depth,
        }
        if self._own_bm25():
            request.update(k1=self.settings.k1, b=self.settings.b)
        if not terms:
            return [], request, 0
        if self._own_bm25():  # FTS5's bm25() has k1 and b built in
            rows, total = self._bm25_index().ranked(terms, depth)
            return rows, request, total
        weights = ", ".join("?" for _ in self.settings.weights)
        rows = con.execute(
            f"SELECT d.doc_id, bm25(fts, {weights}) AS r, d.body FROM fts "
            "JOIN docs d ON d.rowid = fts.rowid WHERE fts MATCH ? "
            "ORDER BY r ASC, d.doc_id ASC LIMIT ?",
            (*self.settings.weights, match, depth),
        ).fetchall()
        total = int(con.execute("SELECT count(*) FROM fts WHERE fts MATCH ?",
                                (match,)).fetchone()[0])
        return [(str(d), float(r), str(b)) for d, r, b in rows], request, total

    def _own_bm25(self) -> bool:
        """Whether k1 or b differ from FTS5's (its bm25() cannot take them)."""
        from rankscope.search.fts5_bm25 import FTS5_B, FTS5_K1

        return (self.settings.k1, self.settings.b) != (FTS5_K1, FTS5_B)

    def _bm25_index(self) -> Any:
        from rankscope.search.fts5_bm25 import Bm25Index

        if self._bm25 is None:
            self._bm25 = Bm25Index(self._connection(), self.settings)
        return self._bm25

    def explain_rows(self, text: str, rows: list[tuple[str, float, str]]) -> list[Any]:
        """Each ranked row's BM25 terms, as an explanation tree."""
        return list(self._bm25_index().explain(query_terms(text), [d for d, _, _ in rows]))

    def _hit(self, doc_id: str, r: float, body: str) -> Hit:
        doc = json.loads(body)
        s = self.settings
        taken = {s.id_field, s.title_field, s.snippet_field, s.url_field, s.image_field}

        def text(name: str) -> str | None:
            value = doc.get(name)
            if value is None:
                return None
            return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

        return Hit(
            doc_id=doc_id, score=-r, title=text(s.title_field),
            snippet=snippet_of(doc.get(s.snippet_field), s.snippet_length),
            url=text(s.url_field), image=text(s.image_field),
            fields={k: v for k, v in doc.items() if k not in taken},
        )

    def _text(self, query: QueryItem, depth: int) -> str:
        values = template_params(query.text, depth, {**self.variables, **query.params})
        values["query"] = query.text
        try:
            return render_text(self.settings.template, values)
        except MissingParameter as exc:
            raise ConfigError(
                f"query {query.query_id}: the template uses {{{{{exc.args[0]}}}}} but neither "
                "the query nor the endpoint's variables give it a value",
                source=self.config.source) from None

    def preview(self, query: QueryItem, depth: int) -> dict[str, Any]:
        """The search :meth:`search` would run for ``query`` (nothing is run)."""
        text = self._text(query, depth)
        return {"method": self.config.settings.get("engine", "fts5"),
                "index": self.settings.index.name, "text": text,
                "match": fts_query(query_terms(text)), "weights": self.settings.weights,
                "limit": depth,
                **({"k1": self.settings.k1, "b": self.settings.b} if self._own_bm25() else {})}

    async def search(self, query: QueryItem, depth: int) -> SearchResponse:
        """The top ``depth`` documents for ``query``."""
        import time

        started = time.perf_counter()
        text = self._text(query, depth)
        rows, request, total = self.rank(text, depth)
        raw = json.dumps([[d, r] for d, r, _ in rows]).encode("utf-8")
        hits = tuple(self._hit(d, r, b) for d, r, b in rows)
        if self.explain:
            hits = tuple(dataclasses.replace(h, explanation=e) for h, e in
                         zip(hits, self.explain_rows(text, rows), strict=True))
        return SearchResponse(
            query=query, hits=hits, request=request,
            latency_ms=(time.perf_counter() - started) * 1000.0,
            raw_sha256=hashlib.sha256(raw).hexdigest(),
            raw=raw if self.keep_raw else None, total_hits=total,
        )

    async def version(self) -> str | None:
        """SQLite's version and the corpus's SHA-256 (its first 12 hex digits)."""
        self._connection()
        corpus = (self._corpus_sha or "")[:12]
        return f"sqlite {sqlite3.sqlite_version} fts5; corpus sha256:{corpus}"

    async def aclose(self) -> None:
        """Close the index."""
        if self._bm25 is not None:
            self._bm25.close()
            self._bm25 = None
        if self._con is not None:
            self._con.close()
            self._con = None
