"""Two servers on one PostgreSQL database sent the same grade batch at the same moment:
both answer as the first commit did, and the grades are counted once.

One server's writer serialises its own writes (a batch sent twice to it finds the first
one's row), so the race needs two stores: the second passes the "seen before?" check while
the first has inserted, but not committed, the batch's row; its own insert then fails the
unique constraint and ``submit_batch`` answers again from the committed row.
"""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import func, select

from rankscope.services import assignment, grading
from rankscope.services.grading import GradeInput
from rankscope.store.models_app import Grade, GradeBatch

WAIT = 20.0  # seconds: a bounded wait for the other thread; the test fails if it runs out


def test_the_same_batch_from_two_servers_at_once_is_counted_once(db_url, store, world,
                                                                  monkeypatch):
    if not db_url.startswith("postgresql"):
        pytest.skip("two writers racing on one database: PostgreSQL only (SQLite's writer "
                    "lock serialises two stores)")
    from rankscope.app.server import open_app_store

    tasks = assignment.next_tasks(store, world.judge, world.evaluation.id, n=3)
    given = [GradeInput(t.task_id, 2) for t in tasks]
    first_holds_its_row = threading.Event()
    second_found_nothing = threading.Event()
    checks = {"ready": 0}
    real_insert, real_ready = grading._insert_row, grading.require_ready

    def insert_then_wait(session, model, row, **more):
        done = real_insert(session, model, row, **more)
        if model is GradeBatch and not first_holds_its_row.is_set():
            first_holds_its_row.set()  # the first writer's row is in, uncommitted
            second_found_nothing.wait(WAIT)
        return done

    def ready_counted(ev):
        # reached only when the "seen before?" lookup found no row for the batch
        checks["ready"] += 1
        if checks["ready"] == 2:
            second_found_nothing.set()
        return real_ready(ev)

    monkeypatch.setattr(grading, "_insert_row", insert_then_wait)
    monkeypatch.setattr(grading, "require_ready", ready_counted)
    other = open_app_store(db_url)
    answers: dict[str, dict] = {}
    failures: list[BaseException] = []

    def send(name, target):
        try:
            answers[name] = grading.submit_batch(target, world.judge, world.evaluation.id,
                                                 "race-1", given)
        except BaseException as exc:  # reported below, not lost in the thread
            failures.append(exc)

    try:
        first = threading.Thread(target=send, args=("first", store))
        first.start()
        assert first_holds_its_row.wait(WAIT)
        second = threading.Thread(target=send, args=("second", other))
        second.start()
        first.join(WAIT)
        second.join(WAIT)
        assert not first.is_alive() and not second.is_alive()
    finally:
        other.close()
    assert not failures, failures
    assert second_found_nothing.is_set()  # the race happened: both passed the lookup
    assert not answers["first"]["replayed"] and answers["second"]["replayed"]
    strip = {k: v for k, v in answers["first"].items() if k != "replayed"}
    assert {k: v for k, v in answers["second"].items() if k != "replayed"} == strip
    assert answers["first"]["accepted"] == len(given)
    with store.read() as session:
        active = session.scalar(select(func.count(Grade.id)).where(Grade.active.is_(True)))
        batches = session.scalar(select(func.count(GradeBatch.id)))
    assert active == len(given) and batches == 1
