"""Every way a lease is made follows one rule: a result is leased to a grader only while
its counted grades plus the other graders' live leases are fewer than it wants, its item
held meanwhile. Many graders at once on PostgreSQL (no result leased or graded past the
one grade wanted, none shown twice to a grader), a result opened by its address, an undo,
and the last result held by another transaction (waited for, a little)."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from rankscope.services import accounts, assignment, grading, projects
from rankscope.services.grading import GradeInput
from rankscope.store.models import utcnow
from rankscope.store.models_app import Evaluation, Grade, Lease, Task

from .conftest import make_world

pg_only = pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)


def _filled(store, ev_id: int) -> dict[int, int]:
    """Each task's active grades plus live leases, counted here from the raw rows (every
    rater of these tests counts)."""
    now = utcnow()
    with store.read() as s:
        tasks = dict(s.execute(select(Task.id, Task.item_id)
                               .where(Task.evaluation_id == ev_id)).all())
        graded = Counter(s.scalars(select(Grade.item_id).where(Grade.active)))
        leased = Counter(tasks[t] for t, until in s.execute(
            select(Lease.task_id, Lease.expires_at)).all() if until > now and t in tasks)
    return {t: graded[item] + leased[item] for t, item in tasks.items()}


def _judges(store, w, n: int) -> list:
    judges = []
    for i in range(n):
        judge = accounts.create_user(store, f"g{i:02d}", "judge", "p" * 8)
        projects.add_member(store, w.curator, w.project.id, judge.name, "judge")
        judges.append(judge)
    return judges


@pytest.mark.slow
@pg_only
def test_many_graders_at_once_never_lease_past_the_grades_wanted(store, collection):
    """Ten graders ask for a task at the same moment (a barrier), grade it, and again,
    three times; each result wants one grade. Without the item's lock two of them lease
    the same result (both read it free) and the second grade is refused."""
    w = make_world(store, collection, grades_wanted=1)
    ev_id = w.evaluation.id
    judges = _judges(store, w, 10)
    together = threading.Barrier(len(judges), timeout=60)
    shown: dict[str, list[int]] = {j.name: [] for j in judges}
    errors: list[str] = []

    def grader(judge) -> None:
        for _ in range(3):
            try:
                together.wait()
                task = assignment.next_task(store, judge, ev_id)
                if task is None:
                    continue
                shown[judge.name].append(task.task_id)
                grading.submit_grade(store, judge, GradeInput(task.task_id, 1))
            except Exception as exc:  # every failure is the test's finding
                errors.append(f"{judge.name}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=grader, args=(j,)) for j in judges]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
    given = [t for tasks in shown.values() for t in tasks]
    assert len(given) == 30  # the stand-in has more results than 10 x 3
    assert len(set(given)) == len(given)  # one grade wanted: no result given twice
    filled = _filled(store, ev_id)
    assert max(filled.values()) == 1
    assert sum(filled.values()) == 30  # the 30 grades, no lease left


def test_opening_a_full_result_by_its_address_does_not_lease_it(store, collection):
    """A grader opening a result another holds the one slot of (its page's address, a
    walk) sees it without a lease; before, opening it leased it to them too."""
    w = make_world(store, collection, grades_wanted=1)
    ev_id = w.evaluation.id
    held = assignment.next_task(store, w.judge, ev_id)
    seen = assignment.task_view(store, w.judge2, held.task_id)
    assert seen.lease_until is None
    assert _filled(store, ev_id)[held.task_id] == 1
    # a result with its slot free is leased to whoever opens it
    other = assignment.next_task(store, w.judge3, ev_id)
    assignment.release(store, w.judge3, other.task_id)
    assert assignment.task_view(store, w.judge2, other.task_id).lease_until is not None
    assert _filled(store, ev_id)[other.task_id] == 1


def test_an_undo_does_not_lease_a_result_another_holds(store, collection):
    """One grade wanted: kim holds a result's lease, jay grades it without one (the API
    allows it while a slot is free), then undoes: the slot is kim's again; before, the
    undo leased it to jay too (two leases on a result wanting one grade)."""
    w = make_world(store, collection, grades_wanted=1)
    ev_id = w.evaluation.id
    held = assignment.next_task(store, w.judge2, ev_id)
    grading.submit_grade(store, w.judge, GradeInput(held.task_id, 2))
    assert grading.undo_last(store, w.judge, ev_id) == held.task_id
    assert _filled(store, ev_id)[held.task_id] == 1
    with store.read() as s:
        holders = list(s.scalars(select(Lease.rater_id).where(Lease.task_id == held.task_id)))
    assert len(holders) == 1
    # with the slot free, the undo gives the result back to its grader, leased
    grading.submit_grade(store, w.judge2, GradeInput(held.task_id, 1))
    assert grading.undo_last(store, w.judge2, ev_id) == held.task_id
    assert assignment.task_view(store, w.judge2, held.task_id).lease_until is not None


def _one_left(store, w) -> int:
    """Grade every result but one (as kim); the one left."""
    ev_id = w.evaluation.id
    every = assignment.next_tasks(store, w.judge2, ev_id, n=500)
    last = every.pop()
    for t in every:
        grading.submit_grade(store, w.judge2, GradeInput(t.task_id, 1))
    assignment.release(store, w.judge2, last.task_id)
    return last.task_id


def _hold_item_of(store, task_id: int) -> tuple[Session, int]:
    """A transaction holding the task's item (as a grade of it does), left open."""
    session = Session(store.engine)
    session.begin()
    item = session.get(Task, task_id).item_id
    assignment.hold_items(session, [item])
    return session, session.connection().exec_driver_sql("SELECT pg_backend_pid()").scalar()


def _waits_on(store, holder: int) -> int:
    with store.engine.connect() as probe:
        return int(probe.execute(text(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
            "AND :holder = ANY(pg_blocking_pids(pid))"), {"holder": holder}).scalar())


def _wait_until_it_waits_on(store, holder: int, thread: threading.Thread) -> None:
    """Until ``thread`` waits for ``holder``'s lock (30 s at most; failing if it ended)."""
    waiting = 0
    for _ in range(600):
        waiting = _waits_on(store, holder)
        if waiting or not thread.is_alive():
            break
        time.sleep(0.05)
    assert waiting == 1 and thread.is_alive()


def _batch_while_held(store, task_id: int, meanwhile, actor, ev_id: int, batch_id: str,
                      grades: list[GradeInput]) -> dict:
    """A batch sent from a thread while another transaction holds ``task_id``'s item: once
    the batch waits on it, ``meanwhile(session)`` runs in the holder's transaction, which
    then commits; the batch's answer."""
    session, holder = _hold_item_of(store, task_id)
    got: dict[str, dict] = {}
    try:
        thread = threading.Thread(target=lambda: got.update(answer=grading.submit_batch(
            store, actor, ev_id, batch_id, grades)))
        thread.start()
        _wait_until_it_waits_on(store, holder, thread)
        meanwhile(session)
        session.commit()
    finally:
        session.close()
    thread.join(timeout=60)
    assert not thread.is_alive()
    return got["answer"]


@pg_only
def test_the_last_result_held_by_another_is_waited_for(store, collection, monkeypatch):
    """When every result left is held by another transaction, the next task waits for it
    (a while) rather than say nothing is left: here it gets it once the holder ends."""
    monkeypatch.setattr(assignment, "WAIT_MS", 60_000)
    w = make_world(store, collection, grades_wanted=1)
    last = _one_left(store, w)
    session, holder = _hold_item_of(store, last)
    got: dict[str, object] = {}
    try:
        thread = threading.Thread(target=lambda: got.update(
            task=assignment.next_task(store, w.judge, w.evaluation.id)))
        thread.start()
        _wait_until_it_waits_on(store, holder, thread)
        session.commit()
    finally:
        session.close()
    thread.join(timeout=60)
    assert not thread.is_alive()
    assert got["task"] is not None and got["task"].task_id == last  # type: ignore[attr-defined]


@pg_only
def test_a_wait_that_runs_out_answers_nothing_left_without_an_error(store, collection,
                                                                      monkeypatch):
    """The holder never lets go while the grader asks: after its wait the next task says
    none is free (no error, no lease), and the grader's transaction went on (the lock
    timeout rolled back to a savepoint, the setting restored)."""
    monkeypatch.setattr(assignment, "WAIT_MS", 50)
    w = make_world(store, collection, grades_wanted=1)
    last = _one_left(store, w)
    session, _ = _hold_item_of(store, last)
    try:
        def work(s: Session) -> tuple[list[int], str]:
            ev = s.get(Evaluation, w.evaluation.id)
            from rankscope.services.accounts import rater_for

            got = assignment.take_tasks(s, ev, rater_for(s, w.judge), 1)
            return [t.task_id for t in got], str(s.scalar(text(
                "SELECT current_setting('lock_timeout')")))

        got, timeout = store.write(work)
    finally:
        session.close()
    assert got == []
    assert timeout != "50ms"
    with store.read() as s:
        assert s.scalar(select(Lease.id).where(Lease.task_id == last)) is None
    # free again: it is given
    assert assignment.next_task(store, w.judge, w.evaluation.id).task_id == last


@pg_only
def test_a_batch_takes_its_items_in_one_order(store, collection):
    """Two batches grading the same results in opposite orders could each hold one result
    and wait for the other (a deadlock: PostgreSQL aborts one of them). A batch takes its
    items in id order before grading any: here a transaction holds the lower item, the
    batch (higher first, as its client sent it) waits for it holding nothing else, so the
    holder can still take the higher item; once it ends, both grades are accepted."""
    from rankscope.store.models_app import Item

    w = make_world(store, collection, grades_wanted=1)
    ev_id = w.evaluation.id
    two = assignment.next_tasks(store, w.judge, ev_id, n=2)
    with store.read() as s:
        item_of = {t.task_id: s.get(Task, t.task_id).item_id for t in two}
    low, high = sorted(item_of, key=item_of.__getitem__)
    assert item_of[low] < item_of[high]

    def take_the_higher(session: Session) -> None:
        # NOWAIT: fails at once if the waiting batch holds the higher item
        session.execute(select(Item.id).where(Item.id == item_of[high])
                        .with_for_update(nowait=True))

    answer = _batch_while_held(store, low, take_the_higher, w.judge, ev_id, "opposite",
                               [GradeInput(high, 1), GradeInput(low, 0)])
    assert answer["accepted"] == 2, answer


@pg_only
def test_a_batch_of_one_reads_its_results_counts_after_the_wait_for_its_item(store,
                                                                            collection):
    """A grade's task is read with its item's lock (one statement): when another
    transaction holds the item and fills the result's last slot, the batch waits, and the
    counts it reads after the wait include that grade, so its own is refused and the result
    keeps the one grade it wants."""
    w = make_world(store, collection, grades_wanted=1)
    ev_id = w.evaluation.id
    task_id = assignment.next_task(store, w.judge, ev_id).task_id

    def fill_the_last_slot(session: Session) -> None:
        grading.grade_task(session, accounts.rater_for(session, w.judge2),
                           session.get(Task, task_id), session.get(Evaluation, ev_id),
                           GradeInput(task_id, 1))

    answer = _batch_while_held(store, task_id, fill_the_last_slot, w.judge, ev_id, "late",
                               [GradeInput(task_id, 2)])
    assert answer["accepted"] == 0, answer
    assert "grade(s) it wants" in answer["results"][0]["error"]
    with store.read() as s:
        item = s.get(Task, task_id).item_id
        assert list(s.scalars(select(Grade.value).where(Grade.item_id == item,
                                                        Grade.active))) == [1.0]
