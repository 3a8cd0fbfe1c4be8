"""Fixtures shared by several test directories."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(params=["inline", "threaded"])
def both_ranking_paths(request: pytest.FixtureRequest,
                       monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Run the test twice: ranked on the calling thread alone, and with threads.

    ``rank`` keys, matches and checks duplicates on threads beside the ordering
    only from ``_THREADED_FROM`` rows up; test inputs are small, so without this
    the threaded path would go untested.
    """
    from rankscope.engine import ranking

    monkeypatch.setattr(ranking, "_THREADED_FROM", 1 << 62 if request.param == "inline" else 0)
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
