"""Every trec_eval test runs on both ranking paths (see ``tests/conftest.py``)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _every_ranking_path(both_ranking_paths: str) -> str:
    return both_ranking_paths
