"""One reader of a qrels argument: qrels, or raters' judgments, decided once from the file.

Commands that take "qrels or judgments" (``evaluate``, ``compare``, ``report``,
``coverage``) read the argument here: the file is read once, its format
guessed once, and its columns decide what it is (a rater column: raters'
judgments), instead of a look at the header followed by a second reading.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rankscope.data.formats import guess_format, raw_columns, read_raw
from rankscope.data.tables import Qrels
from rankscope.judgments.io import check_format, judgments_of, pick_column
from rankscope.judgments.table import Judgments

if TYPE_CHECKING:
    from rankscope.data._io import PathLike
    from rankscope.judgments.scales import Scale
    from rankscope.judgments.table import OnDuplicateGrade

__all__ = ["read_relevance"]


def read_relevance(
    path: PathLike, fmt: str | None = None, *, judgments: bool = False,
    scale: Scale | None = None, rater: str | None = None,
    on_duplicate: OnDuplicateGrade = "error",
) -> Qrels | Judgments:
    """Read a qrels argument once and return the table its shape calls for.

    Raters' judgments (:class:`~rankscope.judgments.table.Judgments`) when the
    file has a rater column or ``judgments`` is asked, else qrels
    (:class:`~rankscope.data.tables.Qrels`). The file is read once and its
    shape decided from the columns read; a TREC file (fixed columns, never a
    rater column) takes the qrels reader's fast path, or is one rater's
    judgments when ``judgments`` is asked.
    """
    fmt = check_format(fmt) if fmt else guess_format(path)
    if fmt == "trec":
        if judgments:
            return Judgments.read(path, format=fmt, scale=scale, rater=rater,
                                  on_duplicate=on_duplicate)
        return Qrels.read(path, format=fmt)
    raw = read_raw(path, fmt)
    columns = list(raw.frame.columns) if raw.frame is not None else []
    if judgments or pick_column(columns, "rater") is not None:
        frame, source, locate = judgments_of(raw, scale=scale, rater=rater)
        return Judgments(frame, source=source, scale=scale, on_duplicate=on_duplicate,
                         _locate=locate)
    frame, locate = raw_columns(raw, "qrels")
    return Qrels(frame, source=raw.source, _locate=locate)
