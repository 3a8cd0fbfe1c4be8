"""Query sets: a TSV file (``query_id<TAB>query text``) or TREC topics.

TSV: one query a line; a header line is optional and recognised when its
first two fields name the columns (``query_id``/``qid``/``id`` and
``text``/``query``/``title``). With a header, further columns are named
template parameters (``{{brand}}`` reads column ``brand``), except ``need``
(also ``description``, ``information_need``), the information need a grader
reads. Blank lines are skipped.

TREC topics: the classic SGML form (``<top> <num> Number: 301 <title> ...
<desc> Description: ... <narr> Narrative: ... </top>``) and the XML form of
the Web tracks (``<topic number="1"><query>...</query><description>...``).
The query text is the title (or ``query``); the description and narrative
make the information need.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rankscope.data.delimited import restore_cell
from rankscope.errors import FileAccessError, ParseError
from rankscope.search.types import QueryItem

__all__ = ["parse_queries", "read_queries"]

_ID_NAMES = {"query_id", "qid", "id", "query-id", "queryid", "topic", "topic_id", "num"}
_TEXT_NAMES = {"text", "query", "title", "query_text", "keywords"}
_NEED_NAMES = {"need", "description", "information_need", "desc"}
_TOPIC_FIELDS = ("title", "desc", "narr")


def _tsv(text: str, source: str) -> list[QueryItem]:
    lines = text.splitlines()
    out: list[QueryItem] = []
    seen: dict[str, int] = {}
    columns: list[str] | None = None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        # a cell a rankscope export neutralised ('=...) reads back as written
        fields = [restore_cell(f) for f in line.split("\t")]
        if columns is None and not out and not seen and len(fields) >= 2 and (
            fields[0].strip().lower() in _ID_NAMES and fields[1].strip().lower() in _TEXT_NAMES
        ):
            columns = [f.strip() for f in fields]
            if len(set(columns)) != len(columns):
                raise ParseError("the header names a column twice", source=source, line=number,
                                 value=line)
            continue
        width = len(columns) if columns else 2
        if len(fields) != width:
            expected = ("query_id<TAB>text" if columns is None
                        else f"{width} tab-separated fields as in the header")
            raise ParseError(f"expected {expected}, found {len(fields)} field(s)",
                             source=source, line=number, value=line)
        query_id = fields[0].strip()
        if not query_id:
            raise ParseError("empty query id", source=source, line=number, value=line)
        if query_id in seen:
            raise ParseError(f"query id {query_id!r} already on line {seen[query_id]}",
                             source=source, line=number)
        seen[query_id] = number
        params: dict[str, Any] = {}
        need: str | None = None
        for name, value in zip((columns or [])[2:], fields[2:], strict=True):
            if name.lower() in _NEED_NAMES:
                need = value.strip() or None
            else:
                params[name] = value
        out.append(QueryItem(query_id, fields[1].strip(), params, need))
    return out


def _clean(text: str | None) -> str:
    return " ".join((text or "").split())


def _sgml_topics(text: str, source: str) -> list[QueryItem]:
    out: list[QueryItem] = []
    seen: set[str] = set()
    for block in re.findall(r"<top>(.*?)</top>", text, flags=re.DOTALL | re.IGNORECASE):
        parts: dict[str, str] = {}
        for tag, body in re.findall(r"<(num|title|desc|narr)>(.*?)(?=<\w+>|\Z)", block,
                                    flags=re.DOTALL | re.IGNORECASE):
            parts[tag.lower()] = body
        num = re.sub(r"(?i)^\s*number:\s*", "", parts.get("num", "")).strip()
        if not num:
            raise ParseError("a <top> without <num>", source=source, value=block[:80])
        if num in seen:
            raise ParseError(f"topic {num!r} appears twice", source=source)
        seen.add(num)
        title = _clean(re.sub(r"(?i)^\s*topic:\s*", "", parts.get("title", "")))
        desc = _clean(re.sub(r"(?i)^\s*description:\s*", "", parts.get("desc", "")))
        narr = _clean(re.sub(r"(?i)^\s*narrative:\s*", "", parts.get("narr", "")))
        need = "\n\n".join(p for p in (desc, narr) if p) or None
        out.append(QueryItem(num, title, {}, need))
    if not out:
        raise ParseError("no <top> ... </top> topic found", source=source)
    return out


def _xml_topics(text: str, source: str) -> list[QueryItem]:
    import xml.etree.ElementTree as ET

    try:
        whole = text.lstrip().startswith(("<topics", "<?xml"))
        root = ET.fromstring((text if whole else f"<topics>{text}</topics>").encode("utf-8"))
    except ET.ParseError as exc:
        raise ParseError(f"not well-formed XML topics ({exc})", source=source) from None
    out: list[QueryItem] = []
    seen: set[str] = set()
    for topic in root.iter("topic"):
        num = (topic.get("number") or topic.get("id") or "").strip()
        if not num:
            raise ParseError("a <topic> without a number attribute", source=source)
        if num in seen:
            raise ParseError(f"topic {num!r} appears twice", source=source)
        seen.add(num)
        query = topic.findtext("query") or topic.findtext("title") or ""
        desc = _clean(topic.findtext("description"))
        narr = _clean(topic.findtext("narrative"))
        need = "\n\n".join(p for p in (desc, narr) if p) or None
        out.append(QueryItem(num, _clean(query), {}, need))
    if not out:
        raise ParseError("no <topic> found", source=source)
    return out


def parse_queries(text: str, source: str = "<queries>") -> list[QueryItem]:
    """Parse a query set from text (TSV or TREC topics, told apart by content).

    Examples
    --------
    >>> [(q.query_id, q.text) for q in parse_queries("q1\\tred shoes\\nq2\\tblue hat\\n")]
    [('q1', 'red shoes'), ('q2', 'blue hat')]
    """
    head = text.lstrip()[:200].lower()
    if head.startswith("<top>"):
        return _sgml_topics(text, source)
    if head.startswith(("<topics", "<topic ", "<topic>", "<?xml")):
        return _xml_topics(text, source)
    return _tsv(text, source)


def read_queries(path: str | Path) -> list[QueryItem]:
    """Read a query set file (raises FileAccessError, ParseError).

    ``irds:NAME`` reads an ir_datasets collection's queries (text and
    information need; :mod:`rankscope.data.irds`).
    """
    name = str(path)
    from rankscope.data.irds import irds_queries, is_irds

    if is_irds(name):
        found, source = irds_queries(name)
        if not found:
            raise ParseError("the collection has no query", source=source)
        return [QueryItem(q.query_id, q.text, {}, q.need) for q in found]
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise FileAccessError(f"cannot read the queries ({exc.strerror})", source=name) from None
    if b"\x00" in raw[:4096]:
        raise FileAccessError("a binary file, not a query list", source=name)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ParseError("not UTF-8 text", source=name) from None
    queries = parse_queries(text, name)
    if not queries:
        raise ParseError("no query in the file", source=name)
    return queries
