"""Public test collections by name, through ``ir_datasets``: ``irds:NAME`` inputs.

Wherever rankscope reads qrels, queries or documents, an input spelled
``irds:msmarco-passage/trec-dl-2019/judged`` is read through the optional
``ir_datasets`` package (``pip install 'rankscope[irds]'``) from its local
cache (``$IR_DATASETS_HOME``, by default ``~/.ir_datasets``). rankscope never
downloads: when a file the collection needs is not in the cache, the error
names each file, where ir_datasets looks for it and where it comes from, and
nothing is read (exit code 2).

How ir_datasets' records map to rankscope's:

- **qrels**: ``query_id``, ``doc_id`` and ``relevance`` (the grade, kept as
  given: negative grades stay negative, as in the TREC file); every other
  field (``iteration``, ``method``, ``iprob``, ``quality``...) is left out.
  ``irds:NAME#FIELD`` takes the grade from another numeric field (Touché's
  ``quality``, CLEF eHealth's ``trustworthiness``). Qrels with a
  ``subtopic_id`` (the diversity tasks) are subtopic qrels: the intent-aware
  measures read them as they are, the others see a document's best grade
  over the subtopics; qrels judging passages (``start``/``span_start``) give
  a document its best passage's grade.
- **queries**: the id, the text ir_datasets calls the query's default text
  (the title of TREC topics) and, as the information need a grader reads,
  the ``description`` and ``narrative`` when the query has them.
- **documents**: the id and every text field of the record; ``text`` falls
  back to the document's default text when it has no such field.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from rankscope.data.irds_prefix import PREFIX, is_irds
from rankscope.errors import (
    DependencyError,
    FileAccessError,
    ForbiddenError,
    InputError,
    OptionError,
    ParseError,
    RankscopeError,
)

__all__ = [
    "PREFIX",
    "IrdsQuery",
    "check_allowed",
    "check_cached",
    "irds_documents",
    "irds_name",
    "irds_qrels",
    "irds_queries",
    "is_irds",
    "missing_files",
]

_SPANS = ("start", "span_start")


def irds_name(path: str) -> tuple[str, str | None]:
    """``irds:NAME[#FIELD]`` -> (NAME, FIELD or None).

    Examples
    --------
    >>> irds_name("irds:argsme/2020-04-01/touche-2020-task-1#quality")
    ('argsme/2020-04-01/touche-2020-task-1', 'quality')
    """
    name, _, fragment = path[len(PREFIX):].strip().partition("#")
    if not name.strip():
        raise OptionError(f"{path!r} names no collection: irds:NAME, e.g. "
                          "irds:msmarco-passage/trec-dl-2019/judged")
    return name.strip(), fragment.strip() or None


def check_allowed(path: str, allowed: Sequence[str]) -> None:
    """Refuse ``irds:NAME`` unless NAME matches one of the operator's patterns.

    The judging app lets a web user name a collection only where the operator
    allowed it (``rankscope serve --irds 'beir/*'``): reading one may build
    large files in ir_datasets' cache.

    Examples
    --------
    >>> check_allowed("irds:beir/scifact/test", ["beir/*"])
    >>> try:
    ...     check_allowed("irds:msmarco-passage", ["beir/*"])
    ... except ForbiddenError as exc:
    ...     print(exc)
    the collection 'msmarco-passage' is not among those this server allows (beir/*)
    """
    name = irds_name(path)[0]
    if not allowed:
        raise ForbiddenError("ir_datasets collections are not enabled on this server (the "
                             "operator allows them with rankscope serve --irds PATTERN)")
    if not any(fnmatch.fnmatchcase(name, pattern) for pattern in allowed):
        raise ForbiddenError(f"the collection {name!r} is not among those this server allows "
                             f"({', '.join(allowed)})")


def _module() -> Any:
    try:
        import ir_datasets
    except ImportError:
        raise DependencyError("ir_datasets", "irds", "reading irds: collections") from None
    return ir_datasets


def _load(path: str, entity: str) -> tuple[Any, str]:
    """The dataset of ``irds:NAME`` and its display name; it must provide ``entity``."""
    irds = _module()
    name = irds_name(path)[0]
    try:
        dataset = irds.load(name)
    except KeyError:
        known = list(irds.registry)
        import difflib  # only for an unknown name: not on every run file's read

        close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else \
            " (ir_datasets lists them: ir_datasets list)"
        raise InputError(f"no ir_datasets collection {name!r}{hint}", source=path) from None
    if not dataset.has(entity):
        provides = [e for e in ("docs", "queries", "qrels") if dataset.has(e)]
        raise InputError(f"the collection has no {entity} (it provides "
                         f"{', '.join(provides) or 'nothing rankscope reads'})",
                         source=f"{PREFIX}{name}")
    return dataset, f"{PREFIX}{name}"


# -- what is missing from the cache, and never the network --------------------


@dataclass(frozen=True)
class NeededFile:
    """A file ir_datasets needs: where it looks for it, and where it would come from."""

    paths: tuple[str, ...]
    urls: tuple[str, ...]
    instructions: str | None = None

    def describe(self) -> str:
        """One clause for the error message."""
        where = " or ".join(self.paths)
        if self.urls:
            mirrors = f" (mirror {', '.join(self.urls[1:])})" if len(self.urls) > 1 else ""
            origin = f"the file from {self.urls[0]}{mirrors}"
        else:
            origin = "a file it cannot download"
        text = f"{origin}, looked for at {where}" if where else f"{origin}, streamed each time"
        if self.instructions and not self.urls:
            text += f" ({' '.join(self.instructions.split())[:300]})"
        return text


def _children(obj: Any) -> Iterator[Any]:
    values: Iterable[Any]
    if isinstance(obj, Mapping):
        values = obj.values()
    elif isinstance(obj, list | tuple | set | frozenset):
        values = obj
    else:
        values = vars(obj).values() if hasattr(obj, "__dict__") else ()
    for value in values:
        module = type(value).__module__
        if isinstance(value, Mapping | list | tuple | set | frozenset) or \
                module.startswith("ir_datasets"):
            yield value


def missing_files(handler: Any) -> list[NeededFile]:
    """The files behind an ir_datasets handler that are not on this machine.

    Walks the handler's components (caches, extractions, downloads): a
    cached or extracted file that exists stops the walk there; a download is
    missing when neither its cache path nor ir_datasets' local copy exists.
    """
    util = _module().util
    seen: set[int] = set()
    out: list[NeededFile] = []

    def walk(obj: Any) -> None:
        if id(obj) in seen:
            return
        seen.add(id(obj))
        if isinstance(obj, util.Cache):
            if not Path(obj._path).exists():
                walk(obj._streamer)
            return
        if isinstance(obj, util.TarExtractAll | util.ZipExtractCache):
            if not os.path.exists(getattr(obj, "_extract_path", "")):
                walk(obj._streamer)
            return
        if isinstance(obj, util.Download):
            local = [m for m in obj.mirrors if isinstance(m, util.LocalDownload)]
            cache = obj._cache_path
            if (cache and os.path.exists(cache)) or any(Path(m._path).exists() for m in local):
                return
            paths = ([str(cache)] if cache else []) + [str(m._path) for m in local]
            urls = [m.url for m in obj.mirrors if isinstance(getattr(m, "url", None), str)]
            message = next((m._message for m in local if m._message), None)
            out.append(NeededFile(tuple(paths), tuple(urls), message))
            return
        if isinstance(obj, util.LocalDownload):
            if not Path(obj._path).exists():
                out.append(NeededFile((str(obj._path),), (), obj._message))
            return
        if isinstance(obj, util.BaseDownload):  # streamed from the network each time
            url = getattr(obj, "url", None)
            out.append(NeededFile((), (url,) if isinstance(url, str) else ()))
            return
        for child in _children(obj):
            walk(child)

    walk(handler)
    return out


class _NetworkAttempt(Exception):
    """ir_datasets tried to download: rankscope stops it (never the network)."""

    def __init__(self, url: str | None) -> None:
        self.url = url
        super().__init__(f"rankscope does not download ({url})")


def _remote_classes(util: Any) -> list[type]:
    found: list[type] = []
    pending = list(util.BaseDownload.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if not issubclass(cls, util.LocalDownload):
            found.append(cls)
    return found


_GUARD = threading.Lock()
_guarded: list[tuple[type, Any]] = []
_depth = 0


def _refuse(self: Any) -> Any:
    raise _NetworkAttempt(getattr(self, "url", None) or getattr(self, "uri", None))


@contextlib.contextmanager
def _no_network() -> Iterator[None]:
    """Every ir_datasets download raises :class:`_NetworkAttempt` instead of connecting.

    The download classes' ``stream`` is replaced while any read is under way
    (a count, so reads on several threads share one replacement).
    """
    global _depth
    util = _module().util
    with _GUARD:
        if _depth == 0:
            for cls in _remote_classes(util):
                if "stream" in vars(cls):
                    _guarded.append((cls, vars(cls)["stream"]))
                    cls.stream = _refuse  # type: ignore[attr-defined]
        _depth += 1
    try:
        yield
    finally:
        with _GUARD:
            _depth -= 1
            if _depth == 0:
                for cls, method in _guarded:
                    cls.stream = method  # type: ignore[attr-defined]
                _guarded.clear()


def _attempted(exc: BaseException) -> bool:
    pending: list[Any] = [exc]
    seen: set[int] = set()
    while pending:
        item = pending.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, _NetworkAttempt):
            return True
        if isinstance(item, BaseException):
            pending += [item.__cause__, item.__context__, *item.args]
        elif isinstance(item, list | tuple):
            pending += list(item)
    return False


def _not_cached(source: str, entity: str, needed: list[NeededFile]) -> FileAccessError:
    home = os.environ.get("IR_DATASETS_HOME") or str(Path.home() / ".ir_datasets")
    listing = "; ".join(n.describe() for n in needed) or "a file it could not name"
    return FileAccessError(
        f"the {entity} are not in ir_datasets' cache ({home}; IR_DATASETS_HOME moves it) and "
        f"rankscope never downloads: ir_datasets needs {listing}. Fetch them on a machine with "
        f"network access (ir_datasets export {source[len(PREFIX):]} {entity} > /dev/null) "
        "and copy them to the paths named", source=source)


def check_cached(path: str, entity: str) -> None:
    """Refuse ``irds:NAME`` when its ``entity`` (``docs``, ``queries``, ``qrels``) is not all
    in ir_datasets' cache, reading nothing: what saving an endpoint checks, so a missing
    file is said when the curator names the collection, not at the first run.

    Raises
    ------
    InputError
        No such collection, or it has no ``entity``.
    FileAccessError
        A file of it is not in the cache (names each one and where it goes).
    """
    dataset, source = _load(path, entity)
    needed = missing_files(getattr(dataset, f"{entity}_handler")())
    if needed:
        raise _not_cached(source, entity, needed)


@contextlib.contextmanager
def _offline(dataset: Any, source: str, entity: str) -> Iterator[None]:
    """Read ``entity`` only from the cache: missing files, or a download tried, stop it."""
    handler = getattr(dataset, f"{entity}_handler")()
    needed = missing_files(handler)
    if needed:
        raise _not_cached(source, entity, needed)
    try:
        with _no_network():
            yield
    except RankscopeError:
        raise
    except Exception as exc:
        if _attempted(exc):
            raise _not_cached(source, entity, missing_files(handler)) from None
        # a malformed file in the cache is bad input, not a defect of rankscope's
        raise ParseError(f"ir_datasets could not read the {entity} "
                         f"({type(exc).__name__}: {exc})", source=source) from None


# -- qrels ----------------------------------------------------------------------


def _grade(value: Any, source: str, row: int, field: str) -> float:
    if isinstance(value, bool) or value is None:
        raise ParseError(f"{field} of record {row + 1} is not a number", source=source,
                         value=repr(value))
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ParseError(f"{field} of record {row + 1} is not a number", source=source,
                         value=repr(value)) from None


def irds_qrels(path: str) -> tuple[pl.DataFrame, str]:
    """The qrels of ``irds:NAME[#FIELD]``: ``query_id, doc_id, grade`` (and ``subtopic_id``).

    The grade is ``relevance`` or FIELD; see the module docstring for every
    field. Returns the frame and the display name.

    Raises
    ------
    FileAccessError
        A file of the qrels is not in ir_datasets' cache (names each one).
    InputError, OptionError
        No such collection, no qrels, FIELD not a field of its qrels.
    """
    dataset, source = _load(path, "qrels")
    field = irds_name(path)[1] or "relevance"
    fields = tuple(dataset.qrels_cls()._fields)
    if field not in fields or field in ("query_id", "doc_id", "subtopic_id", "iteration"):
        grades = [f for f in fields if f not in ("query_id", "doc_id", "subtopic_id",
                                                 "iteration", *_SPANS)]
        raise OptionError(f"{source}: the qrels have no grade field {field!r}; their fields: "
                          f"{', '.join(fields)} (grades: {', '.join(grades)})")
    subtopics = "subtopic_id" in fields
    queries: list[str] = []
    docs: list[str] = []
    grades_read: list[float] = []
    topics: list[str] = []
    with _offline(dataset, source, "qrels"):
        for row, qrel in enumerate(dataset.qrels_iter()):
            queries.append(str(qrel.query_id))
            docs.append(str(qrel.doc_id))
            grades_read.append(_grade(getattr(qrel, field), source, row, field))
            if subtopics:
                topics.append(str(qrel.subtopic_id))
    frame = pl.DataFrame({"query_id": queries, "doc_id": docs, "grade": grades_read},
                         schema={"query_id": pl.String, "doc_id": pl.String,
                                 "grade": pl.Float64})
    if subtopics:
        frame = frame.with_columns(pl.Series("subtopic_id", topics, pl.String))
    elif any(s in fields for s in _SPANS):
        # passage judgments: a document is as relevant as its best passage
        frame = frame.group_by("query_id", "doc_id", maintain_order=True).agg(
            pl.col("grade").max())
    return frame, source


# -- queries --------------------------------------------------------------------


@dataclass(frozen=True)
class IrdsQuery:
    """A query of a collection: id, text and the information need (or None)."""

    query_id: str
    text: str
    need: str | None


def _query_text(query: Any) -> str:
    method = getattr(query, "default_text", None)
    text = method() if callable(method) else getattr(query, "text", None) or \
        getattr(query, "title", "")
    return " ".join(str(text).split())


def irds_queries(path: str) -> tuple[list[IrdsQuery], str]:
    """The queries of ``irds:NAME`` (see the module docstring) and the display name.

    Raises
    ------
    FileAccessError
        A file of the queries is not in ir_datasets' cache (names each one).
    ParseError
        A query id given twice.
    """
    dataset, source = _load(path, "queries")
    out: list[IrdsQuery] = []
    seen: set[str] = set()
    with _offline(dataset, source, "queries"):
        for query in dataset.queries_iter():
            qid = str(query.query_id)
            if qid in seen:
                raise ParseError(f"query id {qid!r} given twice", source=source)
            seen.add(qid)
            parts = [" ".join(str(getattr(query, f) or "").split())
                     for f in ("description", "narrative") if hasattr(query, f)]
            need = "\n\n".join(p for p in parts if p) or None
            out.append(IrdsQuery(qid, _query_text(query), need))
    return out, source


# -- documents ------------------------------------------------------------------


def _fields(doc: Any) -> dict[str, str]:
    """A document's text fields (every field holding text), ``text`` always present."""
    out = {name: value for name, value in doc._asdict().items()
           if name != "doc_id" and isinstance(value, str)}
    if "text" not in out:
        method = getattr(doc, "default_text", None)
        out["text"] = method() if callable(method) else " ".join(out.values())
    return out


def irds_documents(path: str, only: Iterable[str] | None = None
                   ) -> Iterator[tuple[str, dict[str, str]]]:
    """``(doc_id, {field: text})`` of the collection's documents (``only`` these ids).

    With ``only``, documents are looked up in ir_datasets' document store
    (built in its cache on first use); without, every document is read in
    the collection's order.

    Raises
    ------
    FileAccessError
        A file of the documents is not in ir_datasets' cache (names each one).
    """
    dataset, source = _load(path, "docs")
    with _offline(dataset, source, "docs"):
        if only is not None:
            wanted = list(dict.fromkeys(only))
            found = dataset.docs_store().get_many(wanted) if wanted else {}
            for doc_id in wanted:
                if doc_id in found:
                    yield doc_id, _fields(found[doc_id])
            return
        for doc in dataset.docs_iter():
            yield str(doc.doc_id), _fields(doc)
