"""Import and export of an evaluation's grades, qrels and run, in rankscope's and other tools'
formats.

Exports (each records the scale and the rule where the format has room: a
``#`` comment line in CSV/TSV and TREC files, fields of every JSONL record, a
``rankscope`` key in RRE's JSON):

- ``grades.csv`` / ``grades.tsv`` / ``grades.jsonl``: every grader's grade
  (the judgments module's format, ``query_id, doc_id, rater, grade``; an empty
  grade is "can't tell");
- ``qrels.txt``: TREC qrels of the aggregated grades on the evaluation's scale
  (results aggregating to null are left out); a metric computed on another
  scale (a binary metric of a graded evaluation goes through the
  transformer to ``binary`` before the grades are aggregated) is not
  reproduced by it: ``qrels-SCALE.txt`` holds the qrels of that scale, and
  each file's header says which metrics it reproduces with which command
  (:func:`qrels_exports`);
- ``run.txt``: the snapshot as a TREC run (as ``rankscope snapshot -o`` writes it);
- ``quepid.csv``: Quepid's ratings CSV (``query,docid,rating``, aggregated);
- ``rre.json``: Rated Ranking Evaluator's ratings (topics, query groups,
  ``relevant_documents`` with gains);
- ``queries.tsv``: the queries that have no grade yet;
- ``holes.csv``: the ungraded positions of the top depth, the next batch
  first (``query_id, query, need, rank, doc_id, title, url``; ``limit``
  keeps the first N).

Imports are read with the library's strict readers (grades: CSV, TSV,
JSONL, JSON; TREC qrels as one rater; Quepid's CSV; RRE's JSON), checked
whole (scale, query ids, sizes) before anything is written, and written in
one transaction: a bad line is reported with its number and nothing is
imported.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import tempfile
from typing import TYPE_CHECKING, Any

import polars as pl
from sqlalchemy import select

from rankscope.data.delimited import neutralise_cell, neutralise_frame, restore_cell
from rankscope.errors import InputError, OptionError, ParseError
from rankscope.services.campaign_data import EvaluationData, holes_frame, load_data, qrels_exports
from rankscope.services.campaigns import ensure_items, evaluation_row, query_key
from rankscope.store.models import Endpoint, utcnow
from rankscope.store.models_app import Evaluation, Grade, Rater

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from rankscope.services.accounts import Actor
    from rankscope.store.db import Store

__all__ = ["EXPORTS", "IMPORTS", "MAX_UPLOAD", "export", "exports_of", "import_grades",
           "qrels_exports"]

MAX_UPLOAD = 20 * 1024 * 1024
"""The largest file an import accepts (20 MiB)."""

EXPORTS = {
    "grades.csv": "text/csv", "grades.tsv": "text/tab-separated-values",
    "grades.jsonl": "application/x-ndjson", "qrels.txt": "text/plain", "run.txt": "text/plain",
    "quepid.csv": "text/csv", "rre.json": "application/json", "queries.tsv": "text/plain",
    "holes.csv": "text/csv",
}
_QRELS_OF_SCALE = re.compile(r"^qrels-([a-z0-9_-]+)\.txt$")
IMPORTS = ("grades", "trec", "quepid", "rre")


def _rule(ev: Evaluation) -> str:
    return (f"rankscope evaluation #{ev.id} {ev.name!r}: scale {ev.scale}, rule {ev.strategy}, "
            f"{ev.grades_wanted} grade(s) wanted per result, unjudged "
            f"{'null' if ev.null_rules else 'nonrelevant'}")


def _aggregated(data: EvaluationData) -> pl.DataFrame:
    from rankscope.judgments.aggregate import aggregate_frame

    if data.judgments.frame.height == 0:
        return pl.DataFrame(schema={"query_id": pl.String, "doc_id": pl.String,
                                    "grade": pl.Float64})
    return aggregate_frame(data.judgments, data.strategy, scale=data.scale).select(
        "query_id", "doc_id", "grade")


def _number(value: float) -> str:
    return f"{value:g}" if float(value).is_integer() else repr(float(value))


def _rre(ev: Evaluation, data: EvaluationData, endpoint: Endpoint | None) -> bytes:
    grades = _aggregated(data).drop_nulls("grade")
    by_query: dict[str, dict[str, Any]] = {}
    for q, d, g in grades.iter_rows():
        by_query.setdefault(q, {})[d] = {"gain": int(g) if float(g).is_integer() else g}
    settings = endpoint.config if endpoint is not None else {}
    topics = [{"description": q["need"] or q["text"],
               "query_groups": [{"name": q["query_id"],
                                 "queries": [{"template": "only_q.json",
                                              "placeholders": {"$query": q["text"]}}],
                                 "relevant_documents": by_query.get(q["query_id"], {})}]}
              for q in data.queries]
    doc = {"index": settings.get("index") or settings.get("collection") or (
        endpoint.name if endpoint else ""), "id_field": settings.get("id_field", "id"),
        "rankscope": {"scale": ev.scale, "rule": ev.strategy, "evaluation": ev.id},
        "topics": topics}
    return (json.dumps(doc, indent=1, ensure_ascii=False) + "\n").encode()


def exports_of(store: Store, actor: Actor, evaluation_id: int) -> list[str]:
    """The names of the exports an evaluation has (the qrels of each scale included)."""
    with store.read() as session:
        ev = evaluation_row(session, actor, evaluation_id, "curator")
        data = load_data(session, ev)
    names = list(EXPORTS)
    at = names.index("qrels.txt") + 1
    extra = [q["name"] for q in qrels_exports(data) if q["name"] != "qrels.txt"]
    return names[:at] + extra + names[at:]


def _qrels(ev: Evaluation, data: EvaluationData, name: str) -> bytes:
    from rankscope.data.trec_writer import format_trec_qrels

    exports = {q["name"]: q for q in qrels_exports(data)}
    if name not in exports:
        scales = ", ".join(exports)
        raise OptionError(f"no metric of evaluation #{ev.id} is computed on that scale; "
                          f"its qrels are {scales}")
    wanted = exports[name]
    plan = data.plan()
    group = next((g for g in plan.groups
                  if g.scale is not None and g.scale.name == wanted["scale"]), None)
    frame = group.qrels.frame if group is not None else _aggregated(data)
    lines = ["# " + _rule(ev)]
    if wanted["metrics"]:
        lines.append(f"# {wanted['scale']} scale: reproduces {', '.join(wanted['metrics'])} "
                     f"with: {wanted['command']}")
    others = [q for q in exports.values() if q["name"] != name and q["metrics"]]
    for other in others:
        lines.append(f"# cannot reproduce {', '.join(other['metrics'])} (computed on the "
                     f"{other['scale']} scale after the transformer): use {other['name']}")
    if name == "qrels.txt" and others:
        lines.append("# the raters' grades (grades.csv) reproduce every metric at once")
    return ("\n".join(lines) + "\n").encode() + format_trec_qrels(
        frame.select("query_id", "doc_id", "grade"))


def _holes_csv(ev: Evaluation, data: EvaluationData, limit: int | None) -> bytes:
    frame = holes_frame(ev, data)
    if limit is not None:
        frame = frame.head(limit)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["query_id", "query", "need", "rank", "doc_id", "title", "url"])
    for row in frame.iter_rows(named=True):
        writer.writerow(_cells([row["query_id"], row["text"], row["need"] or "", row["rank"],
                                row["doc_id"], row["title"] or "", row["url"] or ""]))
    return buffer.getvalue().encode()


def _cells(values: list[Any]) -> list[Any]:
    """A row of a CSV/TSV export: no cell a spreadsheet would run as a formula."""
    return [neutralise_cell(v) if isinstance(v, str) else v for v in values]


def export(store: Store, actor: Actor, evaluation_id: int, name: str, *,
           limit: int | None = None) -> tuple[bytes, str]:
    """One export of the evaluation: its bytes and media type (see the module docs).

    ``limit`` keeps the first N rows of ``holes.csv`` (the next batch).
    """
    if name not in EXPORTS and not _QRELS_OF_SCALE.match(name):
        raise OptionError(f"unknown export {name!r}; choose one of {', '.join(EXPORTS)} "
                          "or qrels-SCALE.txt")
    if limit is not None and (isinstance(limit, bool) or limit < 1):
        raise OptionError(f"limit must be a whole number >= 1, not {limit!r}")
    with store.read() as session:
        ev = evaluation_row(session, actor, evaluation_id, "curator")
        data = load_data(session, ev)
        endpoint = session.get(Endpoint, ev.endpoint_id)
        comment = "# " + _rule(ev) + "\n"
        frame = data.judgments.frame.select("query_id", "doc_id", "rater", "grade")
        if name in ("grades.csv", "grades.tsv"):
            body = neutralise_frame(frame).write_csv(
                separator="," if name.endswith("csv") else "\t")
            out = (comment + body).encode()
        elif name == "grades.jsonl":
            extra = {"scale": ev.scale, "rule": ev.strategy}
            out = "".join(json.dumps({**row, **extra}, ensure_ascii=False) + "\n"
                          for row in frame.iter_rows(named=True)).encode()
        elif name.startswith("qrels"):
            out = _qrels(ev, data, name)
        elif name == "holes.csv":
            out = _holes_csv(ev, data, limit)
        elif name == "run.txt":
            out = "".join(data.run_lines).encode()
        elif name == "quepid.csv":
            buffer = io.StringIO()
            writer = csv.writer(buffer, lineterminator="\n")
            writer.writerow(["query", "docid", "rating"])
            texts = {q["query_id"]: q["text"] for q in data.queries}
            for q, d, g in _aggregated(data).drop_nulls("grade").iter_rows():
                writer.writerow(_cells([texts.get(q, q), d, _number(g)]))
            out = buffer.getvalue().encode()
        elif name == "rre.json":
            out = _rre(ev, data, endpoint)
        else:
            graded = set(frame.drop_nulls("grade").get_column("query_id").to_list())
            out = ("query_id\ttext\tneed\n" + "".join(
                "\t".join(_cells([q["query_id"], q["text"],
                                  (q["need"] or "").replace("\t", " ")])) + "\n"
                for q in data.queries if q["query_id"] not in graded)).encode()
        return out, EXPORTS.get(name, "text/plain")


# -- imports ---------------------------------------------------------------------------


def _renamed(exc: InputError, name: str, temp: str) -> InputError:
    source = exc.source.replace(temp, name) if exc.source else name
    return type(exc)(exc.message, source=source, line=exc.line, value=exc.value)


def _read_grades(data: bytes, filename: str, fmt: str, scale: str,
                 rater: str | None) -> pl.DataFrame:
    """A grades or TREC qrels upload through the judgments module's strict reader."""
    from rankscope.judgments.table import Judgments

    suffix = {"trec": ".txt"}.get(fmt, os.path.splitext(filename)[1].lower() or ".csv")
    with tempfile.TemporaryDirectory(prefix="rankscope-import-") as tmp:
        path = os.path.join(tmp, "upload" + suffix)
        with open(path, "wb") as handle:
            handle.write(data)
        try:
            j = Judgments.read(path, format="trec" if fmt == "trec" else None, scale=scale,
                               rater=rater or os.path.splitext(os.path.basename(filename))[0])
        except InputError as exc:
            raise _renamed(exc, filename, path) from None
    return j.frame.select("query_id", "doc_id", "rater", "grade")


def _read_quepid(data: bytes, filename: str, rater: str | None) -> list[tuple[int, str,
                                                                               str, float | None]]:
    """Quepid's ratings CSV: ``query,docid,rating`` (header required)."""
    text = data.decode("utf-8-sig")
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or [c.strip().lower() for c in rows[0][:3]] != ["query", "docid", "rating"]:
        raise ParseError("expected Quepid's header query,docid,rating", source=filename, line=1)
    out = []
    for number, row in enumerate(rows[1:], start=2):
        if not row or not "".join(row).strip():
            continue
        if len(row) < 3:
            raise ParseError("expected query,docid,rating", source=filename, line=number,
                             value=",".join(row))
        query, doc, rating = (restore_cell(c.strip()) for c in row[:3])
        if not query or not doc:
            raise ParseError("empty query or docid", source=filename, line=number)
        try:
            value = float(rating) if rating else None
        except ValueError:
            raise ParseError("rating is not a number", source=filename, line=number,
                             value=rating) from None
        out.append((number, query, doc, value))
    return out


def _read_rre(data: bytes, filename: str) -> list[tuple[str, str, str, float | None]]:
    """RRE's ratings JSON: topics / query_groups / queries' ``$query`` and relevant_documents."""
    try:
        doc = json.loads(data.decode("utf-8-sig"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        raise ParseError(f"not RRE ratings JSON ({exc})", source=filename, line=line) from None
    if not isinstance(doc, dict):
        raise ParseError("expected a JSON object with topics or query_groups", source=filename)
    groups: list[tuple[str, Any]] = []
    for t, topic in enumerate(doc.get("topics") or []):
        for g, group in enumerate((topic or {}).get("query_groups") or []):
            groups.append((f"topics[{t}].query_groups[{g}]", group))
    for g, group in enumerate(doc.get("query_groups") or []):
        groups.append((f"query_groups[{g}]", group))
    if not groups:
        raise ParseError("no query_groups found", source=filename)
    out = []
    for where, group in groups:
        if not isinstance(group, dict):
            raise ParseError("a query group is not an object", source=filename, value=where)
        relevant = group.get("relevant_documents") or {}
        pairs: list[tuple[str, Any]] = []
        if isinstance(relevant, dict):
            for key, val in relevant.items():
                if isinstance(val, dict):
                    pairs.append((str(key), val.get("gain")))
                elif isinstance(val, list):  # the older layout: gain -> documents
                    pairs.extend((str(d), key) for d in val)
                else:
                    raise ParseError("relevant_documents entries are {doc: {gain: g}} or "
                                     "{gain: [docs]}", source=filename, value=where)
        texts = [((q or {}).get("placeholders") or {}).get("$query")
                 for q in group.get("queries") or []]
        texts = [t for t in texts if isinstance(t, str) and t.strip()] or [group.get("name")]
        for text in texts:
            if not isinstance(text, str) or not text.strip():
                raise ParseError("a query group without a $query or a name", source=filename,
                                 value=where)
            for doc_id, gain in pairs:
                try:
                    value = None if gain is None else float(gain)
                except (TypeError, ValueError):
                    raise ParseError("gain is not a number", source=filename,
                                     value=f"{where}: {gain!r}") from None
                out.append((where, text.strip(), doc_id, value))
    return out


def _rater(session: Session, name: str, cache: dict[str, Rater]) -> Rater:
    if name in cache:
        return cache[name]
    rater = session.scalar(select(Rater).where(Rater.name == name))
    if rater is not None and rater.kind != "import":
        name = "import:" + name
        rater = session.scalar(select(Rater).where(Rater.name == name))
    if rater is None:
        rater = Rater(name=name, kind="import", created_at=utcnow())
        session.add(rater)
        session.flush()
    cache[name] = rater
    return rater


def import_grades(store: Store, actor: Actor, evaluation_id: int, data: bytes, *,
                  filename: str, fmt: str = "grades", rater: str | None = None) -> dict[str, Any]:
    """Import grades into the evaluation's project, on its scale; all or nothing.

    Parameters
    ----------
    fmt : {"grades", "trec", "quepid", "rre"}
        A raters' grades file (CSV/TSV/JSONL/JSON, by the file name), TREC qrels
        (one rater: ``rater`` or the file's name), Quepid's ratings CSV, RRE's JSON.
    rater : str, optional
        The rater of a file without a rater column.

    Returns
    -------
    dict
        ``{"imported", "replaced", "raters"}``.

    Raises
    ------
    InputError
        Too large, a malformed line (its number), a grade outside the scale, a
        query the query set does not have; nothing is imported.
    """
    from rankscope.judgments.scales import get_scale
    from rankscope.services.limits import MAX_NAME, check_text
    from rankscope.store.models import Query

    if fmt not in IMPORTS:
        raise OptionError(f"unknown import format {fmt!r}; choose one of {', '.join(IMPORTS)}")
    check_text(filename, "the file name", MAX_NAME)
    check_text(rater, "the rater", MAX_NAME)
    if len(data) > MAX_UPLOAD:
        raise InputError(f"larger than the {MAX_UPLOAD // (1024 * 1024)} MiB an import accepts",
                         source=filename)
    with store.read() as session:
        ev = evaluation_row(session, actor, evaluation_id, "curator")
        scale_name, project_id, eval_id = ev.scale, ev.project_id, ev.id
        queries = [(q.query_id, q.text, query_key(q.text, q.params)) for q in session.scalars(
            select(Query).where(Query.query_set_id == ev.query_set_id))]
    scale = get_scale(scale_name)
    by_id = {qid: (key, text) for qid, text, key in queries}
    by_key = {key: text for _, text, key in queries}
    # (key, text, doc, rater, value) for every record, all checked before any write
    records: list[tuple[str, str, str, str, float | None]] = []
    if fmt in ("grades", "trec"):
        frame = _read_grades(data, filename, fmt, scale_name, rater)
        for row, (qid, doc, who, value) in enumerate(frame.iter_rows()):
            known = by_id.get(qid)
            if known is None:
                raise InputError(f"query id {qid!r} is not in the evaluation's query set",
                                 source=filename, value=f"record {row + 1}")
            records.append((known[0], known[1], doc, who, value))
    else:
        raw: list[tuple[Any, str, str, float | None]]
        raw = list(_read_quepid(data, filename, rater)) if fmt == "quepid" else list(
            _read_rre(data, filename))
        for where, text, doc, value in raw:
            key = query_key(text)
            found = by_key.get(key)
            line = where if isinstance(where, int) else None
            if found is None:
                raise InputError("query text is not in the evaluation's query set",
                                 source=filename, line=line, value=text)
            if value is not None and scale is not None and not scale.contains(value):
                raise InputError(f"grade outside the {scale.describe()} scale", source=filename,
                                 line=line, value=_number(value))
            records.append((key, found, doc, rater or fmt, value))

    for number, (_, _, doc, who, _) in enumerate(records, start=1):
        try:
            check_text(doc, "a document id", MAX_NAME)
            check_text(who, "a rater name", MAX_NAME)
        except InputError as exc:
            raise InputError(exc.message, source=filename, value=f"record {number}") from None

    def work(session: Session) -> dict[str, Any]:
        items = ensure_items(session, project_id, [(k, t, d) for k, t, d, _, _ in records])
        raters: dict[str, Rater] = {}
        replaced = 0
        now = utcnow()
        for key, _, doc, who, value in records:
            item_id = items[(key, doc)]
            r = _rater(session, who, raters)
            old = session.scalar(select(Grade).where(Grade.item_id == item_id,
                                                     Grade.rater_id == r.id, Grade.active,
                                                     Grade.scale == scale_name))
            if old is not None:
                old.active = False
                session.flush()
                replaced += 1
            grade = Grade(item_id=item_id, rater_id=r.id, scale=scale_name, value=value,
                          reason=None if value is not None else "imported without a grade",
                          source="import", evaluation_id=eval_id, active=True, created_at=now)
            session.add(grade)
            session.flush()
            if old is not None:
                old.superseded_by = grade.id
        return {"imported": len(records), "replaced": replaced,
                "raters": sorted({r.name for r in raters.values()})}

    return store.write(work)
