"""Evaluate on Spark: the same numbers as the local engine, distributed by query.

Install with ``pip install 'rankscope[spark]'`` (pyspark, pyarrow, pandas;
Spark itself needs Java). Every query's rows are sent to one task, where the
local engine ranks and scores them; the driver only collects one row per
query. See ``docs/spark.md`` for ``spark-submit`` on a cluster.

>>> import rankscope.spark                                     # doctest: +SKIP
>>> result = rankscope.spark.evaluate(qrels_df, run_df, ["nDCG@10", "AP"])
"""

from __future__ import annotations

import os
import sys
from typing import Any, Unpack

from rankscope.engine.evaluate import MetricsArg
from rankscope.engine.options import EvalOptions, OptionFields
from rankscope.errors import DependencyError
from rankscope.result import EvaluationResult

__all__ = ["evaluate", "evaluate_paths"]


def _require_spark() -> None:
    for package in ("pyspark", "pyarrow", "pandas"):
        try:
            __import__(package)
        except ImportError:
            raise DependencyError(package, "spark", "evaluating on Spark") from None


def evaluate(
    qrels_df: Any,
    run_df: Any,
    metrics: MetricsArg,
    *,
    per_query: bool = False,
    run_name: str = "run",
    buckets: int | None = None,
    options: EvalOptions | None = None,
    **option_fields: Unpack[OptionFields],
) -> EvaluationResult:
    """Evaluate a run held in a Spark DataFrame against qrels in another.

    Parameters
    ----------
    qrels_df : pyspark.sql.DataFrame
        Columns ``query_id``, ``doc_id``, ``grade`` (null = not graded).
    run_df : pyspark.sql.DataFrame
        Columns ``query_id``, ``doc_id``, ``score``. With ``ties="input"`` or
        ``on_duplicate="first"``, "input order" is the DataFrame's row order.
    metrics, per_query, options, **option_fields
        As in :func:`rankscope.evaluate` (one
        :class:`~rankscope.engine.options.EvalOptions`, or its fields).
    run_name : str, default "run"
        The run's name in the result.
    buckets : int, optional
        How many groups of queries to make (default: 4 per core of the
        cluster); each group is one task.

    Returns
    -------
    EvaluationResult
        Identical to :func:`rankscope.evaluate` on the same data.
    """
    _require_spark()
    from rankscope.spark._engine import evaluate_frames

    return evaluate_frames(
        qrels_df, run_df, metrics, per_query=per_query,
        options=EvalOptions.merged(options, option_fields), run_name=run_name, buckets=buckets,
    )


def evaluate_paths(
    qrels: str,
    run: str,
    metrics: MetricsArg,
    *,
    spark: Any = None,
    qrels_format: str | None = None,
    run_format: str | None = None,
    run_name: str | None = None,
    **options: Any,
) -> EvaluationResult:
    """Read qrels and a run (Parquet or TREC paths Spark can read) and evaluate.

    ``spark`` is a SparkSession (default: the active one, or a new one).
    Other keyword options are those of :func:`evaluate`.
    """
    _require_spark()
    from pyspark.sql import SparkSession

    from rankscope.spark._io import read_frame

    session = spark or SparkSession.getActiveSession()
    if session is None:
        # Local runs: Python workers use this interpreter (where rankscope is
        # installed) unless the environment already says otherwise.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        session = SparkSession.builder.appName("rankscope").getOrCreate()
    qrels_df = read_frame(session, qrels, "qrels", qrels_format)
    run_df = read_frame(session, run, "run", run_format)
    name = run_name or run.rstrip("/").rsplit("/", 1)[-1]
    return evaluate(qrels_df, run_df, metrics, run_name=name, **options)
