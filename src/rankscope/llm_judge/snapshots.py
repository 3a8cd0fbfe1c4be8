"""Snapshots as what an LLM judge grades: pairs, queries and documents from the store.

A snapshot (``rankscope snapshot --store DB``) keeps, for each query of its
set, the query's text and information need, and for each result its rank,
document id and what a grader sees of it: title, snippet, URL, image and
other display fields. :class:`SnapshotTexts` reads one or more snapshots
and serves them to a judging run: the pairs are the snapshots' top k (their
union, by query, then best rank, then snapshot order), the queries come with
their needs, and each document is shown as the snapshot recorded it *for that
query* (a highlighted snippet depends on the query).

The store is only read here, through :mod:`rankscope.store.snapshots`; it
needs the ``store`` extra, imported when a snapshot is asked for.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankscope.errors import FileAccessError, InputError, OptionError
from rankscope.llm_judge.inputs import Pair

if TYPE_CHECKING:
    from rankscope.store.db import Store

__all__ = ["DISPLAY_FIELDS", "SnapshotTexts"]

DISPLAY_FIELDS = ("title", "snippet", "url")
"""The display fields shown to the judge by default, then every other field of the hit
(the image is left out unless asked for: a text model cannot look at it)."""


def _text(value: Any) -> str | None:
    """A display value as text: a list of plain values joined by commas, else JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return ", ".join(v if isinstance(v, str) else json.dumps(v) for v in value)
    return json.dumps(value, ensure_ascii=False)


def _shown(hit: Mapping[str, Any], fields: Sequence[str] | None) -> dict[str, str]:
    """The hit's display fields as the judge sees them (name -> text, in order)."""
    extra = dict(hit.get("fields") or {})
    every: dict[str, Any] = {"title": hit.get("title"), "snippet": hit.get("snippet"),
                             "url": hit.get("url"), "image": hit.get("image")}
    names = list(fields) if fields is not None else [
        *DISPLAY_FIELDS, *[k for k in extra if k not in every]]
    out: dict[str, str] = {}
    for name in names:
        value = _text(every[name] if name in every else extra.get(name))
        if value is not None and value.strip():
            out[name] = value
    return out


def _open(store: Store | str | os.PathLike[str]) -> tuple[Store, bool]:
    """The store, and whether we opened it (and so must close it)."""
    from rankscope.store.db import Store as StoreType

    if isinstance(store, StoreType):
        return store, False
    from rankscope.store.db import open_store

    target = os.fspath(store)
    if "://" not in target and not Path(target).expanduser().is_file():
        raise FileAccessError("no such snapshot store (take a snapshot with rankscope "
                              "snapshot ... --store DB first)", source=target)
    return open_store(target), True


class SnapshotTexts:
    """Queries, needs, documents and pairs of one or more stored snapshots.

    Parameters
    ----------
    store : Store, path or URL
        The snapshot store (a path must exist; it is opened, read and closed).
    snapshots : sequence of str or int
        Snapshots by id (``3``, ``"#3"``) or name (the newest of that name).
    fields : sequence of str, optional
        The display fields shown to the judge, in order: ``title``,
        ``snippet``, ``url``, ``image`` or the name of another field of the
        hits. Default: :data:`DISPLAY_FIELDS`, then every other field.
    partial : bool, default False
        Accept a snapshot that is not complete (failed, interrupted, still
        running): its recorded queries only.

    Raises
    ------
    StoreError
        A snapshot is not in the store.
    OptionError
        A snapshot is not complete and ``partial`` is not set.
    InputError
        Two snapshots give one query id different texts.
    """

    def __init__(
        self,
        store: Store | str | os.PathLike[str],
        snapshots: Sequence[str | int],
        *,
        fields: Sequence[str] | None = None,
        partial: bool = False,
    ) -> None:
        from rankscope.store.snapshots import read_snapshot

        if not snapshots:
            raise OptionError("name at least one snapshot")
        opened, close = _open(store)
        self.labels: list[str] = []
        self.queries: dict[str, str] = {}
        self.needs: dict[str, str] = {}
        self._order: dict[str, int] = {}
        self._shown: dict[tuple[str, str], dict[str, str]] = {}
        self._docs: dict[str, dict[str, str]] = {}
        self._ranked: list[tuple[int, int, int, str, str]] = []
        try:
            for index, ref in enumerate(snapshots):
                contents = read_snapshot(opened, str(ref))
                info = contents.info
                label = f"#{info.id} {info.name}"
                if not contents.whole and not partial:
                    raise OptionError(
                        f"snapshot {label} is {info.status} ({info.n_done} of "
                        f"{info.n_queries} queries): grade it anyway with --partial "
                        "(python: partial=True)")
                self.labels.append(label)
                for record in contents.queries:
                    known = self.queries.get(record.query_id)
                    if known is not None and known != record.text:
                        raise InputError(
                            f"query {record.query_id} is {known!r} in one snapshot and "
                            f"{record.text!r} in {label}: grade them apart")
                    self.queries[record.query_id] = record.text
                    self._order.setdefault(record.query_id, len(self._order))
                    if record.need and record.query_id not in self.needs:
                        self.needs[record.query_id] = record.need
                for hit in (h for hits in contents.hits.values() for h in hits):
                    qid, doc = str(hit["query_id"]), str(hit["doc_id"])
                    shown = _shown(hit, fields)
                    self._shown.setdefault((qid, doc), shown)
                    self._docs.setdefault(doc, shown)
                    self._ranked.append((self._order[qid], int(hit["rank"]), index, qid, doc))
        finally:
            if close:
                opened.close()

    def pairs(self, depth: int | None = 10) -> list[Pair]:
        """The union of the snapshots' top ``depth`` (None: every hit), each pair once."""
        if depth is not None and depth < 1:
            raise InputError(f"depth must be >= 1, not {depth}")
        out = dict.fromkeys(Pair(q, d) for _, rank, _, q, d in sorted(self._ranked)
                            if depth is None or rank <= depth)
        return list(out)

    def query_text(self, query_id: str) -> str | None:
        """The query's text, or None."""
        return self.queries.get(query_id)

    def query_need(self, query_id: str) -> str | None:
        """The query's information need as the store keeps it, or None."""
        return self.needs.get(query_id)

    def document(self, doc_id: str) -> Mapping[str, str] | None:
        """The document as first shown in the snapshots, or None."""
        return self._docs.get(doc_id)

    def pair_document(self, query_id: str, doc_id: str) -> Mapping[str, str] | None:
        """The document as shown for this query (else as shown for another), or None."""
        return self._shown.get((query_id, doc_id)) or self._docs.get(doc_id)
