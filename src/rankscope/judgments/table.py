"""The :class:`Judgments` table: every grade every rater gave, before aggregation.

Columns: ``query_id``, ``doc_id``, ``rater`` (strings), ``grade`` (float64;
null = the rater saw the result but did not grade it) and, optionally,
``time`` (float64 or datetime: when the grade was given). Each row remembers
the file and line it came from, so a grade found bad later (outside a scale,
missing from a transformer's rules) is still reported by file and line.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from rankscope import display
from rankscope.data._io import RowLocator
from rankscope.data.tables import Qrels
from rankscope.errors import DuplicateDocumentError, InputError, OptionError, ParseError, setting
from rankscope.judgments.io import canonical_frame, read_judgments_frame
from rankscope.judgments.scales import Scale, first_outside, get_scale, scale_error

if TYPE_CHECKING:
    from rankscope.data._io import PathLike

__all__ = ["Judgments", "OnDuplicateGrade", "as_judgments"]

OnDuplicateGrade = Literal["error", "first", "last", "latest"]
_Segment = tuple[int, str, RowLocator]


def _by_row(row: int) -> int | None:
    return row + 1


def _no_line(row: int) -> int | None:
    return None


class Judgments:
    """Raters' grades per (query, document): the input of aggregation and agreement.

    Parameters
    ----------
    frame : polars.DataFrame
        Columns ``query_id``, ``doc_id``, ``rater``, ``grade`` and optionally
        ``time`` (canonical names; readers map other tools' names).
    source : str
        Where the data came from, for messages.
    scale : Scale or str, optional
        The declared grading scale; every grade is checked against it.
    on_duplicate : {"error", "first", "last", "latest"}, default "error"
        A rater grading the same (query, document) twice: an error naming
        both lines, or keep the first / last row, or the latest by ``time``
        (the last row among equal times).

    Raises
    ------
    ScaleError
        A grade outside ``scale`` (file, line, value).
    DuplicateDocumentError
        A repeated (query, document, rater) with ``on_duplicate="error"``.

    Examples
    --------
    >>> import polars as pl
    >>> from rankscope.judgments import Judgments
    >>> j = Judgments(pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d1"],
    ...                             "rater": ["ann", "bob"], "grade": [1.0, 0.0]}),
    ...               scale="binary")
    >>> j.aggregate().to_dict()  # majority vote; 1 vs 0 is a tie -> null
    {'q1': {'d1': None}}
    """

    def __init__(
        self,
        frame: pl.DataFrame,
        *,
        source: str = "<memory>",
        scale: Scale | str | None = None,
        on_duplicate: OnDuplicateGrade = "error",
        _locate: RowLocator = _by_row,
        _segments: list[_Segment] | None = None,
    ) -> None:
        frame = _conform(frame, source, _locate)
        self._scale = get_scale(scale)
        self._frame = frame
        # Where rows came from: (first row, file, locator) per input file, and
        # which original row each current row is (None = unchanged order).
        self._segments = _segments if _segments is not None else [(0, source, _locate)]
        self._rows: pl.Series | None = None
        self.source = source
        if self._scale is not None:
            self._check_scale(self._scale)
        self._dedupe(on_duplicate)

    # -- construction -----------------------------------------------------------
    @classmethod
    def read(
        cls,
        path: PathLike,
        *,
        format: str | None = None,
        scale: Scale | str | None = None,
        rater: str | None = None,
        on_duplicate: OnDuplicateGrade = "error",
    ) -> Judgments:
        """Read judgments (CSV, TSV, JSONL, JSON, Parquet, TREC qrels; ``-`` = stdin).

        ``rater`` names the rater of a file without a rater column (a TREC
        qrels file is one rater's judgments); default: the file's name.
        Grades may be written as the scale's labels (``relevant``).
        """
        sc = get_scale(scale)
        frame, source, locate = read_judgments_frame(path, format, scale=sc, rater=rater)
        return cls(frame, source=source, scale=sc, on_duplicate=on_duplicate, _locate=locate)

    @classmethod
    def from_qrels(
        cls, qrels: Qrels, *, rater: str = "qrels", scale: Scale | str | None = None
    ) -> Judgments:
        """One rater's judgments from qrels (null grades stay ungraded)."""
        frame = qrels.frame.select(
            "query_id", "doc_id", pl.lit(rater, pl.String).alias("rater"), "grade"
        )
        # The qrels' file lines are not known here: errors name the file only.
        return cls(frame, source=qrels.source, scale=scale, _locate=_no_line)

    @classmethod
    def concat(
        cls,
        parts: Iterable[Judgments],
        *,
        scale: Scale | str | None = None,
        on_duplicate: OnDuplicateGrade = "error",
    ) -> Judgments:
        """Stack several judgment tables (e.g. one TREC qrels file per rater)."""
        items = list(parts)
        if not items:
            raise InputError("no judgments to combine")
        with_time = [p for p in items if "time" in p.frame.columns]
        kinds = {str(p.frame.schema["time"]) for p in with_time}
        if len(kinds) > 1:
            raise InputError(
                "time columns of different kinds (numbers and dates) cannot be combined: "
                + ", ".join(p.source for p in with_time)
            )
        frames = []
        for p in items:
            f = p.frame
            if with_time and "time" not in f.columns:
                f = f.with_columns(pl.lit(None, with_time[0].frame.schema["time"]).alias("time"))
            frames.append(f)
        sc = get_scale(scale) if scale is not None else _common_scale(items)
        source = ", ".join(dict.fromkeys(p.source for p in items))
        return cls(
            pl.concat(frames, how="vertical"),
            source=source,
            scale=sc,
            on_duplicate=on_duplicate,
            _segments=_stack_segments(items),
        )

    # -- properties -------------------------------------------------------------
    @property
    def frame(self) -> pl.DataFrame:
        """The underlying polars DataFrame."""
        return self._frame

    @property
    def scale(self) -> Scale | None:
        """The declared scale (None when not declared)."""
        return self._scale

    @property
    def has_time(self) -> bool:
        """Whether the grades carry a time."""
        return "time" in self._frame.columns

    @property
    def raters(self) -> list[str]:
        """The distinct raters, sorted."""
        out: list[str] = self._frame.get_column("rater").unique().sort().to_list()
        return out

    @property
    def query_ids(self) -> list[str]:
        """The distinct queries, sorted in byte order."""
        out: list[str] = self._frame.get_column("query_id").unique().sort().to_list()
        return out

    @property
    def n_queries(self) -> int:
        """How many distinct queries."""
        return int(self._frame.get_column("query_id").n_unique())

    @property
    def n_items(self) -> int:
        """How many distinct (query, document) pairs."""
        return int(self._frame.select(pl.struct("query_id", "doc_id").n_unique()).item())

    def __len__(self) -> int:
        return self._frame.height

    def __repr__(self) -> str:
        scale = f", scale={self._scale.name!r}" if self._scale else ""
        return (
            f"Judgments({self.n_queries} queries, {self.n_items} results, "
            f"{len(self.raters)} raters, {len(self)} rows{scale})"
        )

    def _repr_html_(self) -> str:
        return display.judgments_html(self)

    # -- derived tables -----------------------------------------------------------
    def with_scale(self, scale: Scale | str) -> Judgments:
        """The same judgments with a declared scale (checked: a bad grade is an error)."""
        return self._replace(self._frame, scale=get_scale(scale))

    def with_grades(self, grades: pl.Series, *, scale: Scale | str | None) -> Judgments:
        """The same rows with new grades (used by transformers), checked against ``scale``."""
        return self._replace(self._frame.with_columns(grades.alias("grade")),
                             scale=get_scale(scale))

    def by_query(self) -> dict[str, Judgments]:
        """One table per query, in query order (rows keep their file and line)."""
        indexed = self._frame.with_row_index("_row")
        out: dict[str, Judgments] = {}
        for (q,), part in sorted(indexed.partition_by("query_id", as_dict=True).items()):
            out[str(q)] = self._subset(part.get_column("_row"))
        return out

    def filter(self, predicate: pl.Expr) -> Judgments:
        """The rows matching a polars expression (rows keep their file and line)."""
        rows = self._frame.with_row_index("_row").filter(predicate).get_column("_row")
        return self._subset(rows)

    def _subset(self, rows: pl.Series) -> Judgments:
        out = self._replace(self._frame[rows], scale=None)
        out._scale = self._scale  # already checked
        out._rows = rows if self._rows is None else self._rows[rows]
        return out

    def where(self, row: int) -> tuple[str, int | None]:
        """The file and 1-based line row ``row`` came from."""
        original = row if self._rows is None else int(self._rows[row])
        starts = [start for start, _, _ in self._segments]
        start, src, locate = self._segments[bisect.bisect_right(starts, original) - 1]
        return src, locate(original - start)

    def aggregate(self, strategy: str | None = None, *, scale: Scale | str | None = None) -> Qrels:
        """Aggregate to qrels, one grade per (query, document); see :func:`aggregate`."""
        from rankscope.judgments.aggregate import aggregate

        return aggregate(self, strategy, scale=scale)

    def transform(
        self, to: Scale | str, rules: Mapping[float, float] | None = None
    ) -> Judgments:
        """Map every grade to another scale; see :func:`transform`."""
        from rankscope.judgments.transform import transform

        return transform(self, to, rules)

    def write(self, path: PathLike, *, format: str | None = None) -> None:
        """Write the judgments (CSV/TSV with a header, JSONL, JSON, Parquet, TREC)."""
        from rankscope.judgments.io import write_judgments_frame

        write_judgments_frame(self._frame, path, format)

    def to_polars(self) -> pl.DataFrame:
        """A copy as a polars DataFrame."""
        return self._frame.clone()

    def to_pandas(self) -> Any:
        """As a pandas DataFrame (needs the ``pandas`` extra)."""
        from rankscope.data.formats import require_pandas

        require_pandas("converting judgments to pandas")
        return self._frame.to_pandas()

    # -- internals --------------------------------------------------------------
    def _replace(self, frame: pl.DataFrame, *, scale: Scale | None) -> Judgments:
        out = object.__new__(Judgments)
        out._frame = frame
        out._segments = self._segments
        out._rows = self._rows
        out.source = self.source
        out._scale = scale
        if scale is not None:
            out._check_scale(scale)
        return out

    def _check_scale(self, scale: Scale) -> None:
        grades = self._frame.get_column("grade")
        row = first_outside(grades, scale)
        if row is not None:
            raise scale_error(scale, grades[row], *self.where(row))

    def _dedupe(self, policy: OnDuplicateGrade) -> None:
        if policy not in ("error", "first", "last", "latest"):
            raise OptionError(
                f"on_duplicate must be 'error', 'first', 'last' or 'latest', not {policy!r}"
            )
        keys = ["query_id", "doc_id", "rater"]
        dup = self._frame.select(pl.struct(keys).is_duplicated()).to_series()
        if not dup.any():
            return
        indexed = self._frame.with_row_index("_row")
        if policy == "error":
            first = int(dup.arg_true()[0])
            q, d, r = self._frame.row(first)[:3]
            rows = indexed.filter(
                (pl.col("query_id") == q) & (pl.col("doc_id") == d) & (pl.col("rater") == r)
            ).get_column("_row")
            src, line = self.where(int(rows[1]))
            _, first_line = self.where(int(rows[0]))
            keep_one = setting("on_duplicate", "first", "last", "latest",
                               flag="--on-duplicate-grade")
            raise DuplicateDocumentError(
                f"rater {r!r} graded query {q!r} twice (first at line {first_line}); "
                f"pass {keep_one} to keep one",
                source=src, line=line, value=d,
            )
        if policy == "latest":
            if not self.has_time:
                latest = setting("on_duplicate", "latest", flag="--on-duplicate-grade")
                raise OptionError(f"{latest} needs a time column")
            # nulls first, so an untimed grade is older than any timed one
            indexed = indexed.sort(["time", "_row"], nulls_last=False)
            keep: Literal["first", "last"] = "last"
        else:
            keep = "first" if policy == "first" else "last"
        kept = (
            indexed.unique(subset=keys, keep=keep, maintain_order=True)
            .get_column("_row").sort()
        )
        self._frame = self._frame[kept]
        self._rows = kept if self._rows is None else self._rows[kept]


def _stack_segments(items: list[Judgments]) -> list[_Segment]:
    """Segments of stacked tables; a reordered table keeps its own row map."""
    out: list[_Segment] = []
    offset = 0
    for p in items:
        if p._rows is None:
            out.extend((offset + start, src, loc) for start, src, loc in p._segments)
        else:
            out.append((offset, p.source, _remapped(p)))
        offset += len(p)
    return out


def _remapped(p: Judgments) -> RowLocator:
    def locate(row: int) -> int | None:
        return p.where(row)[1]

    return locate


def _common_scale(items: list[Judgments]) -> Scale | None:
    scales = {p.scale for p in items}
    if len(scales) == 1:
        return next(iter(scales))
    named = {s for s in scales if s is not None}
    if len(named) > 1:
        raise OptionError(
            "judgments on different scales cannot be combined: "
            + ", ".join(sorted(s.name for s in named))
        )
    return next(iter(named)) if named else None


def _conform(frame: pl.DataFrame, source: str, locate: RowLocator) -> pl.DataFrame:
    missing = [c for c in ("query_id", "doc_id", "rater", "grade") if c not in frame.columns]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)}; have {', '.join(frame.columns)}",
            source=source,
        )
    try:
        cols = [
            pl.col("query_id").cast(pl.String),
            pl.col("doc_id").cast(pl.String),
            pl.col("rater").cast(pl.String),
            pl.col("grade").cast(pl.Float64),
        ]
        if "time" in frame.columns:
            dtype = frame.schema["time"]
            if dtype.is_numeric():
                cols.append(pl.col("time").cast(pl.Float64))
            elif dtype == pl.Date:
                cols.append(pl.col("time").cast(pl.Datetime("us")))
            elif isinstance(dtype, pl.Datetime):
                cols.append(pl.col("time"))
            else:
                raise ParseError(
                    f"time column must be numbers or dates, not {dtype}", source=source
                )
        frame = frame.select(cols)
    except pl.exceptions.PolarsError as exc:
        raise ParseError(f"column 'grade' is not numeric ({exc})", source=source) from None
    for col in ("query_id", "doc_id", "rater"):
        nulls = frame.get_column(col).is_null()
        if nulls.any():
            raise ParseError(f"empty {col}", source=source, line=locate(int(nulls.arg_true()[0])))
    grades = frame.get_column("grade")
    bad = ~grades.is_finite() & grades.is_not_null()
    if bad.any():
        row = int(bad.arg_true()[0])
        raise ParseError("grade is not a finite number", source=source, line=locate(row),
                         value=str(grades[row]))
    return frame


def as_judgments(obj: Any, *, scale: Scale | str | None = None) -> Judgments:
    """Accept judgments as :class:`Judgments`, :class:`Qrels`, a path or a DataFrame."""
    if isinstance(obj, Judgments):
        return obj if scale is None else obj.with_scale(scale)
    if isinstance(obj, Qrels):
        return Judgments.from_qrels(obj, scale=scale)
    if isinstance(obj, str | os.PathLike):
        return Judgments.read(obj, scale=scale)
    if isinstance(obj, pl.DataFrame) or type(obj).__module__.startswith("pandas"):
        raw = obj if isinstance(obj, pl.DataFrame) else pl.from_pandas(obj.reset_index(drop=True))
        sc = get_scale(scale)
        frame = canonical_frame(raw, "<DataFrame>", _by_row, scale=sc, rater="rater")
        return Judgments(frame, source="<DataFrame>", scale=sc)
    raise InputError(f"cannot use a {type(obj).__name__} as judgments")
