"""JSON as rankscope reads it: no key silently given twice, and lines for messages.

Python's :func:`json.loads` keeps the last of two equal keys in one object,
so ``{"q1": {"d1": 1, "d1": 0}}`` would quietly become ``{"q1": {"d1": 0}}``.
:func:`loads_keeping_duplicates` parses into :class:`KeyedDict` objects that
remember every repeated key, for the reader to refuse with a line number
from :func:`find_key_line`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

__all__ = ["KeyedDict", "find_key_line", "loads_keeping_duplicates"]


class KeyedDict(dict[str, Any]):
    """A JSON object; ``duplicates`` lists the keys it had more than once, in order."""

    duplicates: list[str]


def _pairs(pairs: list[tuple[str, Any]]) -> KeyedDict:
    out = KeyedDict(pairs)
    out.duplicates = []
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen and key not in out.duplicates:
                out.duplicates.append(key)
            seen.add(key)
    return out


def loads_keeping_duplicates(data: bytes | str) -> Any:
    """:func:`json.loads`, with every object a :class:`KeyedDict`."""
    return json.loads(data, object_pairs_hook=_pairs)


def _key_pattern(key: str, *, opens_object: bool = False) -> re.Pattern[bytes]:
    quoted = re.escape(json.dumps(key, ensure_ascii=False).encode("utf-8"))
    return re.compile(quoted + rb"\s*:" + (rb"\s*\{" if opens_object else b""))


def find_key_line(text: bytes, keys: Sequence[str], *, occurrence: int = 1) -> int | None:
    """The 1-based line of a key in JSON text, for messages (None when not found).

    ``keys`` is ``(query,)`` for a top-level key or ``(query, doc)`` for a
    key inside the query's object; ``occurrence=2`` finds the second time
    the last key appears (a key given twice). Keys written with escapes the
    writer did not need (``"\\u0064"`` for ``d``) are not found.
    """
    start = 0
    *outer, last = keys
    for key in outer:
        found = _key_pattern(key, opens_object=True).search(text, start)
        if found is None:
            return None
        start = found.end()
    pattern = _key_pattern(last, opens_object=not outer and occurrence > 1)
    position = 0
    for _ in range(max(occurrence, 1)):
        match = pattern.search(text, start)
        if match is None:
            return None
        position, start = match.start(), match.end()
    return text.count(b"\n", 0, position) + 1
