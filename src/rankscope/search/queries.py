"""Query sets: a TSV file (``query_id<TAB>query text``) or TREC topics.

The one reader of a query set: snapshots, the web app's query sets, implicit
judgments and the LLM judges (:mod:`rankscope.llm_judge.inputs`) all read
through :func:`read_queries` (or :func:`parse_queries` for text already read).

TSV: one query a line; a header line is optional and recognised when its
first field names the id column (``query_id``, ``qid``, ``id``, ``query-id``,
``queryid``, ``_id``, ``topic``, ``topic_id``, ``num``). The query text is
the first column named ``text`` (also ``query``, ``title``, ``query_text``,
``keywords``), else the second column; the information need a grader reads
is the first column named ``need`` (also ``description``,
``information_need``, ``desc``); further columns are named template
parameters (``{{brand}}`` reads column ``brand``). A need left empty is no
need. Blank lines are skipped; a cell a rankscope export neutralised
(``'=...``) reads back as written.

TREC topics: the classic SGML form (``<top> <num> Number: 301 <title> ...
<desc> Description: ... <narr> Narrative: ... </top>``) and the XML form of
the Web tracks (``<topic number="1"><query>...</query><description>...``).
The query text is the title (or ``query``); the description and narrative
make the information need.

``irds:NAME`` reads an ir_datasets collection's queries and needs
(:mod:`rankscope.data.irds`).
"""

from __future__ import annotations

import re
from pathlib import Path

from rankscope.data.delimited import restore_cell
from rankscope.errors import ParseError
from rankscope.search.types import QueryItem

__all__ = ["parse_queries", "read_queries"]

_ID_NAMES = {"query_id", "qid", "id", "query-id", "queryid", "_id", "topic", "topic_id", "num"}
_TEXT_NAMES = {"text", "query", "title", "query_text", "keywords"}
_NEED_NAMES = {"need", "description", "information_need", "desc"}
_TOPIC_FIELDS = ("title", "desc", "narr")


def _tsv(text: str, source: str, second: str = "text") -> list[QueryItem]:
    out: list[QueryItem] = []
    seen: dict[str, int] = {}
    columns: list[str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        # a cell a rankscope export neutralised ('=...) reads back as written
        fields = [restore_cell(f) for f in line.split("\t")]
        if columns is None and not seen and len(fields) >= 2 and (
                fields[0].strip().lower() in _ID_NAMES):
            columns = [f.strip() for f in fields]
            if len({c.lower() for c in columns}) != len(columns):
                raise ParseError("the header names a column twice", source=source, line=number,
                                 value=line)
            continue
        width = len(columns) if columns else 2
        if len(fields) != width:
            expected = (f"query_id<TAB>{second}" if columns is None
                        else f"{width} tab-separated fields as in the header")
            raise ParseError(f"expected {expected}, found {len(fields)} field(s)",
                             source=source, line=number, value=line)
        query_id = fields[0].strip()
        if not query_id:
            raise ParseError("empty query id", source=source, line=number, value=line)
        if query_id in seen:
            raise ParseError(f"query id {query_id!r} already on line {seen[query_id]} "
                             "(an id given twice)", source=source, line=number)
        seen[query_id] = number
        out.append(_item(columns, fields, second))
    return out


def _item(columns: list[str] | None, fields: list[str], second: str) -> QueryItem:
    """One TSV line as a query: its text, its need and its template parameters."""
    names = [c.lower() for c in columns] if columns else ["query_id", second]
    text_at = next((i for i, n in enumerate(names) if i and n in _TEXT_NAMES), None)
    need_at = next((i for i, n in enumerate(names) if i and n in _NEED_NAMES), None)
    if second == "need" and need_at is None:
        need_at = 1
    elif text_at is None and need_at != 1:
        text_at = 1
    params = ({name: value for i, (name, value) in enumerate(zip(columns, fields, strict=True))
               if i and i not in (text_at, need_at)} if columns else {})
    text = fields[text_at].strip() if text_at is not None else ""
    need = fields[need_at].strip() or None if need_at is not None else None
    return QueryItem(fields[0].strip(), text, params, need)


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


def parse_queries(text: str, source: str = "<queries>", *,
                  second: str = "text") -> list[QueryItem]:
    """Parse a query set from text (TSV or TREC topics, told apart by content).

    ``second="need"`` reads a needs file: a TSV's second column, when no
    header names the columns, is the information need (the text is empty).

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
    return _tsv(text, source, second)


def read_queries(path: str | Path, *, second: str = "text",
                 allow_empty: bool = False) -> list[QueryItem]:
    """Read a query set file, ``irds:NAME`` or a path (gzip read when it ends in ``.gz``).

    Parameters
    ----------
    path : str or path
        The file, or ``irds:NAME`` for an ir_datasets collection's queries
        (text and information need; :mod:`rankscope.data.irds`).
    second : {"text", "need"}
        What a header-less TSV's second column holds (:func:`parse_queries`).
    allow_empty : bool
        Return an empty list for a file without a query instead of refusing it.

    Raises
    ------
    FileAccessError
        The file cannot be read, or is not text.
    ParseError
        A line with another number of fields, an empty id, a query id given
        twice, malformed topics; no query (unless ``allow_empty``).
    """
    from rankscope.data._io import read_text
    from rankscope.data.irds import irds_queries, is_irds

    name = str(path)
    if is_irds(name):
        found, source = irds_queries(name)
        if not found and not allow_empty:
            raise ParseError("the collection has no query", source=source)
        return [QueryItem(q.query_id, q.text, {}, q.need) for q in found]
    data, source = read_text(path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ParseError("not UTF-8 text", source=source) from None
    queries = parse_queries(text, source, second=second)
    if not queries and not allow_empty:
        raise ParseError("no query in the file", source=source)
    return queries
