"""A small run's rows matched to their judgments by the ids' Arrow string views.

A view of an id of at most 12 bytes holds the id itself (its length, then
its bytes, zero-padded: :mod:`~rankscope.data.string_views`), so two such
ids are equal exactly when their 16-byte views are. Below
:data:`VIEWED_BELOW` rows a run's documents are matched by a key made from
the views on the calling thread (numpy: no hand-off of a row hash to
polars' thread pool, the fixed cost that dominated a call at 10^4 lines),
probed in a :class:`~rankscope.engine.key_table.KeyTable` of the
judgments' keys made the same way, every hit confirmed on the query index
and the two view words (no gather of strings). The judgments' side is made
once per keyed judgments; judgments holding an id longer than 12 bytes, or
two lines with one key, take the row-hash matching instead.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

from rankscope.data.string_views import INLINE_BYTES, string_views
from rankscope.engine.key_table import KeyTable

__all__ = ["VIEWED_BELOW", "ViewedJudgments", "view_words", "viewed_lookup"]

IntArray = npt.NDArray[np.int64]
UIntArray = npt.NDArray[np.uint64]
QueryArray = npt.NDArray[np.int64] | npt.NDArray[np.int32]

VIEWED_BELOW = 1 << 16
"""Run rows below which :func:`viewed_lookup` matches them (more: the row-hash matching)."""

_C1 = np.uint64(0xBF58476D1CE4E5B9)  # odd multipliers mixing a view's two words
_C2 = np.uint64(0x94D049BB133111EB)
_MIX = np.uint64(0x9E3779B97F4A7C15)  # mixes the query index in
_SHIFT = np.uint64(31)


def view_words(docs: pl.Series) -> npt.NDArray[np.uint64] | None:
    """Each id's view as two 64-bit words.

    Parameters
    ----------
    docs : polars.Series
        A String Series.

    Returns
    -------
    numpy.ndarray or None
        A (len, 2) uint64 array: the length and first 4 bytes, then bytes 4-11
        (native byte order); None without views or with a null (whose view
        holds nothing meaningful).
    """
    if docs.null_count():
        return None
    views = string_views(docs)
    if views is None:
        return None
    return views.view(np.uint64).reshape(-1, 2)


def _keys(query: QueryArray, words: npt.NDArray[np.uint64]) -> UIntArray:
    """A 64-bit key per (query index, view): equal rows, equal keys."""
    with np.errstate(over="ignore"):
        key = words[:, 0] * _C1
        key ^= key >> _SHIFT
        key ^= words[:, 1]
        key *= _C2
        key ^= key >> _SHIFT
        key ^= query.astype(np.uint64) * _MIX
    return key


@dataclass(frozen=True)
class ViewedJudgments:
    """The judgments' view words, each line's query index and their keys' table."""

    query: QueryArray
    words: npt.NDArray[np.uint64]
    table: KeyTable

    @classmethod
    def of(cls, query: QueryArray, docs: pl.Series) -> ViewedJudgments | None:
        """The judgments ``(query, docs)`` keyed by view.

        Parameters
        ----------
        query : numpy.ndarray
            Each judgment line's query index.
        docs : polars.Series
            Each line's document id (a String Series).

        Returns
        -------
        ViewedJudgments or None
            None when an id is longer than 12 bytes (its view is not the id),
            there are no views, or two lines share a key.
        """
        words = view_words(docs) if sys.byteorder == "little" else None
        if words is None:
            return None
        lengths = words[:, 0] & np.uint64(0xFFFFFFFF)  # the low word: the length
        if words.shape[0] and int(lengths.max()) > INLINE_BYTES:
            return None
        keys = _keys(query, words)
        if np.unique(keys).size != keys.size:
            return None  # a key shared by two lines: the table holds distinct keys
        return cls(query, words, KeyTable(keys))


def viewed_lookup(run_q: QueryArray, run_docs: pl.Series,
                  judged: ViewedJudgments) -> tuple[IntArray, IntArray] | None:
    """The run rows found in the judgments and the line of each.

    A run id longer than 12 bytes has a view whose length word no judged id's
    view has: it is never confirmed, as it matches no judgment.

    Parameters
    ----------
    run_q : numpy.ndarray
        Each run row's query index.
    run_docs : polars.Series
        Each run row's document id (a String Series).
    judged : ViewedJudgments
        The judgments keyed by view.

    Returns
    -------
    tuple of numpy.ndarray or None
        The rows found (ascending) and the judgment line of each, as
        :func:`~rankscope.engine.ranking_match.lookup` gives them; None
        when the run's ids have no views.
    """
    words = view_words(run_docs)
    if words is None:
        return None
    at = judged.table.find(_keys(run_q, words))
    hit = np.flatnonzero(at >= 0)
    line = at[hit]
    same = (run_q[hit] == judged.query[line]) & (words[hit, 0] == judged.words[line, 0]) \
        & (words[hit, 1] == judged.words[line, 1])
    return hit[same], line[same]
