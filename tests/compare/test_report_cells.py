"""The report's per-query texts: each distinct value formatted once, each cell as by definition."""

from __future__ import annotations

import numpy as np
import pytest

from rankscope.compare.comparison import compare

pytest.importorskip("scipy")
pytestmark = pytest.mark.filterwarnings("ignore:too few paired queries")


def _by_definition(v: float) -> str:
    return "-" if v != v else f"{v:.4f}"


def _edge_values() -> np.ndarray:
    """Values whose four decimals are easy to get wrong: halves of the last decimal (exact
    ones, k / 32, round to even), their neighbours, signed zeros, NaN, infinities."""
    rng = np.random.default_rng(7)
    steps = np.arange(-20_001, 20_002) / 10_000
    halves = steps + 0.00005
    edges = [steps, halves, np.nextafter(halves, np.inf), np.nextafter(halves, -np.inf),
             np.nextafter(steps, np.inf), np.nextafter(steps, -np.inf),
             np.arange(-64, 65) / 32, rng.random(2_000), -rng.random(2_000),
             np.array([0.0, -0.0, 1e-300, -1e-300, 2.5e-5, -2.5e-5, 5e-5, -5e-5, 1e15, -1e15,
                       1e300, np.nan, -np.nan, np.inf, -np.inf, 123.456789, 99999.99995])]
    values = np.concatenate(edges)
    return np.concatenate([values, values[::-3]])  # repeats, in another order


def test_cells_are_each_values_own_text_on_edge_values() -> None:
    """A block's cells, written once per distinct value, are ``f"{v:.4f}"`` of each value
    ('-' for NaN), -0.0 apart from 0.0, for a 1-D column and a 2-D block alike."""
    from rankscope.render.report_tables import _cells

    values = _edge_values()
    expected = [_by_definition(v) for v in values.tolist()]
    assert _cells(values) == expected
    block = values[: values.size // 3 * 3].reshape(3, -1)
    assert _cells(block) == [[_by_definition(v) for v in row] for row in block.tolist()]
    assert _cells(np.array([0.0, -0.0, 0.0])) == ["0.0000", "-0.0000", "0.0000"]
    assert _cells(np.empty((2, 0))) == [[], []]


def test_a_metrics_runs_are_written_together_and_each_cell_is_its_value(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The per-query table formats each metric's runs in one pass (and their differences to
    the baseline in another), not a column at a time; every cell is still the value (or
    the difference) at four decimals."""
    from rankscope.render import report_tables

    qrels = {f"q{i}": {"a": 1, "b": 2, "c": 1} for i in range(6)}
    orders = ["abcxyz", "xaybzc", "cbaxyz"]
    runs = {f"r{k}": {f"q{i}": {d: 10 - j for j, d in enumerate(order[i % 3:] + order[:i % 3])}
                      for i in range(6)} for k, order in enumerate(orders)}
    result = compare(qrels, runs, ["RR", "P@2", "nDCG@3"])
    passes: list[tuple[int, ...]] = []
    original = report_tables._cells

    def counted(values: np.ndarray) -> object:
        passes.append(np.shape(values))
        return original(values)

    monkeypatch.setattr(report_tables, "_cells", counted)
    table = report_tables.per_query_table_html(result)
    assert passes == [(3, 6)] * 6  # per metric: the runs' values, their differences
    rows = [r.split("</td><td>") for r in table.split("<tr><td>")[1:]]
    base = result.run_names[0]
    for q, row in zip(result.query_ids, rows, strict=True):
        i = result.query_ids.index(q)
        cells = []
        for label in result.labels:
            cells += [_by_definition(result.column(n, label)[i]) for n in result.run_names]
            cells += [_by_definition(result.column(n, label)[i] - result.column(base, label)[i])
                      for n in result.run_names[1:]]
        assert row[0] == q and [*row[1:-1], row[-1].split("</td>")[0]] == cells
