"""BM25 as SQLite FTS5 computes it, from the index, with any k1 and b, term by term.

FTS5's ``bm25()`` has k1 = 1.2 and b = 0.75 built in (``fts5_aux.c``). To
vary them, and to say why a document scored what it did, the embedded engine
computes the same sum itself from the index FTS5 keeps: for a query of
phrases :math:`q_1 \\dots q_n` (each term of the query is one phrase, of the
tokens the endpoint's tokenizer makes of it) and a row :math:`D`,

.. math::

    \\mathrm{bm25}(D) = \\sum_i \\mathrm{idf}(q_i)\\,
        \\frac{f(q_i, D)\\,(k_1 + 1)}{f(q_i, D) + k_1 (1 - b + b\\,|D| / \\mathrm{avgdl})}

with :math:`\\mathrm{idf}(q) = \\ln\\frac{N - n(q) + 0.5}{n(q) + 0.5}` (:math:`10^{-6}`
when that is not positive), :math:`N` the rows, :math:`n(q)` the rows holding
the phrase, :math:`f(q, D)` the phrase's occurrences in the row, each
counted with its column's weight, :math:`|D|` the row's tokens over every
column and avgdl their mean over the rows: exactly FTS5's terms, in its order
(phrases in query order, occurrences by column then position), so with
k1 = 1.2 and b = 0.75 the scores are FTS5's own (a test holds them equal on
the demo collection). FTS5 returns :math:`-\\mathrm{bm25}`; the engine's
score is :math:`\\mathrm{bm25}`.

Where the numbers come from: occurrences from an ``fts5vocab`` table of the
index (``instance``: term, row, column, offset), row lengths from the
index's ``fts_docsize`` table and :math:`N` and the column totals from its
averages record (``fts_data`` row 1), each a list of SQLite varints.
"""

from __future__ import annotations

import contextlib
import math
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rankscope.errors import ConfigError

if TYPE_CHECKING:
    from rankscope.search.embedded import EmbeddedSettings

__all__ = ["FTS5_B", "FTS5_K1", "Bm25Index", "TermScore", "bm25_parameters", "explanation"]

FTS5_K1 = 1.2
"""FTS5's own k1 (``bm25()`` has no parameter for it)."""
FTS5_B = 0.75
"""FTS5's own b."""
_CHUNK = 500


def bm25_parameters(settings: Any, source: str | None) -> tuple[float, float]:
    """An endpoint's ``k1`` (>= 0) and ``b`` (0 to 1), FTS5's own 1.2 and 0.75 by default.

    Raises
    ------
    ConfigError
        A value out of range, or not a number.
    """
    out = []
    for key, default, top in (("k1", FTS5_K1, None), ("b", FTS5_B, 1.0)):
        value = settings.get(key, default)
        if (isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0
                or (top is not None and value > top) or value == float("inf")):
            raise ConfigError(f"{key} must be a number " + ("from 0 to 1" if top else ">= 0"),
                              source=source, value=str(value))
        out.append(float(value))
    return out[0], out[1]


def _varints(blob: bytes) -> list[int]:
    """The SQLite varints of a blob, in order (1 to 9 bytes each, big-endian 7-bit groups).

    Examples
    --------
    >>> _varints(bytes([0x03, 0x81, 0x00, 0x7f]))
    [3, 128, 127]
    """
    out: list[int] = []
    pos = 0
    while pos < len(blob):
        value = 0
        for i in range(9):
            byte = blob[pos]
            pos += 1
            if i == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out


@dataclass
class TermScore:
    """One phrase's share of a row's BM25."""

    phrase: str
    tokens: list[str]
    idf: float
    rows_with: int
    """:math:`n(q)`: rows holding the phrase."""
    freq: float = 0.0
    """:math:`f(q, D)`: occurrences, each with its column's weight."""
    by_field: dict[str, int] = field(default_factory=dict)
    """Occurrences per column (not weighted)."""
    value: float = 0.0


class Bm25Index:
    """What BM25 needs from one FTS5 index (an open connection to it; read only)."""

    def __init__(self, con: sqlite3.Connection, settings: EmbeddedSettings) -> None:
        self.con = con
        self.settings = settings
        self.fields = list(settings.fields)
        tokenizer = settings.tokenizer
        con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.rankscope_instances "
                    "USING fts5vocab(main, fts, 'instance')")
        row = con.execute("SELECT block FROM fts_data WHERE id = 1").fetchone()
        counts = _varints(bytes(row[0])) if row is not None else [0]
        self.n_rows = counts[0]
        self.total_tokens = sum(counts[1:])
        self.avgdl = self.total_tokens / self.n_rows if self.n_rows else 0.0
        self._tokenizer = sqlite3.connect(":memory:")
        quoted = tokenizer.replace("'", "''")
        self._tokenizer.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{quoted}')")
        self._tokenizer.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")

    def close(self) -> None:
        """Close the tokenizer's own connection."""
        with contextlib.suppress(sqlite3.Error):
            self._tokenizer.close()

    def tokens(self, phrase: str) -> list[str]:
        """The tokens the index's tokenizer makes of ``phrase``, in order."""
        con = self._tokenizer
        con.execute("DELETE FROM t")
        con.execute("INSERT INTO t(rowid, x) VALUES (1, ?)", (phrase,))
        return [str(t) for t, in con.execute("SELECT term FROM v ORDER BY offset")]

    def _instances(self, token: str) -> dict[int, set[tuple[int, int]]]:
        found: dict[int, set[tuple[int, int]]] = {}
        column = {name: i for i, name in enumerate(self.fields)}
        for doc, col, offset in self.con.execute(
                "SELECT doc, col, offset FROM temp.rankscope_instances WHERE term = ?", (token,)):
            found.setdefault(int(doc), set()).add((column[str(col)], int(offset)))
        return found

    def occurrences(self, tokens: Sequence[str]) -> dict[int, list[tuple[int, int]]]:
        """Row -> the (column, offset) where the phrase of ``tokens`` starts, in that order."""
        if not tokens:
            return {}
        first = self._instances(tokens[0])
        rest = [self._instances(t) for t in tokens[1:]]
        out: dict[int, list[tuple[int, int]]] = {}
        for row, starts in first.items():
            kept = [(c, o) for c, o in starts
                    if all((c, o + k) in later.get(row, ()) for k, later in
                           enumerate(rest, start=1))]
            if kept:
                out[row] = sorted(kept)
        return out

    def lengths(self, rows: Sequence[int]) -> dict[int, int]:
        """Row -> its tokens over every column (FTS5's ``fts_docsize``)."""
        out: dict[int, int] = {}
        ids = list(rows)
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start:start + _CHUNK]
            marks = ", ".join("?" for _ in chunk)
            for row, size in self.con.execute(
                    f"SELECT id, sz FROM fts_docsize WHERE id IN ({marks})", chunk):
                out[int(row)] = sum(_varints(bytes(size)))
        return out

    def score(self, terms: Sequence[str], weights: Sequence[float], k1: float, b: float,
              rows: Sequence[int] | None = None) -> dict[int, tuple[float, list[TermScore]]]:
        """Each row's BM25 and its terms: the rows holding any phrase, or ``rows``."""
        phrases = []
        for term in terms:
            tokens = self.tokens(term)
            where = self.occurrences(tokens)
            n_with = len(where)
            idf = math.log((self.n_rows - n_with + 0.5) / (n_with + 0.5)) if self.n_rows \
                else 0.0
            if idf <= 0.0:
                idf = 1e-6
            phrases.append((term, tokens, idf, n_with, where))
        wanted = set(rows) if rows is not None else {
            row for *_, where in phrases for row in where}
        sizes = self.lengths(sorted(wanted))
        out: dict[int, tuple[float, list[TermScore]]] = {}
        for row in wanted:
            size = float(sizes.get(row, 0))
            total = 0.0
            parts = []
            for term, tokens, idf, n_with, where in phrases:
                part = TermScore(term, tokens, idf, n_with)
                for col, _ in where.get(row, ()):
                    part.freq += weights[col]
                    name = self.fields[col]
                    part.by_field[name] = part.by_field.get(name, 0) + 1
                f = part.freq
                if f:  # FTS5 adds idf * 0 / (k1 norm) = 0.0 here (and k1 = 0 would make 0 / 0)
                    part.value = idf * ((f * (k1 + 1.0))
                                        / (f + k1 * (1 - b + b * size / self.avgdl)))
                total += part.value
                parts.append(part)
            out[row] = (total, parts)
        return out

    def ranked(self, terms: Sequence[str], depth: int) -> tuple[list[tuple[str, float, str]],
                                                                 int]:
        """The best ``depth`` (doc id, -bm25, body) rows by the endpoint's k1 and b, ties
        by doc id (as FTS5 orders ``bm25()``), and how many rows match."""
        s = self.settings
        scored = self.score(terms, s.weights, s.k1, s.b)
        ids = self._ids(list(scored))
        ranked = sorted((-total, ids[row][0], row) for row, (total, _) in scored.items())
        return [(d, r, ids[row][1]) for r, d, row in ranked[:depth]], len(scored)

    def _ids(self, rows: Sequence[int]) -> dict[int, tuple[str, str]]:
        out: dict[int, tuple[str, str]] = {}
        for start in range(0, len(rows), _CHUNK):
            chunk = list(rows[start:start + _CHUNK])
            marks = ", ".join("?" for _ in chunk)
            for row, doc_id, body in self.con.execute(
                    f"SELECT rowid, doc_id, body FROM docs WHERE rowid IN ({marks})", chunk):
                out[int(row)] = (str(doc_id), str(body))
        return out

    def explain(self, terms: Sequence[str], doc_ids: Sequence[str]) -> list[dict[str, Any]]:
        """The explanation tree of each document's BM25 (:func:`explanation`), in order."""
        if not doc_ids:
            return []
        row_of: dict[str, int] = {}
        for start in range(0, len(doc_ids), _CHUNK):
            chunk = list(doc_ids[start:start + _CHUNK])
            marks = ", ".join("?" for _ in chunk)
            row_of.update((str(d), int(r)) for r, d in self.con.execute(
                f"SELECT rowid, doc_id FROM docs WHERE doc_id IN ({marks})", chunk))
        s = self.settings
        rows = [row_of[d] for d in doc_ids]
        scored = self.score(terms, s.weights, s.k1, s.b, rows=rows)
        sizes = self.lengths(rows)
        return [explanation(*scored[row], k1=s.k1, b=s.b, weights=s.weights, fields=s.fields,
                            size=sizes.get(row), index=self) for row in rows]


def explanation(total: float, parts: Sequence[TermScore], *, k1: float, b: float,
                weights: Sequence[float], fields: Sequence[str], size: int | None,
                index: Bm25Index) -> dict[str, Any]:
    """One row's BM25 as an explanation tree (``value``, ``description``, ``details``),
    the shape Elasticsearch, OpenSearch, Solr and tantivy explain in."""
    weighting = ", ".join(f"{name} x{w:g}" for name, w in zip(fields, weights, strict=True))
    details = []
    for part in parts:
        if not part.freq:
            continue
        where = " + ".join(f"{name} {n}" for name, n in part.by_field.items())
        details.append({
            "value": part.value,
            "description": f"term {part.phrase!r}"
            + (f" (tokens {' '.join(part.tokens)})" if part.tokens != [part.phrase] else ""),
            "details": [
                {"value": part.idf, "description":
                    f"idf = ln((N - n + 0.5) / (n + 0.5)), N = {index.n_rows} documents, "
                    f"n = {part.rows_with} holding it" + (" (not positive: 1e-6)"
                                                          if part.idf == 1e-6 else "")},
                {"value": part.freq, "description": f"weighted occurrences ({where}; "
                 f"weights {weighting})"},
                {"value": (1 - b + b * (size or 0) / index.avgdl) if index.avgdl else 0.0,
                 "description": f"length norm 1 - b + b |D| / avgdl, |D| = {size} tokens, "
                 f"avgdl = {index.avgdl:.4g}"},
            ]})
    missing = [p.phrase for p in parts if not p.freq]
    return {"value": total,
            "description": f"BM25 (k1 = {k1:g}, b = {b:g}): sum over the query's terms "
            f"f (k1 + 1) / (f + k1 norm) x idf"
            + (f"; not in this document: {', '.join(repr(m) for m in missing)}"
               if missing else ""),
            "details": details}
