"""The distributed evaluation: whole queries per task, the local engine inside.

Both DataFrames get a bucket column (a hash of the query id modulo the number
of buckets), so every row of a query lands in the same bucket; the two sides
are cogrouped by bucket and each bucket is evaluated by the local engine
(:func:`~rankscope.engine.ranking.rank` and the kernels) with the qrels' global
highest grade passed in. The driver collects one row per query (a few floats
each), orders the queries and aggregates exactly as :func:`rankscope.evaluate`
does, so the numbers are identical.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from rankscope.engine.assemble import QueryAccount, assemble_result
from rankscope.engine.conventions import resolve_plan
from rankscope.engine.evaluate import MetricsArg
from rankscope.engine.options import EvalOptions
from rankscope.errors import InputError
from rankscope.result import EvaluationResult

__all__ = ["evaluate_frames"]

_ORDER = "_rankscope_order"
_BUCKET = "_rankscope_bucket"


def _no_line(row: int) -> int | None:
    del row
    return None  # DataFrame rows have no file lines


def _task(
    metric_names: list[str],
    readings: list[Any],
    opts: EvalOptions,
    max_grade: float,
) -> Any:
    """The function each task runs on one bucket (closes over plain values only)."""

    def run_bucket(qrels_table: Any, run_table: Any) -> Any:
        import polars as pl
        import pyarrow as pa

        from rankscope.data.tables import Qrels, Run
        from rankscope.engine.evaluate import compute_ranked, rank_plan, resolve_metrics
        from rankscope.errors import RankscopeError
        from rankscope.metrics.conventions import Resolved

        # canonical names parse back to the very metrics the driver resolved
        metrics = [m for _, m in resolve_metrics(metric_names)]
        plan = [Resolved(name, metric, reading)
                for name, metric, reading in zip(metric_names, metrics, readings, strict=True)]
        qframe = cast(pl.DataFrame, pl.from_arrow(qrels_table)).select(
            "query_id", "doc_id", "grade"
        )
        rframe = cast(pl.DataFrame, pl.from_arrow(run_table)).sort(_ORDER).select(
            "query_id", "doc_id", "score"
        )
        schema = pa.schema(
            [("query_id", pa.string()), ("in_run", pa.bool_()), ("in_qrels", pa.bool_()),
             ("error", pa.string())] + [(f"m{j}", pa.float64()) for j in range(len(metrics))]
        )
        try:
            qrels = Qrels(qframe, source="<spark qrels>", _locate=_no_line)
            run = Run(rframe, source="<spark run>", on_duplicate=opts.on_duplicate,
                      _locate=_no_line)
            ranked = rank_plan(qrels, run, plan, opts, queries="qrels", max_grade=max_grade)
            lists = ranked.lists
            values = compute_ranked(ranked)
        except RankscopeError as exc:
            error_row: dict[str, list[Any]] = {n: [None] for n in schema.names}
            message = getattr(exc, "message", str(exc))
            value = getattr(exc, "value", None) or ""
            error_row["error"] = [f"{type(exc).__name__}\t{message}\t{value}"]
            return pa.Table.from_pydict(error_row, schema=schema)
        only = lists.run_only_queries
        data: dict[str, Any] = {
            "query_id": [*lists.query_ids, *only],
            "in_run": [*lists.in_run.tolist(), *([True] * len(only))],
            "in_qrels": [True] * lists.n_queries + [False] * len(only),
            "error": [None] * (lists.n_queries + len(only)),
        }
        for j in range(len(metrics)):
            data[f"m{j}"] = np.concatenate([values[:, j], np.full(len(only), np.nan)])
        return pa.Table.from_pydict(data, schema=schema)

    return run_bucket


def evaluate_frames(
    qrels_df: Any,
    run_df: Any,
    metrics: MetricsArg,
    *,
    per_query: bool = False,
    options: EvalOptions,
    run_name: str = "run",
    buckets: int | None = None,
) -> EvaluationResult:
    """See :func:`rankscope.spark.evaluate`."""
    from pyspark.sql import functions as F

    plan = resolve_plan(metrics, options)
    pairs = [(found.label, found.metric) for found in plan]
    metric_list = [m for _, m in pairs]
    labels = [label for label, _ in pairs]
    spark = run_df.sparkSession
    n_buckets = buckets or max(1, 4 * spark.sparkContext.defaultParallelism)

    qrels_df = qrels_df.select(
        F.col("query_id").cast("string"), F.col("doc_id").cast("string"),
        F.col("grade").cast("double"),
    )
    run_df = run_df.select(
        F.col("query_id").cast("string"), F.col("doc_id").cast("string"),
        F.col("score").cast("double"),
    ).withColumn(_ORDER, F.monotonically_increasing_id())
    top = qrels_df.agg(F.max("grade")).collect()[0][0]
    max_grade = float(top) if top is not None else 0.0

    bucket = F.pmod(F.hash("query_id"), F.lit(n_buckets))
    q_side = qrels_df.withColumn(_BUCKET, bucket).groupBy(_BUCKET)
    r_side = run_df.withColumn(_BUCKET, bucket).groupBy(_BUCKET)
    schema = "query_id string, in_run boolean, in_qrels boolean, error string, " + ", ".join(
        f"m{j} double" for j in range(len(metric_list))
    )
    task = _task([m.name for m in metric_list], [found.reading for found in plan], options,
                 max_grade)
    rows = q_side.cogroup(r_side).applyInArrow(task, schema=schema).toArrow()
    return _assemble(rows, pairs, labels, options, run_name, per_query)


def _assemble(
    table: Any,
    pairs: list[tuple[str, Any]],
    labels: list[str],
    opts: EvalOptions,
    run_name: str,
    per_query: bool,
) -> EvaluationResult:
    import polars as pl

    import rankscope.errors as errors_module

    frame = cast(pl.DataFrame, pl.from_arrow(table))
    errors = frame.get_column("error").drop_nulls()
    if errors.len():
        kind, message, value = [*str(errors.sort()[0]).split("\t"), "", ""][:3]
        error_class = getattr(errors_module, kind, InputError)
        if not (isinstance(error_class, type) and issubclass(error_class, InputError)):
            error_class = InputError
        raise error_class(message, source="<spark>", value=value or None)
    frame = frame.sort("query_id")
    qrels_rows = frame.filter(pl.col("in_qrels"))
    run_ids = frame.filter(pl.col("in_run")).get_column("query_id").to_list()
    kept = qrels_rows.filter(pl.col("in_run")) if opts.queries == "intersection" else qrels_rows
    values = kept.select([f"m{j}" for j in range(len(pairs))]).to_numpy().astype(np.float64)
    values = values.reshape(kept.height, len(pairs))
    return assemble_result(
        labels, [m for _, m in pairs], kept.get_column("query_id").to_list(), values,
        options=opts, run_name=run_name, per_query=per_query,
        in_run=kept.get_column("in_run").to_numpy().astype(bool),
        account=QueryAccount.of(qrels_rows.get_column("query_id").to_list(), run_ids),
    )
