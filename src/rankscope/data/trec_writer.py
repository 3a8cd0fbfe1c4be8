"""Writing TREC qrels and run files (the reading side is :mod:`rankscope.data.trec`)."""

from __future__ import annotations

import polars as pl

from rankscope.data.ranking_order import TieRule, ranked
from rankscope.errors import OutputError

__all__ = ["check_trec_ids", "format_trec_qrels", "format_trec_run"]

_SEPARATORS = "[ \t\n\r\x0b\x0c]"  # what splits fields or ends lines in a TREC file


def check_trec_ids(frame: pl.DataFrame, target: str | None = None) -> None:
    """Refuse ids a TREC file cannot hold: whitespace inside, empty, a query id starting '#'.

    Written anyway, such a line would be read back as other fields (or as a
    comment): the file would not be the data. CSV, TSV, JSON and JSONL hold
    any id.

    Raises
    ------
    OutputError
        Naming the first such id, its query, and the formats that can hold it.
    """
    for column in ("query_id", "doc_id"):
        ids = frame.get_column(column)
        bad = ids.str.contains(_SEPARATORS) | (ids.str.len_bytes() == 0)
        if column == "query_id":
            bad = bad | ids.str.starts_with("#")
        if bad.any():
            row = int(bad.arg_true()[0])
            what = f"query id {ids[row]!r}"
            if column == "doc_id":
                what = f"document id {ids[row]!r} (query {frame.get_column('query_id')[row]!r})"
            raise OutputError(
                f"cannot write the {what} to a TREC file (an id there cannot be empty, hold "
                "spaces, tabs or line breaks, or start a line with #); write CSV, TSV, JSON "
                "or JSONL instead",
                target=target,
            )


def _format_number(values: pl.Expr) -> pl.Expr:
    # Integral grades print as integers (trec_eval reads them with atol).
    return (
        pl.when(values == values.round(0))
        .then(values.cast(pl.Int64).cast(pl.String))
        .otherwise(values.cast(pl.String))
    )


def format_trec_qrels(frame: pl.DataFrame) -> bytes:
    """Render a qrels frame (``query_id, doc_id, grade``) as TREC lines."""
    graded = frame.filter(pl.col("grade").is_not_null())
    out = graded.select(
        pl.col("query_id"),
        pl.lit("0").alias("iteration"),
        pl.col("doc_id"),
        _format_number(pl.col("grade")).alias("grade"),
    )
    return out.write_csv(separator=" ", include_header=False, quote_style="never").encode()


def format_trec_run(frame: pl.DataFrame, tag: str, *, ties: TieRule = "trec") -> bytes:
    """Render a run frame as TREC lines in rank order, ranks numbered as evaluated.

    ``ties`` orders equal scores (trec_eval's rule by default); trec_eval
    itself re-sorts a run by score and its own tie rule, whatever the ranks say.
    """
    out = ranked(frame, ties).select(
        pl.col("query_id"),
        pl.lit("Q0").alias("q0"),
        pl.col("doc_id"),
        pl.col("rank"),
        pl.col("score").cast(pl.String).alias("score"),
        pl.lit(tag).alias("tag"),
    )
    return out.write_csv(separator=" ", include_header=False, quote_style="never").encode()
