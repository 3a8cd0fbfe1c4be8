"""Fixtures shared by several test directories."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(params=["inline", "threaded"])
def both_ranking_paths(request: pytest.FixtureRequest,
                       monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Run the test twice: on the paths of small runs, and on those of large runs.

    ``rank`` works on the calling thread alone, probes the judgments' hash
    table (by the ids' string views where they fit), looks a few query ids up
    in a dict and gathers by indexing below a few tens of thousands of rows;
    from there up it keys, matches and checks duplicates on threads beside the
    ordering, joins, and replaces ids vectorized. Test inputs are small, so
    without this the large-run paths would go untested ("inline": every run
    takes the small-run paths; "threaded": every run takes the large-run
    paths).
    """
    from rankscope.data import gather, run_queries
    from rankscope.engine import ranking, ranking_match

    small = request.param == "inline"
    monkeypatch.setattr(ranking, "_THREADED_FROM", 1 << 62 if small else 0)
    monkeypatch.setattr(ranking_match, "PROBED_BELOW", 1 << 62 if small else 0)
    monkeypatch.setattr(ranking_match, "VIEWED_BELOW", 1 << 62 if small else 0)
    monkeypatch.setattr(run_queries, "LISTED_UP_TO", 1 << 62 if small else 0)
    monkeypatch.setattr(gather, "_INDEXED_BELOW", 1 << 62 if small else 0)
    yield request.param


@pytest.fixture
def engine() -> Iterator[object]:
    """A local search-engine server on 127.0.0.1 (tests/search/engine_server.py)."""
    from tests.search.engine_server import EngineServer

    server = EngineServer()
    try:
        yield server
    finally:
        server.close()


NEEDS_TREC_EVAL = "need TREC_EVAL_BIN"
"""The summary line's word for the tests skipped without a trec_eval binary."""


def _skipped_for_want_of_trec_eval(report: pytest.TestReport) -> bool:
    longrepr = report.longrepr
    return (report.skipped and isinstance(longrepr, tuple) and len(longrepr) == 3
            and "TREC_EVAL_BIN" in str(longrepr[2]))


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config
                             ) -> tuple[str, str, str] | None:
    """Count the differential tests skipped without the binary apart, so the summary line
    says "N need TREC_EVAL_BIN" instead of hiding them among the other skips."""
    if _skipped_for_want_of_trec_eval(report):
        return NEEDS_TREC_EVAL, "s", "SKIPPED (no TREC_EVAL_BIN)"
    return None


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    waiting = len(terminalreporter.stats.get(NEEDS_TREC_EVAL, []))
    if waiting:
        terminalreporter.write_line(
            f"{waiting} tests need TREC_EVAL_BIN (a trec_eval 10.0 binary) and were skipped; "
            "the golden outputs in tests/trec_eval/golden ran the same cases")
