"""Fixtures shared by several test directories."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(params=["inline", "threaded"])
def both_ranking_paths(request: pytest.FixtureRequest,
                       monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Run the test twice: on the paths of small runs, and on those of large runs.

    ``rank`` works on the calling thread alone, probes the judgments' hash
    table, looks a few query ids up in a dict and gathers by indexing below a
    few tens of thousands of rows; from there up it keys, matches and checks
    duplicates on threads beside the ordering, joins, and replaces ids
    vectorized. Test inputs are small, so without this the large-run paths
    would go untested ("inline": every run takes the small-run paths;
    "threaded": every run takes the large-run paths).
    """
    from rankscope.data import ranking_order, run_queries
    from rankscope.engine import ranking, ranking_match

    small = request.param == "inline"
    monkeypatch.setattr(ranking, "_THREADED_FROM", 1 << 62 if small else 0)
    monkeypatch.setattr(ranking_match, "PROBED_BELOW", 1 << 62 if small else 0)
    monkeypatch.setattr(run_queries, "LISTED_UP_TO", 1 << 62 if small else 0)
    monkeypatch.setattr(ranking_order, "_INDEXED_BELOW", 1 << 62 if small else 0)
    yield request.param
