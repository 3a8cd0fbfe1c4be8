"""Spark (local mode) gives the local engine's numbers: a few small cases only (CI time)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import rankscope

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")
pytest.importorskip("pandas")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs Java (none found)", allow_module_level=True)

from .conftest import make_case, write_trec

# The data are generated with queries missing on either side, on purpose: the partial-overlap
# warning is tested in tests/data/test_overlap.py; here the subject is the numbers.
PARTIAL_OVERLAP = r"ignore:(\d+ of the \d+ quer|no query of):rankscope.errors.RankscopeWarning"
pytestmark = [
    pytest.mark.filterwarnings("ignore::FutureWarning"),  # pyspark on pandas 3
    pytest.mark.filterwarnings(PARTIAL_OVERLAP),
]

# every family is computed per query (ERR too: an exact product per query), so
# how the queries are split between Spark tasks cannot change a bit
METRICS = ["ndcg@10", "map@100", "mrr@10", "P@10", "recall@100", "AP", "ndcg", "bpref",
           "Rprec", "num_ret", "ERR@10", "ERR"]


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[1]")
        .appName("rankscope-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    yield session
    session.stop()


def _frame(spark: Any, frame: pl.DataFrame) -> Any:
    return spark.createDataFrame(frame.to_pandas())


def _same(a: rankscope.EvaluationResult, b: rankscope.EvaluationResult) -> None:
    assert a.query_ids == b.query_ids
    np.testing.assert_array_equal(a.values, b.values)
    assert a.means == b.means
    assert (a.info.n_qrels_queries, a.info.n_run_queries, a.info.n_evaluated) == (
        b.info.n_qrels_queries, b.info.n_run_queries, b.info.n_evaluated)
    assert a.info.missing_from_run == b.info.missing_from_run
    assert a.info.run_only == b.info.run_only


@pytest.mark.parametrize("queries", ["qrels", "intersection", "nonnull"])
def test_dataframes_give_the_local_numbers(spark: Any, queries: str) -> None:
    import rankscope.spark

    qrels, run = make_case(7)
    local = rankscope.evaluate(qrels, run, METRICS, queries=queries)  # type: ignore[arg-type]
    distributed = rankscope.spark.evaluate(
        _frame(spark, qrels), _frame(spark, run), METRICS, queries=queries,  # type: ignore[arg-type]
        buckets=3,
    )
    _same(local, distributed)


def test_trec_paths_give_the_local_numbers(spark: Any, tmp_path: Path) -> None:
    import rankscope.spark

    qpath, rpath = write_trec(*make_case(8), tmp_path)
    local = rankscope.evaluate(qpath, rpath, METRICS)
    distributed = rankscope.spark.evaluate_paths(str(qpath), str(rpath), METRICS, spark=spark)
    _same(local, distributed)


def test_duplicates_are_reported(spark: Any) -> None:
    import rankscope.spark
    from rankscope.errors import DuplicateDocumentError

    run = pl.DataFrame({"query_id": ["a", "a"], "doc_id": ["d", "d"], "score": [1.0, 2.0]})
    qrels = pl.DataFrame({"query_id": ["a"], "doc_id": ["d"], "grade": [1.0]})
    with pytest.raises(DuplicateDocumentError):
        rankscope.spark.evaluate(_frame(spark, qrels), _frame(spark, run), ["P@1"])
    kept = rankscope.spark.evaluate(_frame(spark, qrels), _frame(spark, run), ["P@1"],
                                    on_duplicate="max")
    assert kept["P@1"] == 1.0  # one document, relevant, ranked first: P@1 = 1/1
