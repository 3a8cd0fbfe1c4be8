"""The columnar tables everything works on: :class:`Qrels` and :class:`Run`.

Both wrap a polars DataFrame with string ``query_id`` and ``doc_id`` columns
and a float64 value column (``grade`` for qrels, ``score`` for runs). They are
never dict-of-dicts inside; ``to_dict`` exists only for interoperability.
:func:`as_qrels` and :func:`as_run` build them from whatever users pass (a
table, a path, a polars or pandas DataFrame, a nested dict).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from rankscope.data._io import RowLocator
from rankscope.data.formats import (
    canonical_columns,
    frame_from_nested_dict,
    guess_format,
    read_table,
    require_pandas,
    write_table,
)
from rankscope.errors import DuplicateDocumentError, InputError, OptionError, ParseError

if TYPE_CHECKING:
    from rankscope.data._io import PathLike

__all__ = ["Deferred", "OnDuplicate", "Qrels", "Run", "as_qrels", "as_run", "input_name"]

OnDuplicate = Literal["error", "first", "max"]
Deferred = Literal["error", "report"] | None
"""A duplicate check left to the evaluation: ``error`` raises what the constructor
would have raised, found beside the measures; ``report`` is trec_eval's rule (the
query holding a duplicate fails when it is reached)."""


def _by_row(row: int) -> int | None:
    return row + 1


class _Table:
    """Shared behaviour of the two tables (not public)."""

    _value: str = ""

    def __init__(self, frame: pl.DataFrame, *, source: str = "<memory>") -> None:
        self._frame = frame
        self.source = source

    @property
    def frame(self) -> pl.DataFrame:
        """The underlying polars DataFrame (``query_id``, ``doc_id``, value; strings)."""
        frame = self._frame
        if frame.schema["query_id"] != pl.String:  # held compact (see ``held``): strings now
            frame = self._frame = frame.with_columns(pl.col("query_id").cast(pl.String))
        return frame

    @property
    def held(self) -> pl.DataFrame:
        """The frame as held, for readers that never need the ids as strings.

        A run or qrels read from a large TREC file
        (:data:`rankscope.data.trec.COMPACT_FROM`) holds its ``query_id`` as a
        polars Categorical (4 bytes a row; each id repeats once per ranked or
        judged document); :attr:`frame` gives strings, and keeps them from
        then on. The evaluation reads this one, and compares query ids by
        their codes.
        """
        return self._frame

    def __len__(self) -> int:
        return self._frame.height

    @property
    def query_ids(self) -> list[str]:
        """The distinct query ids, sorted in byte order."""
        ids: list[str] = (self._frame.get_column("query_id").unique().cast(pl.String)
                          .sort().to_list())
        return ids

    @property
    def n_queries(self) -> int:
        """How many distinct queries the table holds."""
        return int(self._frame.get_column("query_id").n_unique())

    def to_polars(self) -> pl.DataFrame:
        """Return the table as a polars DataFrame (a cheap copy)."""
        return self.frame.clone()

    def to_pandas(self) -> Any:
        """Return the table as a pandas DataFrame (needs the ``pandas`` extra)."""
        require_pandas("converting to pandas")
        return self.frame.to_pandas()

    def to_dict(self) -> dict[str, dict[str, float]]:
        """Return ``{query_id: {doc_id: value}}`` (the format pytrec_eval and ranx use)."""
        out: dict[str, dict[str, float]] = {}
        for q, d, v in self._frame.iter_rows():
            out.setdefault(q, {})[d] = v
        return out


class Qrels(_Table):
    """Relevance judgments: one grade per (query, document).

    Parameters
    ----------
    frame : polars.DataFrame
        Columns ``query_id`` (str), ``doc_id`` (str) and ``grade`` (float; null
        means the document was seen but not graded).
    source : str
        Where the data came from, for messages.

    Notes
    -----
    Grades may be fractional (a mean of raters' grades is a grade) and negative.
    As in trec_eval, a negative grade marks a document that was seen but not
    judged: it is never relevant, gains 0, is not counted among bpref's judged
    non-relevant documents, and is dropped from condensed (judged-only) lists.

    A Qrels object is immutable: evaluations keep what they work out from it
    (its judgments keyed for matching, each query's judged lists) with the
    object, for the next run evaluated against it. Change a copy
    (:meth:`to_polars`) and build new qrels from it, never :attr:`frame` in place.
    """

    _value = "grade"

    def __init__(
        self,
        frame: pl.DataFrame,
        *,
        source: str = "<memory>",
        _locate: RowLocator = _by_row,
        _defer_duplicates: Deferred = None,
        _trusted: bool = False,
    ) -> None:
        if not _trusted:
            frame = _conform(frame, "grade", source, _locate, allow_null=True)
        if _defer_duplicates is None:
            _refuse_duplicates(frame, source, _locate, "judged")
        super().__init__(frame, source=source)
        self.deferred_duplicates: Deferred = _defer_duplicates

    @classmethod
    def from_dict(cls, data: Mapping[str, Mapping[str, float | int | None]]) -> Qrels:
        """Build qrels from ``{query_id: {doc_id: grade}}``."""
        return cls(frame_from_nested_dict(data, "grade", "<dict>"), source="<dict>")

    @classmethod
    def read(cls, path: PathLike, *, format: str | None = None) -> Qrels:
        """Read qrels from a file (TREC, JSON, JSONL, CSV, TSV, Parquet; ``-`` = stdin)."""
        frame, _, source, locate = read_table(path, "qrels", format)
        # the TREC reader checks every value itself: the columns are already canonical
        # (the query ids of a large file held as codes, see ``held``)
        trusted = (format or guess_format(path)) == "trec"
        return cls(frame, source=source, _locate=locate, _trusted=trusted)

    def write(self, path: PathLike, *, format: str | None = None) -> None:
        """Write the qrels in the format named (or implied by the file name)."""
        write_table(self.frame, path, "qrels", format, tag="")

    def __repr__(self) -> str:
        return f"Qrels({self.n_queries} queries, {len(self)} judgments, source={self.source!r})"


class Run(_Table):
    """A ranking: one score per (query, document); higher scores rank first.

    Parameters
    ----------
    frame : polars.DataFrame
        Columns ``query_id`` (str), ``doc_id`` (str) and ``score`` (float).
    name : str, optional
        The run's name (its TREC run tag, by default).
    source : str
        Where the data came from, for messages.
    on_duplicate : {"error", "first", "max"}
        What to do with a document listed twice for one query: raise
        :class:`~rankscope.errors.DuplicateDocumentError` (default), keep the
        first occurrence, or keep the highest score.

    Notes
    -----
    The evaluation's own readers may leave the duplicate check to the
    ranking step, which proves duplicates absent beside the measures and
    raises the same error (``deferred_duplicates``).
    """

    _value = "score"

    def __init__(
        self,
        frame: pl.DataFrame,
        *,
        name: str | None = None,
        source: str = "<memory>",
        on_duplicate: OnDuplicate = "error",
        _locate: RowLocator = _by_row,
        _defer_duplicates: Deferred = None,
        _trusted: bool = False,
    ) -> None:
        if not _trusted:
            frame = _conform(frame, "score", source, _locate, allow_null=False)
        if _defer_duplicates is None or on_duplicate != "error":
            frame = _resolve_duplicates(frame, source, on_duplicate, _locate)
            _defer_duplicates = None
        super().__init__(frame, source=source)
        self.name = name if name is not None else source
        self.deferred_duplicates: Deferred = _defer_duplicates
        self._locate = _locate
        self.handed_over = False  # see hand_over

    def hand_over(self) -> None:
        """Say that this run's holder reads nothing of it again: it is handed to the
        evaluation it is passed to next (the command line's runs, a run
        :func:`rankscope.evaluate` reads or builds itself from a path, frame or dict).

        That evaluation may then drop its scores from the frame once it has ordered the
        rows (:meth:`let_go_of_scores`). A run a caller keeps is never handed over.
        """
        self.handed_over = True

    def let_go_of_scores(self) -> bool:
        """Drop the scores from the frame of a run handed over (:meth:`hand_over`).

        Returns whether they were dropped; a run not handed over is left as it is.
        A frame the run was built from is not changed (a new frame is held).
        """
        if not self.handed_over:
            return False
        # the other columns as they are: ``drop`` would align their chunks with the
        # scores' one (a copy of every document id, 190 MB at 10^7 lines)
        self._frame = pl.DataFrame([column for column in self._frame.get_columns()
                                    if column.name != self._value])
        return True

    def refuse_duplicates(self) -> None:
        """Raise :class:`~rankscope.errors.DuplicateDocumentError` for the first
        document ranked twice for one query, as the constructor does."""
        _refuse_duplicates(self._frame, self.source, self._locate, "ranked")

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Mapping[str, float | int]], *, name: str = "run"
    ) -> Run:
        """Build a run from ``{query_id: {doc_id: score}}``."""
        return cls(frame_from_nested_dict(data, "score", "<dict>"), name=name, source="<dict>")

    @classmethod
    def read(
        cls,
        path: PathLike,
        *,
        format: str | None = None,
        name: str | None = None,
        on_duplicate: OnDuplicate = "error",
        _defer_duplicates: Deferred = None,
    ) -> Run:
        """Read a run from a file (TREC, JSON, JSONL, CSV, TSV, Parquet; ``-`` = stdin).

        The name defaults to the TREC run tag (the first one, if several) or the
        file's name.
        """
        frame, tags, source, locate = read_table(path, "run", format)
        if name is None:
            name = tags[0] if tags else source
        # the TREC reader checks every value itself: the columns are already canonical
        trusted = (format or guess_format(path)) == "trec"
        return cls(frame, name=name, source=source, on_duplicate=on_duplicate, _locate=locate,
                   _defer_duplicates=_defer_duplicates, _trusted=trusted)

    def write(self, path: PathLike, *, format: str | None = None) -> None:
        """Write the run in the format named (or implied by the file name)."""
        write_table(self.frame, path, "run", format, tag=self.name)

    def __repr__(self) -> str:
        return f"Run({self.name!r}, {self.n_queries} queries, {len(self)} rows)"


def _conform(
    frame: pl.DataFrame, value: str, source: str, locate: RowLocator, *, allow_null: bool
) -> pl.DataFrame:
    """Check and cast a frame to the canonical three columns."""
    missing = [c for c in ("query_id", "doc_id", value) if c not in frame.columns]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)}; have {', '.join(frame.columns)}",
            source=source,
        )
    try:
        frame = frame.select(
            pl.col("query_id").cast(pl.String),
            pl.col("doc_id").cast(pl.String),
            pl.col(value).cast(pl.Float64),
        )
    except pl.exceptions.PolarsError as exc:
        raise ParseError(f"column {value!r} is not numeric ({exc})", source=source) from None
    for col in ("query_id", "doc_id"):
        nulls = frame.get_column(col).is_null()
        if nulls.any():
            raise ParseError(
                f"empty {col}", source=source, line=locate(int(nulls.arg_true()[0]))
            )
    values = frame.get_column(value)
    if not allow_null and values.null_count():
        row = int(values.is_null().arg_true()[0])
        raise ParseError(f"empty {value}", source=source, line=locate(row))
    bad = ~values.is_finite() & values.is_not_null()
    if bad.any():
        row = int(bad.arg_true()[0])
        raise ParseError(
            f"{value} is not a finite number",
            source=source,
            line=locate(row),
            value=str(values[row]),
        )
    return frame


_MIX = 0x9E3779B97F4A7C15  # odd 64-bit constant: spreads the query hash before mixing


def pair_hashes(frame: pl.DataFrame) -> pl.Series:
    """A 64-bit hash of each row's ``(query_id, doc_id)`` (equal pairs, equal hashes).

    Distinct pairs may collide, so a hash is only ever used to rule pairs
    out; anything it cannot rule out is compared exactly.
    """
    return frame.select(
        (pl.col("doc_id").hash() ^ (pl.col("query_id").hash() * _MIX)).alias("pair")
    ).to_series()


def _candidates(frame: pl.DataFrame) -> pl.Series | None:
    """Rows that may repeat a pair (their hash repeats); None when no row can."""
    keys = pair_hashes(frame)
    if keys.n_unique() == keys.len():
        return None  # all hashes distinct, so all pairs distinct
    return keys.is_duplicated()


def _first_duplicate(frame: pl.DataFrame) -> tuple[int, int] | None:
    """Rows of the first and second occurrence of the first repeated pair, if any."""
    maybe = _candidates(frame)
    if maybe is None:
        return None
    rows = frame.with_row_index("_row").filter(maybe)
    dup = rows.select(pl.struct("query_id", "doc_id").is_duplicated()).to_series()
    if not dup.any():
        return None  # only hash collisions
    q, d = rows.row(int(dup.arg_true()[0]))[1:3]
    same = rows.filter((pl.col("query_id") == q) & (pl.col("doc_id") == d))
    first, second = same.get_column("_row")[:2].to_list()
    return int(first), int(second)


def _refuse_duplicates(frame: pl.DataFrame, source: str, locate: RowLocator, verb: str) -> None:
    found = _first_duplicate(frame)
    if found is None:
        return
    first, second = found
    q, d = frame.row(second)[:2]
    first_line = locate(first)
    where = f" (first at line {first_line})" if first_line is not None else ""
    raise DuplicateDocumentError(
        f"document {verb} twice for query {q!r}{where}",
        source=source,
        line=locate(second),
        value=d,
    )


def _resolve_duplicates(
    frame: pl.DataFrame, source: str, policy: OnDuplicate, locate: RowLocator
) -> pl.DataFrame:
    if policy not in ("error", "first", "max"):
        raise OptionError(f"on_duplicate must be 'error', 'first' or 'max', not {policy!r}")
    if policy == "error":
        _refuse_duplicates(frame, source, locate, "ranked")
        return frame
    maybe = _candidates(frame)
    if maybe is None:
        return frame
    # Only rows whose hash repeats can be dropped; decide among them exactly.
    rows = frame.with_row_index("_row").filter(maybe)
    if policy == "first":
        drop = rows.filter(~pl.struct("query_id", "doc_id").is_first_distinct())
    else:
        # keep the highest score of each pair (the earliest row among equal scores)
        best = rows.sort(["score", "_row"], descending=[True, False]).unique(
            subset=["query_id", "doc_id"], keep="first"
        )
        drop = rows.join(best.select("_row"), on="_row", how="anti")
    if drop.height == 0:
        return frame
    return frame.with_row_index("_row").filter(
        ~pl.col("_row").is_in(drop.get_column("_row").implode())
    ).drop("_row")


# -- anything users pass as qrels or a run, as a table ------------------------------


def input_name(table: Qrels | Run) -> str:
    """How messages name a table: its file, else the run's name, else ``the qrels``."""
    if not table.source.startswith("<"):
        return table.source
    if isinstance(table, Run):
        return f"run {table.name!r}"
    return "the qrels"


def _frame_from_dataframe(obj: Any) -> pl.DataFrame | None:
    if isinstance(obj, pl.DataFrame):
        return obj
    module = type(obj).__module__
    if module.startswith("pandas") and hasattr(obj, "columns"):
        return pl.from_pandas(obj.reset_index(drop=True))
    return None


def as_qrels(obj: Any) -> Qrels:
    """Accept qrels as a :class:`Qrels`, a path, a DataFrame or a nested dict."""
    if isinstance(obj, Qrels):
        return obj
    if isinstance(obj, str | os.PathLike):
        return Qrels.read(obj)
    frame = _frame_from_dataframe(obj)
    if frame is not None:
        return Qrels(canonical_columns(frame, "grade", "<DataFrame>"), source="<DataFrame>")
    if isinstance(obj, Mapping):
        return Qrels.from_dict(obj)
    raise InputError(f"cannot use a {type(obj).__name__} as qrels")


def as_run(
    obj: Any, *, name: str | None = None, on_duplicate: OnDuplicate = "error",
    defer_duplicates: bool = False,
) -> Run:
    """Accept a run as a :class:`Run`, a path, a DataFrame or a nested dict.

    ``defer_duplicates``: a run built here leaves its duplicate check (with
    ``on_duplicate="error"``) to the ranking step, which runs it beside the
    measures and raises the same error.
    """
    if isinstance(obj, Run):
        return obj
    deferred: Deferred = "error" if defer_duplicates else None
    if isinstance(obj, str | os.PathLike):
        return Run.read(obj, name=name, on_duplicate=on_duplicate, _defer_duplicates=deferred)
    frame = _frame_from_dataframe(obj)
    if frame is not None:
        return Run(
            canonical_columns(frame, "score", "<DataFrame>"),
            name=name or "run",
            source="<DataFrame>",
            on_duplicate=on_duplicate,
            _defer_duplicates=deferred,
        )
    if isinstance(obj, Mapping):
        return Run(
            frame_from_nested_dict(obj, "score", "<dict>"),
            name=name or "run",
            source="<dict>",
            on_duplicate=on_duplicate,
            _defer_duplicates=deferred,
        )
    raise InputError(f"cannot use a {type(obj).__name__} as a run")
