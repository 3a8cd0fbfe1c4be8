"""Fixtures of the search tests (the local engine server, ``engine``, is in tests/conftest.py)."""

from __future__ import annotations

import pytest

from .engine_server import RECORDED, EngineServer, Reply, recorded

__all__ = ["RECORDED", "EngineServer", "FastSleep", "Reply", "recorded"]


class FastSleep:
    """An injected sleep: records the delays asked for and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def fast_sleep() -> FastSleep:
    return FastSleep()
