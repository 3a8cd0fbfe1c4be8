"""What an LLM judge grades: the pairs, and the texts of their queries and documents.

Pairs come from the top k of one or more runs (ranked as evaluation ranks
them) or of snapshots (:mod:`rankscope.llm_judge.snapshots`), or from a pairs
file; then optionally only those not graded yet ("fill the holes"), or only
those graded already (to measure the judge), and a seeded random sample of
them. Texts come from a :class:`TextSource`: :class:`FileTexts` reads a
queries TSV (``query_id<TAB>text``, a header line may name a ``need``
column) and a documents JSONL (``id`` and text fields);
:class:`~rankscope.llm_judge.snapshots.SnapshotTexts` reads a snapshot store;
any object with the same methods can stand in for them.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import polars as pl

from rankscope.data._io import PathLike, read_text
from rankscope.data.irds import irds_documents, is_irds
from rankscope.engine.ranking import Ties
from rankscope.errors import InputError, ParseError

if TYPE_CHECKING:
    from rankscope.search.types import QueryItem

__all__ = [
    "DOC_ID_FIELDS",
    "FileTexts",
    "MixedTexts",
    "Pair",
    "TextSource",
    "document_fields",
    "drop_graded",
    "keep_graded",
    "pairs_from_runs",
    "query_need",
    "read_documents",
    "read_judged",
    "read_needs",
    "read_pairs",
    "read_queries",
    "read_query_file",
    "sample_pairs",
]

DOC_ID_FIELDS = ("id", "_id", "doc_id", "docid", "docno", "pid")
"""Names accepted for a document's id in a JSONL corpus (the first present wins)."""


@dataclass(frozen=True, order=True)
class Pair:
    """A (query, document) to grade."""

    query_id: str
    doc_id: str


@runtime_checkable
class TextSource(Protocol):
    """Where the texts of queries and documents come from.

    Two optional methods refine it: ``query_need(query_id)`` (the information
    need, or None) and ``pair_document(query_id, doc_id)`` (the document as
    shown for that query, when it depends on the query, as a highlighted
    snippet does); :func:`query_need` and :func:`document_fields` use them
    when present.
    """

    def query_text(self, query_id: str) -> str | None:
        """The query's text, or None when unknown."""

    def document(self, doc_id: str) -> Mapping[str, str] | None:
        """The document's text fields (name -> text, in display order), or None."""


def query_need(texts: TextSource, query_id: str) -> str | None:
    """The query's information need, when the source knows one."""
    method = getattr(texts, "query_need", None)
    need = method(query_id) if callable(method) else None
    return need if isinstance(need, str) and need.strip() else None


def document_fields(texts: TextSource, pair: Pair) -> Mapping[str, str] | None:
    """The document's fields as shown for the pair's query (or as the source has it)."""
    method = getattr(texts, "pair_document", None)
    if callable(method):
        found: Mapping[str, str] | None = method(pair.query_id, pair.doc_id)
        return found
    return texts.document(pair.doc_id)


class MixedTexts:
    """Queries from one source, documents from another, needs from a third (optional).

    Parameters
    ----------
    queries, docs : TextSource
        Where query texts (and needs) and documents come from.
    needs : mapping, optional
        ``{query_id: need}``, preferred to the queries source's needs.
    """

    def __init__(self, queries: TextSource, docs: TextSource,
                 needs: Mapping[str, str] | None = None) -> None:
        self.queries = queries
        self.docs = docs
        self.needs = dict(needs or {})

    def query_text(self, query_id: str) -> str | None:
        """The query's text, or None."""
        return self.queries.query_text(query_id)

    def query_need(self, query_id: str) -> str | None:
        """The need given, else the queries source's, else None."""
        return self.needs.get(query_id) or query_need(self.queries, query_id)

    def document(self, doc_id: str) -> Mapping[str, str] | None:
        """The document's fields, or None."""
        return self.docs.document(doc_id)

    def pair_document(self, query_id: str, doc_id: str) -> Mapping[str, str] | None:
        """The document as shown for the query, or None."""
        return document_fields(self.docs, Pair(query_id, doc_id))


class FileTexts:
    """Texts read from a queries TSV and a documents JSONL (or given as mappings).

    Parameters
    ----------
    queries : path or mapping
        ``query_id<TAB>text`` lines (an optional header line ``query_id<TAB>text``,
        which may name a further ``need`` column), or ``{query_id: text}``.
    docs : path or mapping
        JSONL with an id (see :data:`DOC_ID_FIELDS`) and text fields, or
        ``{doc_id: text}`` / ``{doc_id: {field: text}}``.
    fields : sequence of str, default ("title", "text")
        The document fields shown to the judge, in order (missing ones are skipped).
    only : iterable of str, optional
        Keep only these documents (a large corpus is read once, kept small).
    needs : mapping, optional
        ``{query_id: need}``: the information needs (preferred to a need column).
    """

    def __init__(
        self,
        queries: PathLike | Mapping[str, str],
        docs: PathLike | Mapping[str, Any],
        *,
        fields: Sequence[str] = ("title", "text"),
        only: Iterable[str] | None = None,
        needs: Mapping[str, str] | None = None,
    ) -> None:
        self.fields = tuple(fields)
        self.needs: dict[str, str] = {}
        if isinstance(queries, Mapping):
            self.queries = dict(queries)
        else:
            self.queries, self.needs = read_query_file(queries)
        self.needs.update(needs or {})
        if isinstance(docs, Mapping):
            self.docs = {
                str(k): ({self.fields[-1] if self.fields else "text": v} if isinstance(v, str)
                         else {f: str(v[f]) for f in self.fields if v.get(f) is not None})
                for k, v in docs.items()
            }
        else:
            self.docs = read_documents(docs, self.fields, only=only)

    def query_text(self, query_id: str) -> str | None:
        """The query's text, or None."""
        return self.queries.get(query_id)

    def query_need(self, query_id: str) -> str | None:
        """The query's information need, or None."""
        return self.needs.get(query_id)

    def document(self, doc_id: str) -> Mapping[str, str] | None:
        """The document's fields, or None."""
        return self.docs.get(doc_id)


def read_query_file(path: PathLike) -> tuple[dict[str, str], dict[str, str]]:
    """A query set -> (``{query_id: text}``, ``{query_id: need}``).

    Read by the one query-set reader, :func:`rankscope.search.queries.read_queries`:
    ``query_id<TAB>text`` lines, a header line naming more columns (the text,
    the ``need``), TREC topics, or ``irds:NAME``. A file without a query
    gives two empty mappings.

    Raises
    ------
    ParseError
        A line with another number of fields, an empty id, or a query id given twice.
    """
    texts: dict[str, str] = {}
    needs: dict[str, str] = {}
    for query in _query_items(path, "text"):
        texts[query.query_id] = query.text
        if query.need:
            needs[query.query_id] = query.need
    return texts, needs


def _query_items(path: PathLike, second: str) -> list[QueryItem]:
    from rankscope.search.queries import read_queries as read_query_set

    return read_query_set(os.fspath(path), second=second, allow_empty=True)


def read_queries(path: PathLike) -> dict[str, str]:
    """``query_id<TAB>text`` lines -> ``{query_id: text}`` (see :func:`read_query_file`).

    Raises
    ------
    ParseError
        A line with another number of fields, an empty id, or a query id given twice.
    """
    return read_query_file(path)[0]


def read_needs(path: PathLike) -> dict[str, str]:
    """``query_id<TAB>need`` lines (a header line optional) -> ``{query_id: need}``.

    Without a header the second column is the need; TREC topics and
    ``irds:NAME`` give their descriptions.

    Raises
    ------
    ParseError
        A line with another number of fields, an empty id, or a query id given twice.
    """
    return {q.query_id: q.need for q in _query_items(path, "need") if q.need}


def read_documents(
    path: PathLike, fields: Sequence[str] = ("title", "text"), *,
    only: Iterable[str] | None = None,
) -> dict[str, dict[str, str]]:
    """A JSONL corpus -> ``{doc_id: {field: text}}`` with the named fields only.

    ``irds:NAME`` reads an ir_datasets collection's documents (looked up by
    id in its document store when ``only`` names them).

    Raises
    ------
    ParseError
        A line that is not a JSON object, or an object without an id.
    """
    if is_irds(path):
        return {doc_id: {f: doc[f] for f in fields if doc.get(f) is not None}
                for doc_id, doc in irds_documents(os.fspath(path), only)}
    wanted = None if only is None else set(only)
    data, source = read_text(path)
    out: dict[str, dict[str, str]] = {}
    for number, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ParseError(f"invalid JSON ({exc.msg})", source=source, line=number,
                             value=raw.decode("utf-8", "replace")) from None
        if not isinstance(record, dict):
            raise ParseError("expected a JSON object per line", source=source, line=number)
        key = next((k for k in DOC_ID_FIELDS if record.get(k) is not None), None)
        if key is None:
            raise ParseError(f"no document id ({', '.join(DOC_ID_FIELDS)})", source=source,
                             line=number, value=raw.decode("utf-8", "replace"))
        doc_id = str(record[key])
        if wanted is not None and doc_id not in wanted:
            continue
        out[doc_id] = {f: _text(record[f]) for f in fields if record.get(f) is not None}
    return out


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text(v) for v in value)
    return json.dumps(value, ensure_ascii=False) if isinstance(value, dict) else str(value)


def pairs_from_runs(
    runs: Sequence[Any], depth: int | None, *, ties: Ties = "trec"
) -> list[Pair]:
    """The union of every run's top ``depth`` pairs, by query, then best rank, then run order."""
    from rankscope.data.tables import as_run
    from rankscope.judgments.coverage import ranked_top_k

    if depth is not None and depth < 1:
        raise InputError(f"depth must be >= 1, not {depth}")
    frames = []
    for i, run in enumerate(runs):
        top = ranked_top_k(as_run(run), depth, ties=ties)
        frames.append(top.with_columns(pl.lit(i).alias("_run")))
    if not frames:
        return []
    merged = (
        pl.concat(frames)
        .sort("query_id", "rank", "_run")
        .unique(subset=["query_id", "doc_id"], keep="first", maintain_order=True)
    )
    return [Pair(q, d) for q, d in merged.select("query_id", "doc_id").iter_rows()]


def read_judged(judged: Any) -> Any:
    """Qrels or judgments given as a path (a rater column: judgments) or a table.

    Returns a :class:`~rankscope.data.tables.Qrels` or a
    :class:`~rankscope.judgments.table.Judgments`.
    """
    from rankscope.data.tables import Qrels
    from rankscope.judgments.relevance import read_relevance
    from rankscope.judgments.table import as_judgments

    if isinstance(judged, str | os.PathLike):  # read once, its columns decide (one reader)
        judged = read_relevance(judged)
    if isinstance(judged, Mapping):  # {query: {doc: grade}}, as qrels are given in Python
        judged = Qrels.from_dict(judged)
    if not isinstance(judged, Qrels):
        judged = as_judgments(judged)
    return judged


def drop_graded(pairs: Sequence[Pair], judged: Any) -> list[Pair]:
    """The pairs without a grade in ``judged`` (qrels or judgments; path or table)."""
    judged = read_judged(judged)
    graded = judged.frame.filter(pl.col("grade").is_not_null()).select("query_id", "doc_id")
    done = set(graded.iter_rows())
    return [p for p in pairs if (p.query_id, p.doc_id) not in done]


def keep_graded(pairs: Sequence[Pair], judged: Any) -> list[Pair]:
    """The pairs that have a grade in ``judged`` (to measure a judge on them)."""
    ungraded = set(drop_graded(pairs, judged))
    return [p for p in pairs if p not in ungraded]


def sample_pairs(pairs: Sequence[Pair], n: int, seed: int = 0) -> list[Pair]:
    """A random sample of ``n`` pairs (all when fewer), in their order; the same each time.

    Examples
    --------
    >>> pairs = [Pair("q1", d) for d in "abcdef"]
    >>> sample_pairs(pairs, 3, seed=1) == sample_pairs(pairs, 3, seed=1)
    True
    >>> len(sample_pairs(pairs, 3)), sample_pairs(pairs, 10) == pairs
    (3, True)
    """
    if n < 1:
        raise InputError(f"the sample size must be >= 1, not {n}")
    if n >= len(pairs):
        return list(pairs)
    chosen = sorted(random.Random(seed).sample(range(len(pairs)), n))
    return [pairs[i] for i in chosen]


def read_pairs(path: PathLike) -> list[Pair]:
    """Pairs from a file: CSV / TSV / JSONL / JSON with query and document columns
    (the names judgments files use, e.g. ``rankscope coverage --ungraded``), or text
    lines ``query_id doc_id``, TREC qrels (``q 0 d grade``) or TREC run lines.

    Raises
    ------
    ParseError
        A line with another number of fields, or no query / document column.
    """
    from rankscope.data.formats import guess_format
    from rankscope.judgments.io import ALIASES

    fmt = guess_format(path)
    data, source = read_text(path)
    if fmt in ("csv", "tsv", "jsonl", "json"):
        try:
            if fmt in ("csv", "tsv"):
                raw = pl.read_csv(data, separator="," if fmt == "csv" else "\t",
                                  infer_schema=False, comment_prefix="#")
            elif fmt == "jsonl":
                raw = pl.DataFrame([json.loads(x) for x in data.splitlines() if x.strip()])
            else:
                raw = pl.DataFrame(json.loads(data))
        except Exception as exc:  # polars and json raise several types on malformed text
            raise ParseError(f"cannot read the pairs ({exc})", source=source) from None
        lowered = {c.lower(): c for c in raw.columns}
        q = next((lowered[a] for a in ALIASES["query_id"] if a in lowered), None)
        d = next((lowered[a] for a in ALIASES["doc_id"] if a in lowered), None)
        if q is None or d is None:
            raise ParseError(f"no query / document columns; found {', '.join(raw.columns)}",
                             source=source)
        frame = raw.select(pl.col(q).cast(pl.String), pl.col(d).cast(pl.String))
        rows = list(frame.iter_rows())
    else:
        rows = []
        for number, line in enumerate(data.decode("utf-8").splitlines(), start=1):
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            if len(parts) == 2:
                rows.append((parts[0], parts[1]))
            elif len(parts) in (4, 6):
                rows.append((parts[0], parts[2]))
            else:
                raise ParseError("expected 'query_id doc_id', a qrels or a run line",
                                 source=source, line=number, value=line)
    return list(dict.fromkeys(Pair(str(a), str(b)) for a, b in rows))
