"""Writing TREC qrels and run files (the reading side is :mod:`rankscope.data.trec`)."""

from __future__ import annotations

import polars as pl

__all__ = ["format_trec_qrels", "format_trec_run"]


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


def format_trec_run(frame: pl.DataFrame, tag: str) -> bytes:
    """Render a run frame as TREC lines, ranks numbered in trec_eval order."""
    ordered = frame.sort(
        ["query_id", "score", "doc_id"], descending=[False, True, True], maintain_order=True
    )
    out = ordered.select(
        pl.col("query_id"),
        pl.lit("Q0").alias("q0"),
        pl.col("doc_id"),
        (pl.int_range(pl.len()).over("query_id") + 1).alias("rank"),
        pl.col("score").cast(pl.String).alias("score"),
        pl.lit(tag).alias("tag"),
    )
    return out.write_csv(separator=" ", include_header=False, quote_style="never").encode()
