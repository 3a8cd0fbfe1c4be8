"""The bounded-memory streaming engine gives exactly the local engine's numbers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rankscope
from rankscope.engine.streaming import evaluate_streaming, query_batches
from rankscope.errors import DuplicateDocumentError, InputError

from .conftest import METRICS

# The data are generated with queries missing on either side, on purpose: the partial-overlap
# warning is tested in tests/data/test_overlap.py; here the subject is the numbers.
PARTIAL_OVERLAP = r"ignore:(\d+ of the \d+ quer|no query of):rankscope.errors.RankscopeWarning"
pytestmark = pytest.mark.filterwarnings(PARTIAL_OVERLAP)


def _same(a: rankscope.EvaluationResult, b: rankscope.EvaluationResult) -> None:
    assert a.query_ids == b.query_ids
    assert a.labels == b.labels
    np.testing.assert_array_equal(a.values, b.values)  # NaN == NaN here
    assert a.means == b.means
    assert a.info == b.info


@pytest.mark.parametrize("memory", [60_000, 10**9])
def test_streaming_equals_local(case: tuple[Path, Path], memory: int) -> None:
    qrels, run = case
    # 60 kB of budget reads the run in 5 kB chunks: many batches, queries cut across chunks
    _same(rankscope.evaluate(qrels, run, METRICS),
          evaluate_streaming(qrels, run, METRICS, memory=memory))


@pytest.mark.parametrize(
    "options",
    [
        {"queries": "intersection"},
        {"queries": "nonnull"},
        {"ties": "input"},
        {"unjudged": "condensed"},
        {"unjudged": "condensed", "queries": "intersection", "ties": "input"},
    ],
)
def test_streaming_equals_local_under_every_policy(
    case: tuple[Path, Path], options: dict[str, str]
) -> None:
    qrels, run = case
    _same(rankscope.evaluate(qrels, run, METRICS, **options),  # type: ignore[arg-type]
          evaluate_streaming(qrels, run, METRICS, memory=60_000, **options))  # type: ignore[arg-type]


def test_batches_hold_whole_queries(case: tuple[Path, Path]) -> None:
    _, run = case
    seen: list[str] = []
    rows = 0
    for frame, first_row, _ in query_batches(run, chunk_bytes=300):
        assert first_row == rows
        rows += frame.height
        ids = frame.get_column("query_id").unique(maintain_order=True).to_list()
        assert not set(ids) & set(seen)  # no query is split over two batches
        seen.extend(ids)
    assert rows == sum(1 for _ in run.open())


def test_ungrouped_run_is_an_error_with_its_line(tmp_path: Path) -> None:
    qrels = tmp_path / "q.txt"
    qrels.write_text("a 0 d1 1\nb 0 d2 1\n")
    run = tmp_path / "r.txt"
    run.write_text("a Q0 d1 1 2.0 t\nb Q0 d2 1 2.0 t\n# note\na Q0 d3 2 1.0 t\n")
    with pytest.raises(InputError) as err:
        evaluate_streaming(qrels, run, ["P@1"], memory=4096 * 12)
    assert err.value.line == 4
    assert err.value.value == "a"


def test_duplicate_names_the_real_line(tmp_path: Path) -> None:
    qrels = tmp_path / "q.txt"
    qrels.write_text("a 0 d1 1\n")
    lines = [f"q{i} Q0 d{j} {j} {10 - j} t\n" for i in range(200) for j in range(5)]
    lines.append("a Q0 d1 1 2.0 t\na Q0 d1 2 1.0 t\n")
    run = tmp_path / "r.txt"
    run.write_text("".join(lines))
    with pytest.raises(DuplicateDocumentError) as err:
        evaluate_streaming(qrels, run, ["P@1"], memory=2000 * 12)
    assert err.value.line == 1002  # 1000 lines before "a", then its second line
