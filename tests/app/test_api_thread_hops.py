"""The thread-pool hand-offs of a grader's two requests over the API, counted (never
timed): each hop is a worker thread's wake-up and a hand-back to the event loop, with the
GIL passed both ways. A next task and a grade take two (the token's dependency, then the
route's work with its answer checked on the loop); a request with a bad token and a bad
query or body still answers 401, the token being resolved before they are checked."""

from __future__ import annotations

import uuid

import anyio.to_thread
import pytest
from fastapi.testclient import TestClient

from rankscope.app.factory import create_app
from rankscope.services import sessions


class _Hops:
    """Calls of ``anyio.to_thread.run_sync`` (what Starlette's and FastAPI's thread pool
    go through) made by the app."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = anyio.to_thread.run_sync

        async def counted(*args, **kwargs):
            self.count += 1
            return await real(*args, **kwargs)

        monkeypatch.setattr(anyio.to_thread, "run_sync", counted)

    def take(self) -> int:
        count, self.count = self.count, 0
        return count


def test_a_next_task_and_a_grade_take_two_thread_hops(store, world, tmp_path, monkeypatch):
    """Before: three each (a sync route's answer was checked in the pool, a third hop)."""
    token = sessions.create_token(store, world.judge.name, "hops")
    client = TestClient(create_app(store, tmp_path / "appdata", boundary=world.boundary),
                        base_url="http://testserver")
    headers = {"Authorization": f"Bearer {token}"}
    ev = world.evaluation.id
    hops = _Hops(monkeypatch)
    for _ in range(2):
        hops.take()
        answer = client.get(f"/api/v1/evaluations/{ev}/tasks/next", headers=headers)
        assert answer.status_code == 200, answer.text
        assert hops.take() == 2
        task = answer.json()[0]["task_id"]
        answer = client.post(f"/api/v1/evaluations/{ev}/grades", headers=headers, json={
            "batch_id": uuid.uuid4().hex, "grades": [{"task_id": task, "value": 2}]})
        assert answer.status_code == 200 and answer.json()["accepted"] == 1, answer.text
        assert hops.take() == 2


def test_a_bad_token_answers_401_before_a_bad_query_or_body(store, world, tmp_path):
    client = TestClient(create_app(store, tmp_path / "appdata", boundary=world.boundary),
                        base_url="http://testserver")
    ev = world.evaluation.id
    bad = {"Authorization": "Bearer not-a-token"}
    for answer in (
            client.get(f"/api/v1/evaluations/{ev}/tasks/next", headers=bad,
                       params={"n": 0}),
            client.post(f"/api/v1/evaluations/{ev}/grades", headers=bad,
                        json={"batch_id": 5, "grades": "none"}),
            client.post(f"/api/v1/evaluations/{ev}/grades",
                        json={"batch_id": "b", "grades": [{"task_id": 1, "value": True}]})):
        assert answer.status_code == 401, answer.text
    # JSON that does not parse is refused before anything else (FastAPI reads it first)
    answer = client.post(f"/api/v1/evaluations/{ev}/grades", content=b"{no",
                         headers={**bad, "Content-Type": "application/json"})
    assert answer.status_code == 422, answer.text
