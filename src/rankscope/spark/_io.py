"""Reading qrels and runs into Spark DataFrames: Parquet, or TREC text files.

Paths may be anything Spark reads (local files, ``hdfs://``, ``s3a://``,
directories of part files, globs). TREC lines are split on runs of
whitespace exactly as the local reader splits them; a line with the wrong
number of fields or a value that is not a finite number is an error that
quotes the line (Spark does not know line numbers).
"""

from __future__ import annotations

from typing import Any, Literal

from rankscope.errors import InputError, ParseError

__all__ = ["read_frame"]

Kind = Literal["qrels", "run"]

_FIELDS = {"qrels": (4, 2, 3), "run": (6, 2, 4)}  # fields, doc index, value index
_ALIASES = {
    "query_id": ("query_id", "qid", "query", "topic", "topic_id"),
    "doc_id": ("doc_id", "docid", "docno", "doc", "document", "pid"),
    "grade": ("grade", "rel", "relevance", "label", "judgment", "qrel"),
    "score": ("score", "sim", "similarity", "retrieval_score", "value"),
}


def _parquet(spark: Any, path: str, kind: Kind) -> Any:
    from pyspark.sql import functions as F

    frame = spark.read.parquet(path)
    value = "grade" if kind == "qrels" else "score"
    lowered = {c.lower(): c for c in frame.columns}
    chosen = []
    for target in ("query_id", "doc_id", value):
        found = next((lowered[a] for a in _ALIASES[target] if a in lowered), None)
        if found is None:
            raise InputError(
                f"no {target} column (accepted names: {', '.join(_ALIASES[target])}); "
                f"found {', '.join(frame.columns)}",
                source=path,
            )
        chosen.append(F.col(found).alias(target))
    return frame.select(*chosen)


def _trec(spark: Any, path: str, kind: Kind) -> Any:
    from pyspark.sql import functions as F

    n_fields, doc_at, value_at = _FIELDS[kind]
    value = "grade" if kind == "qrels" else "score"
    lines = spark.read.text(path)
    fields = F.split(F.trim(F.regexp_replace("value", r"[ \t\x0B\f\r]+", " ")), " ")
    parsed = lines.select(F.col("value").alias("line"), fields.alias("f")).where(
        (F.size("f") > 0) & (F.col("f")[0] != "") & ~F.col("f")[0].startswith("#")
    )
    number = F.col("f")[value_at].try_cast("double")
    checked = parsed.select(
        "line",
        F.col("f")[0].alias("query_id"),
        F.col("f")[doc_at].alias("doc_id"),
        number.alias(value),
        (F.size("f") == n_fields).alias("_ok_fields"),
    )
    bad = checked.where(
        ~F.col("_ok_fields") | F.col(value).isNull() | F.isnan(value)
        | (F.abs(F.col(value)) == float("inf"))
    ).select("line").limit(1).collect()
    if bad:
        layout = "query iteration document grade" if kind == "qrels" else (
            "query Q0 document rank score tag"
        )
        raise ParseError(
            f"not a TREC {kind} line ({layout}) or its value is not a finite number",
            source=path,
            value=str(bad[0][0]),
        )
    return checked.select("query_id", "doc_id", value)


def read_frame(spark: Any, path: str, kind: Kind, fmt: str | None = None) -> Any:
    """A Spark DataFrame of canonical columns from a Parquet or TREC path."""
    if fmt is None:
        fmt = "parquet" if path.rstrip("/").lower().endswith((".parquet", ".pq")) else "trec"
    if fmt == "parquet":
        return _parquet(spark, path, kind)
    if fmt == "trec":
        return _trec(spark, path, kind)
    raise InputError(f"--engine spark reads trec or parquet, not {fmt!r}", source=path)
