"""The grades file of a judging run: written row by row, read back to resume.

A judgments file (CSV by default; TSV or JSONL by the name) with the
columns every judgments reader takes (``query_id, doc_id, rater, grade``)
and, after them, what the run knows about each grade::

    status           graded | unrateable | no_majority | failed
    reason           why there is no grade (empty when graded)
    model            the model's name
    template_sha256  SHA-256 of the prompt template
    settings         the decoding settings sent (canonical JSON: temperature, ...)
    samples, votes   how many answers were asked, and their grades ("2,2,3";
                     "?" = an answer with no grade)
    consistency      share of the answers that gave the majority grade
    prompt_tokens, completion_tokens, cached   what the answers cost
    raw              the answer as the model wrote it (the first, with samples),
                     JSON-escaped on one line: for every row, graded or not
    finish_reason    why the answer ended (stop; length: cut off)
    reasoning        the reasoning the endpoint returned apart from the answer
                     (``reasoning_content``), JSON-escaped
    scale            the grading scale (graded, binary, detail, 1-5, ...)
    endpoint         the chat-completions URL asked
    messages_sha256  SHA-256 of the messages sent for this pair (the prompt as
                     rendered: guidelines, need, document, few-shot examples)
    parse            the answer reader: strict or lenient

A row without a grade has an empty ``grade``: a result seen but not graded,
which is what every reader in rankscope makes of it. Rows are appended and
flushed as answers arrive, so an interrupted run loses nothing it was told;
at the end of a run the rater's rows are put in the order of the pairs (by
query, then rank), whatever order the answers came in. A last row cut off
by an interruption (no line end) is dropped before anything is appended,
never glued to the next row (:attr:`ResultsFile.repaired` says so).
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

import polars as pl

from rankscope.errors import FileAccessError, OptionError, ParseError

__all__ = ["COLUMNS", "CONFIGURATION", "DONE", "ResultsFile", "rows_frame"]

COLUMNS = (
    "query_id", "doc_id", "rater", "grade", "status", "reason", "model", "template_sha256",
    "settings", "samples", "votes", "consistency", "prompt_tokens", "completion_tokens",
    "cached", "raw", "finish_reason", "reasoning", "scale", "endpoint", "messages_sha256",
    "parse",
)
CONFIGURATION = ("model", "endpoint", "scale", "template_sha256", "settings", "samples",
                 "parse")
"""The columns that say how a rater's grades were made: one run's are all the same."""
DONE = ("graded", "unrateable", "no_majority")
"""Statuses of a pair that is not asked again (``failed`` is, with ``retry_failed``)."""

Row = dict[str, str]


def _format(path: str) -> str:
    lower = path.lower()
    for fmt in ("csv", "tsv", "jsonl"):
        if lower.endswith("." + fmt):
            return fmt
    raise OptionError(f"the grades file must end in .csv, .tsv or .jsonl, not {path!r}")


def cell(value: Any) -> str:
    """A value as the file writes it (None -> empty, 2.0 -> "2")."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    return str(value)


class ResultsFile:
    """The rows of a grades file (None: kept in memory only).

    Raises
    ------
    FileAccessError
        The file exists but cannot be read or written.
    ParseError
        An existing file that is not a judgments file.

    Attributes
    ----------
    repaired : str or None
        What was wrong with the file as found (a last row cut off by an
        interruption), put right before the first write; None: nothing.

    Nothing is written until a row is appended, dropped or reordered: a file
    opened only to count (a dry run) is left as it is.
    """

    def __init__(self, path: str | os.PathLike[str] | None) -> None:
        self.path = None if path is None else os.fspath(path)
        if self.path is not None:
            _format(self.path)  # refuse a name no judgments reader would take
        self.rows: list[Row] = []
        self._header: list[str] = list(COLUMNS)
        self.repaired: str | None = None
        self._rewrite_first = False  # the file on disk must be rewritten before a write
        if self.path is not None and os.path.exists(self.path):
            self._load(self.path)

    @property
    def fmt(self) -> str:
        return "csv" if self.path is None else _format(self.path)

    def _load(self, path: str) -> None:
        try:
            with open(path, encoding="utf-8", newline="") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise FileAccessError(f"cannot read the grades file ({exc})", source=path) \
                from None
        if not text.strip():
            return
        if not text.endswith("\n"):
            text = self._cut_partial_row(text)
            self._rewrite_first = True
        if self.fmt == "jsonl":
            for number, line in enumerate(text.splitlines(), start=1):
                if line.strip():
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise ParseError(f"invalid JSON ({exc.msg})", source=self.path,
                                         line=number, value=line) from None
                    self.rows.append({str(k): cell(v) for k, v in record.items()})
            header = list(dict.fromkeys(k for r in self.rows for k in r))
        else:
            reader = csv.DictReader(io.StringIO(text, newline=""),
                                    delimiter="\t" if self.fmt == "tsv" else ",")
            header = list(reader.fieldnames or [])
            self.rows = [{k: v or "" for k, v in r.items() if k is not None} for r in reader]
        missing = [c for c in ("query_id", "doc_id", "rater") if c not in header]
        if missing:
            raise ParseError(
                f"not a grades file: no {', '.join(missing)} column (found "
                f"{', '.join(header) or 'none'}); write to a new file", source=self.path,
            )
        extra = [c for c in header if c not in COLUMNS]
        self._header = list(COLUMNS) + extra
        if header != self._header:
            self._rewrite_first = True  # one header for old and new rows

    def _cut_partial_row(self, text: str) -> str:
        """The text without its last line, which an interrupted write left without its end.

        Rows are written whole, line end included, in one call: a last line without
        one was cut off. A JSONL line that still parses as a whole object is kept.
        """
        head, _, last = text.rpartition("\n")
        if self.fmt == "jsonl":
            try:
                if isinstance(json.loads(last), dict):
                    return text + "\n"
            except json.JSONDecodeError:
                pass
        shown = last if len(last) <= 60 else last[:57] + "..."
        self.repaired = (f"dropped a last row cut off by an interruption ({shown!r}); its "
                         "pair is asked again")
        return head + "\n" if head else ""

    def _before_write(self) -> None:
        if self._rewrite_first:
            self._rewrite_first = False
            self._rewrite()
    def status_of(self, rater: str) -> dict[tuple[str, str], str]:
        """(query, document) -> status of the rater's rows (a grade without one: graded)."""
        out: dict[tuple[str, str], str] = {}
        for r in self.rows:
            if r.get("rater") == rater:
                status = r.get("status") or ("graded" if r.get("grade") else "unrateable")
                out[(r["query_id"], r["doc_id"])] = status
        return out

    def configurations(self, rater: str) -> set[tuple[str, str, str]]:
        """The (model, template hash, settings) the rater's rows were made with."""
        return {(r.get("model", ""), r.get("template_sha256", ""), r.get("settings", ""))
                for r in self.rows if r.get("rater") == rater}

    def drop(self, rater: str, pairs: Iterable[tuple[str, str]]) -> None:
        """Remove the rater's rows for these pairs (before asking them again)."""
        gone = set(pairs)
        kept = [r for r in self.rows
                if not (r.get("rater") == rater and (r["query_id"], r["doc_id"]) in gone)]
        if len(kept) != len(self.rows):
            self.rows = kept
            self._rewrite_first = False
            self._rewrite()

    def order(self, rater: str, position: Mapping[tuple[str, str], int]) -> None:
        """Put the rater's rows in the order ``position`` gives their pairs (rows of pairs
        it does not name after them, as they were); other raters' rows stay in place."""
        slots = [i for i, r in enumerate(self.rows) if r.get("rater") == rater]
        mine = [self.rows[i] for i in slots]
        last = len(position)
        ordered = sorted(mine, key=lambda r: position.get((r["query_id"], r["doc_id"]), last))
        if ordered == mine:
            return
        for i, row in zip(slots, ordered, strict=True):
            self.rows[i] = row
        self._rewrite_first = False
        self._rewrite()

    def append(self, row: Mapping[str, Any]) -> None:
        """Add one row and flush it to the file."""
        values = {c: cell(row.get(c)) for c in self._header}
        self.rows.append(values)
        if self.path is None:
            return
        self._before_write()
        new = not os.path.exists(self.path) or os.path.getsize(self.path) == 0
        try:
            with open(self.path, "a", encoding="utf-8", newline="") as handle:
                handle.write(self._encode([values], header=new))
                handle.flush()
        except OSError as exc:
            raise FileAccessError(f"cannot write: {exc.strerror or exc}", source=self.path) \
                from None

    def _encode(self, rows: list[Row], *, header: bool) -> str:
        if self.fmt == "jsonl":
            return "".join(json.dumps(_typed(r), ensure_ascii=False) + "\n" for r in rows)
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=self._header, extrasaction="ignore",
                                delimiter="\t" if self.fmt == "tsv" else ",",
                                lineterminator="\n")
        if header:
            writer.writeheader()
        writer.writerows(rows)
        return buffer.getvalue()

    def _rewrite(self) -> None:
        if self.path is None or (not self.rows and not os.path.exists(self.path)):
            return
        temp = self.path + ".tmp"
        try:
            with open(temp, "w", encoding="utf-8", newline="") as handle:
                handle.write(self._encode(self.rows, header=True))
            os.replace(temp, self.path)
        except OSError as exc:
            raise FileAccessError(f"cannot write: {exc.strerror or exc}", source=self.path) \
                from None


def _typed(row: Row) -> dict[str, Any]:
    """JSONL rows keep numbers as numbers and empty cells as null."""
    out: dict[str, Any] = {}
    for k, v in row.items():
        if v == "":
            out[k] = None
        elif k in ("grade", "consistency"):
            out[k] = float(v)
        elif k in ("samples", "prompt_tokens", "completion_tokens"):
            out[k] = int(v)
        elif k == "cached":
            out[k] = v == "true"
        else:
            out[k] = v
    return out


def rows_frame(rows: list[Row]) -> pl.DataFrame:
    """The rows as a typed frame (grade and consistency float, counts integer)."""
    schema: dict[str, Any] = dict.fromkeys(COLUMNS, pl.String)
    schema.update(grade=pl.Float64, consistency=pl.Float64, samples=pl.Int64,
                  prompt_tokens=pl.Int64, completion_tokens=pl.Int64, cached=pl.Boolean)
    data = [
        {c: (_typed({c: r.get(c, "")})[c]) for c in COLUMNS}
        for r in rows
    ]
    return pl.DataFrame(data, schema=schema, orient="row") if data else pl.DataFrame(
        schema=schema
    )
