"""The embedded engines' index files and the corpus they are built from.

The corpus (a JSONL file, or an ``irds:NAME`` collection) is read by
:func:`corpus_records` and fingerprinted by :func:`corpus_fingerprint`; the
FTS5 index (one SQLite file, its layout in :mod:`rankscope.search.embedded`)
is built by :func:`build_index` into a temporary file renamed over the old
one, and :func:`ensure_index` rebuilds it when the corpus or the settings
that shape it changed, one thread of a process at a time per index
(:func:`index_lock`, shared with :mod:`rankscope.search.tantivy_engine`).
:func:`check_index_target` refuses to build over a file or directory that
is not an index the engine made.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankscope.data.irds import irds_documents
from rankscope.errors import ConfigError, FileAccessError, ParseError, SearchError

if TYPE_CHECKING:
    from rankscope.search.embedded import EmbeddedSettings

__all__ = [
    "INDEX_FORMAT",
    "TANTIVY_META_FILE",
    "build_index",
    "check_index_target",
    "corpus_documents",
    "corpus_fingerprint",
    "corpus_records",
    "corpus_source",
    "default_index_name",
    "ensure_index",
    "file_sha256",
    "index_lock",
]

INDEX_FORMAT = "rankscope-embedded-1"
"""The ``format`` an FTS5 index's ``meta`` table records (what :func:`check_index_target`
looks for)."""
TANTIVY_META_FILE = "rankscope-meta.json"
"""Written into every index the tantivy engine builds (what :func:`check_index_target`
looks for); here, not in :mod:`rankscope.search.tantivy_engine`, which imports this module."""


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
