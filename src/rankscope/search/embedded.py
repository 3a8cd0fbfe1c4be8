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
with an id (a string, or a whole number written as text).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import sqlite3
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rankscope.data.irds import irds_documents, is_irds
from rankscope.errors import ConfigError, FileAccessError, ParseError, SearchError
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
    "build_index",
    "check_index_target",
    "corpus_documents",
    "corpus_fingerprint",
    "corpus_records",
    "corpus_source",
    "default_index_name",
    "fts_query",
    "query_terms",
    "snippet_of",
]

INDEX_FORMAT = "rankscope-embedded-1"
SNIPPET_LENGTH = 240
TANTIVY_META_FILE = "rankscope-meta.json"
"""Written into every index the tantivy engine builds (what :func:`check_index_target`
looks for); here, not in :mod:`rankscope.search.tantivy_engine`, which imports this module."""


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


def _field_text(value: Any) -> str:
    # A present field that is not a string (a number, a list, null) is indexed as its JSON text.
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def default_index_name(name: str, engine: str = "fts5") -> str:
    """Where an endpoint without ``index`` keeps its index (beside the endpoint file)."""
    return f"{name}.tantivy" if engine == "tantivy" else f"{name}.index.sqlite"


def _is_fts5_index(path: Path) -> bool:
    """Whether ``path`` is an index this engine wrote (its ``meta`` table says so)."""
    try:
        with contextlib.closing(sqlite3.connect(path.resolve().as_uri() + "?mode=ro",
                                                uri=True)) as con:
            row = con.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
    except sqlite3.Error:
        return False
    return row is not None and row[0] == INDEX_FORMAT


def check_index_target(path: Path, *, engine: str = "fts5", source: str | None = None,
                       value: str | None = None) -> None:
    """Refuse to build an index over a file (or directory) this engine did not make.

    The index is written into a temporary file renamed over ``path``: were
    ``path`` the corpus, a database or any other file, it would be lost.

    Raises
    ------
    ConfigError
        ``path`` exists and is not an index of ``engine``.
    """
    if not os.path.lexists(path):
        return
    if engine == "tantivy":
        made = (path.is_dir() and not path.is_symlink()
                and (path / TANTIVY_META_FILE).is_file())
    else:
        made = path.is_file() and not path.is_symlink() and _is_fts5_index(path)
    if not made:
        raise ConfigError("index names an existing file that is not an index this engine "
                          "made; it would be replaced: name a new file", source=source,
                          value=value if value is not None else str(path))


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
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
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


def file_sha256(path: Path) -> str:
    """SHA-256 of a file (raises FileAccessError)."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise FileAccessError(f"cannot read the corpus ({exc.strerror})",
                              source=str(path)) from None
    return digest.hexdigest()


def corpus_source(settings: EmbeddedSettings) -> str:
    """How messages name the corpus: its file, or ``irds:NAME``."""
    return settings.corpus_irds or str(settings.corpus)


def corpus_fingerprint(settings: EmbeddedSettings) -> str:
    """What tells the index is current: the corpus file's SHA-256, or for an
    ir_datasets collection the SHA-256 of its name and ir_datasets' version.

    Raises FileAccessError for a corpus file that does not exist.
    """
    if settings.corpus_irds is not None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            release = version("ir_datasets")
        except PackageNotFoundError:
            release = "?"
        text = f"{settings.corpus_irds}\0ir_datasets {release}"
        return hashlib.sha256(text.encode()).hexdigest()
    if not settings.corpus.is_file():
        raise FileAccessError("the corpus file does not exist", source=str(settings.corpus))
    return file_sha256(settings.corpus)


def corpus_records(settings: EmbeddedSettings) -> Iterator[tuple[int, str, str, dict[str, Any]]]:
    """(line or record number, doc id, the JSON text, the object) of each document.

    An ``irds:NAME`` corpus gives each document as an object of its text
    fields with its id under the endpoint's ``id_field``.
    """
    if settings.corpus_irds is None:
        yield from corpus_documents(settings.corpus, settings.id_field,
                                    quote=settings.quote_lines)
        return
    for number, (doc_id, fields) in enumerate(irds_documents(settings.corpus_irds), start=1):
        doc: dict[str, Any] = {settings.id_field: doc_id, **fields}
        yield number, doc_id, json.dumps(doc, ensure_ascii=False), doc


def corpus_documents(path: Path, id_field: str, *, quote: bool = True,
                     ) -> Iterator[tuple[int, str, str, dict[str, Any]]]:
    """(line number, doc id, the JSON line, the object) of each corpus line.

    ``quote=False`` leaves the line out of the error of a bad line (a file a
    web user named: its content is not theirs to read).
    """

    def shown(line: str) -> str | None:
        return line[:80] if quote else None

    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError:
                raise ParseError("not UTF-8 text", source=str(path), line=number) from None
            if not line.strip():
                continue
            try:
                doc = json.loads(line)
            except ValueError as exc:
                raise ParseError(f"not a JSON object ({exc})", source=str(path), line=number,
                                 value=shown(line)) from None
            if not isinstance(doc, dict):
                raise ParseError("not a JSON object", source=str(path), line=number,
                                 value=shown(line))
            doc_id = doc.get(id_field)
            if isinstance(doc_id, int) and not isinstance(doc_id, bool):
                doc_id = str(doc_id)
            if not isinstance(doc_id, str) or not doc_id.strip():
                raise ParseError(f"no document id in field {id_field!r}", source=str(path),
                                 line=number, value=shown(line))
            yield number, doc_id, line, doc


def _check_fts5() -> None:
    try:
        with contextlib.closing(sqlite3.connect(":memory:")) as probe:
            probe.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
    except sqlite3.OperationalError:
        raise SearchError(
            f"this Python's SQLite ({sqlite3.sqlite_version}) has no FTS5: the embedded "
            "engine needs it (or engine = \"tantivy\" with pip install 'rankscope[tantivy]')"
        ) from None


def _index_is_current(settings: EmbeddedSettings, corpus_sha: str) -> bool:
    if not settings.index.is_file():
        return False
    try:
        with contextlib.closing(sqlite3.connect(settings.index.resolve().as_uri() + "?mode=ro",
                                                uri=True)) as con:
            meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.Error:
        return False
    return (meta.get("corpus_sha256") == corpus_sha
            and meta.get("settings_hash") == settings.index_hash())


def build_index(settings: EmbeddedSettings, corpus_sha: str | None = None) -> Path:
    """Build the index file from the corpus (into a temporary file, then renamed).

    Returns the index path. Raises ParseError for a bad corpus line (naming
    the file and line) and SearchError when SQLite lacks FTS5.
    """
    _check_fts5()
    check_index_target(settings.index)
    corpus_sha = corpus_sha or corpus_fingerprint(settings)
    settings.index.parent.mkdir(parents=True, exist_ok=True)
    # a name of its own: two threads (or processes) building at once must not share one
    handle, temp_name = tempfile.mkstemp(prefix=f".{settings.index.name}.", suffix=".tmp",
                                         dir=settings.index.parent)
    os.close(handle)
    temp = Path(temp_name)
    columns = ", ".join(settings.fields)
    tokenize = settings.tokenizer.replace("'", "''")
    try:
        with contextlib.closing(sqlite3.connect(temp)) as con:
            con.execute("PRAGMA journal_mode=OFF")
            con.execute("PRAGMA synchronous=OFF")
            con.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            con.execute("CREATE TABLE docs(rowid INTEGER PRIMARY KEY, doc_id TEXT UNIQUE "
                        "NOT NULL, body TEXT NOT NULL)")
            try:
                con.execute(f"CREATE VIRTUAL TABLE fts USING fts5({columns}, "
                            f"tokenize='{tokenize}')")
            except sqlite3.OperationalError as exc:
                raise ConfigError(f"FTS5 refuses the tokenizer ({exc})",
                                  value=settings.tokenizer) from None
            marks = ", ".join("?" for _ in settings.fields)
            seen: dict[str, int] = {}
            rowid = 0
            for number, doc_id, line, doc in corpus_records(settings):
                if doc_id in seen:
                    raise ParseError(f"document id {doc_id!r} already on line {seen[doc_id]}",
                                     source=corpus_source(settings), line=number)
                seen[doc_id] = number
                rowid += 1
                con.execute("INSERT INTO docs(rowid, doc_id, body) VALUES (?, ?, ?)",
                            (rowid, doc_id, line))
                values = ["" if f not in doc else _field_text(doc[f]) for f in settings.fields]
                con.execute(f"INSERT INTO fts(rowid, {columns}) VALUES (?, {marks})",
                            (rowid, *values))
            con.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", [
                ("format", INDEX_FORMAT), ("corpus_sha256", corpus_sha),
                ("settings_hash", settings.index_hash()), ("documents", str(rowid)),
            ])
            con.commit()
        os.replace(temp, settings.index)
    finally:
        temp.unlink(missing_ok=True)
    return settings.index


_INDEX_LOCKS: dict[Path, threading.Lock] = {}
_INDEX_LOCKS_GUARD = threading.Lock()


def index_lock(index: Path) -> threading.Lock:
    """The lock that one process's threads take to check, build and open one index.

    Two evaluations of one endpoint started together (a fresh web app) would
    otherwise both build it, and one could open the index while the other
    swaps it into place.
    """
    key = index.resolve()
    with _INDEX_LOCKS_GUARD:
        return _INDEX_LOCKS.setdefault(key, threading.Lock())


def ensure_index(settings: EmbeddedSettings) -> str:
    """Build the index when missing or stale; returns the corpus SHA-256."""
    corpus_sha = corpus_fingerprint(settings)
    with index_lock(settings.index):
        if not _index_is_current(settings, corpus_sha):
            build_index(settings, corpus_sha)
    return corpus_sha


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
