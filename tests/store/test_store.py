"""The store: migrations both ways, the schema the models declare, SQLite's settings, writes."""

from __future__ import annotations

import contextlib
import threading
from datetime import UTC, datetime, timedelta, timezone

import pytest

sa = pytest.importorskip("sqlalchemy")

from rankscope.errors import StoreError  # noqa: E402
from rankscope.search.types import Hit, QueryItem  # noqa: E402
from rankscope.store.db import ThreadWriter, downgrade, open_store, upgrade  # noqa: E402
from rankscope.store.models import Project, SnapshotHit  # noqa: E402
from rankscope.store.schema import metadata  # noqa: E402
from rankscope.store.snapshot_writes import (  # noqa: E402
    finish_snapshot,
    record_failure,
    record_query,
    start_snapshot,
)
from rankscope.store.snapshots import (  # noqa: E402
    find_snapshot,
    list_snapshots,
    snapshot_hits,
    snapshot_queries,
)

TABLES = {"projects", "query_sets", "queries", "endpoints", "snapshots", "snapshot_queries",
          "snapshot_hits",
          # the judging app's (migration 0002)
          "users", "user_sessions", "api_tokens", "memberships", "raters", "evaluations",
          "evaluation_snapshots", "items", "grades", "tasks", "leases", "deferrals",
          "adjudications", "grade_batches",
          # LLM judges of evaluations (migration 0003)
          "llm_judges",
          # the LLM answer cache (migration 0006_platform)
          "llm_answers",
          # tries of an evaluation's endpoint (migration 0007_tuning)
          "tries"}


def tables(engine) -> set[str]:
    return set(sa.inspect(engine).get_table_names()) - {"alembic_version"}


def test_upgrade_from_empty_matches_the_models_and_downgrade_to_base(db_url):
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    store = open_store(db_url)
    try:
        assert tables(store.engine) == TABLES
        with store.engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            diffs = compare_metadata(context, metadata)
        assert diffs == []  # the migration creates exactly what the models declare
        downgrade(store.engine, "base")
        assert tables(store.engine) == set()
        upgrade(store.engine)
        assert tables(store.engine) == TABLES
    finally:
        store.close()


def test_sqlite_is_opened_with_wal_foreign_keys_and_a_busy_timeout(tmp_path):
    store = open_store(tmp_path / "s.sqlite")
    with store.engine.connect() as con:
        assert con.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert con.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert con.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 5000
        assert con.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
    store.close()


def test_foreign_keys_are_enforced(db_url):
    store = open_store(db_url)
    try:
        with pytest.raises(sa.exc.IntegrityError):
            store.write(lambda s: s.add(SnapshotHit(snapshot_query_id=999, rank=1, doc_id="d",
                                                    fields={})) or s.flush())
    finally:
        store.close()


def test_times_go_in_and_come_out_utc(db_url):
    store = open_store(db_url)
    try:
        plus_two = timezone(timedelta(hours=2))
        when = datetime(2024, 5, 1, 14, 30, tzinfo=plus_two)
        store.write(lambda s: s.add(Project(name="p", created_at=when)))
        with store.read() as s:
            got = s.scalar(sa.select(Project.created_at).where(Project.name == "p"))
        assert got == datetime(2024, 5, 1, 12, 30, tzinfo=UTC) and got.tzinfo == UTC
        with pytest.raises(sa.exc.StatementError, match="naive datetime"):
            store.write(lambda s: s.add(Project(name="q", created_at=datetime(2024, 1, 1))))
    finally:
        store.close()


def test_a_failed_unit_of_work_leaves_nothing(db_url):
    store = open_store(db_url)
    try:
        def work(session):
            session.add(Project(name="kept?"))
            session.flush()
            raise RuntimeError("boom")

        with pytest.raises(RuntimeError):
            store.write(work)
        with store.read() as s:
            assert s.scalar(sa.select(sa.func.count()).select_from(Project)) == 0
    finally:
        store.close()


def test_one_writer_thread_serves_many_threads(tmp_path):
    store = open_store(tmp_path / "w.sqlite", writer=ThreadWriter())
    errors: list[BaseException] = []

    def client(n: int) -> None:
        try:
            for i in range(25):
                store.write(lambda s, name=f"p{n}-{i}": s.add(Project(name=name)))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    with store.read() as s:
        assert s.scalar(sa.select(sa.func.count()).select_from(Project)) == 200
    store.close()


def _start(store, n=3):
    return start_snapshot(
        store, name="snap", endpoint_name="ep", kind="embedded", config={"corpus": "c.jsonl"},
        config_hash="a" * 64, query_set_name="qs", query_set_source="q.tsv",
        queries=[QueryItem(f"q{i}", f"text {i}", {"brand": "x"} if i == 1 else {},
                          "a need" if i == 2 else None) for i in range(1, n + 1)],
        depth=10, engine_version="v1")


def test_snapshot_records_round_trip(db_url):
    store = open_store(db_url)
    try:
        sid, rows = _start(store)
        assert set(rows) == {"q1", "q2", "q3"}
        hits = [Hit("d1", 2.5, "T1", "snip", "https://x/1", None, {"brand": "A"}),
                Hit("d2", None, None, None, None, "https://x/i.png", {})]
        record_query(store, sid, rows["q1"], request={"method": "POST", "body": {"q": "ü"}},
                     latency_ms=12.5, raw_sha256="f" * 64, raw=b"raw bytes", total_hits=41,
                     hits=hits)
        record_failure(store, sid, rows["q2"], "query q2: HTTP 400")
        info = find_snapshot(store, str(sid))
        assert (info.status, info.n_done, info.n_failed, info.n_hits) == ("running", 1, 1, 2)
        with pytest.raises(StoreError, match="has 1 of 3 queries: it cannot be complete"):
            finish_snapshot(store, sid, "complete")
        finish_snapshot(store, sid, "failed", "query q2: HTTP 400")
        info = find_snapshot(store, "snap")
        assert info.status == "failed" and info.error == "query q2: HTTP 400"
        records = snapshot_queries(store, sid)
        assert [(r.query_id, r.status) for r in records] == [("q1", "ok"), ("q2", "error"),
                                                             ("q3", None)]
        assert records[0].request == {"method": "POST", "body": {"q": "ü"}}
        assert records[0].params == {"brand": "x"} and records[1].need == "a need"
        got = snapshot_hits(store, sid)
        assert [(h["rank"], h["doc_id"], h["score"], h["title"], h["image"], h["fields"])
                for h in got] == [(1, "d1", 2.5, "T1", None, {"brand": "A"}),
                                  (2, "d2", None, None, "https://x/i.png", {})]
        # a second snapshot of the same query set reuses it; names resolve to the newest
        sid2, rows2 = _start(store)
        assert rows2 == rows and sid2 != sid
        assert find_snapshot(store, "snap").id == sid2
        assert [s.id for s in list_snapshots(store)] == [sid, sid2]
        with pytest.raises(StoreError, match="no snapshot 'nope'"):
            find_snapshot(store, "nope")
    finally:
        store.close()


def test_a_running_snapshot_of_a_dead_process_is_incomplete(tmp_path):
    import subprocess
    import sys

    from rankscope.store.models import Snapshot

    store = open_store(tmp_path / "s.sqlite")
    sid, _ = _start(store)
    assert find_snapshot(store, str(sid)).status == "running"  # this process is alive
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    import socket

    store.write(lambda s: s.get(Snapshot, sid).__setattr__(
        "owner", f"{socket.gethostname()}:{dead.pid}"))
    assert find_snapshot(store, str(sid)).status == "incomplete"
    # on another host: stale after 15 minutes without a write
    old = datetime.now(UTC) - timedelta(minutes=16)

    def elsewhere(s):
        snap = s.get(Snapshot, sid)
        snap.owner, snap.heartbeat_at = "other-host:1", old

    store.write(elsewhere)
    assert find_snapshot(store, str(sid)).status == "incomplete"
    store.write(lambda s: s.get(Snapshot, sid).__setattr__("heartbeat_at", datetime.now(UTC)))
    assert find_snapshot(store, str(sid)).status == "running"
    store.close()


def test_a_newer_schema_is_refused(tmp_path):
    store = open_store(tmp_path / "s.sqlite")
    with store.engine.begin() as con:
        con.exec_driver_sql("UPDATE alembic_version SET version_num = '9999'")
    store.close()
    with pytest.raises(StoreError, match="schema revision 9999, newer than this rankscope"):
        open_store(tmp_path / "s.sqlite")
    with pytest.raises(StoreError, match="is not a directory"):
        open_store(tmp_path / "missing" / "s.sqlite")


def test_a_transaction_whose_work_fails_leaves_nothing_even_after_a_savepoint(db_url):
    # A write that only reads before its first savepoint, then fails: nothing it wrote may stay.
    # (pysqlite would let SAVEPOINT open the transaction and RELEASE commit it.)
    with open_store(db_url) as store:
        def work(session):
            session.execute(sa.select(Project.id)).all()
            with session.begin_nested():
                session.add(Project(name="half-done", created_at=datetime.now(UTC)))
            raise RuntimeError("the work fails after its savepoint was released")

        with pytest.raises(RuntimeError):
            store.write(work)
        with store.read() as session:
            names = list(session.scalars(sa.select(Project.name)))
    assert "half-done" not in names


def test_a_savepoint_rolled_back_leaves_the_rest_of_the_transaction(db_url):
    with open_store(db_url) as store:
        def work(session):
            session.execute(sa.select(Project.id)).all()
            with contextlib.suppress(ValueError), session.begin_nested():
                session.add(Project(name="refused", created_at=datetime.now(UTC)))
                session.flush()
                raise ValueError("this one is refused")
            session.add(Project(name="kept", created_at=datetime.now(UTC)))

        store.write(work)
        with store.read() as session:
            names = set(session.scalars(sa.select(Project.name)))
    assert "kept" in names and "refused" not in names


def test_writes_waiting_together_share_one_commit_each_in_its_savepoint(tmp_path):
    """The writer thread is held by a first write while eight more queue up; they then run
    as one group: one commit for eight, in their order (each sees the ones before it), a
    failing one rolled back alone and its caller told, every other answered."""
    store = open_store(tmp_path / "g.sqlite", writer=ThreadWriter())
    commits: list[int] = []
    sa.event.listen(store.engine, "commit", lambda _: commits.append(1))
    release, holding = threading.Event(), threading.Event()
    results: dict[int, object] = {}

    def hold(session):
        holding.set()
        release.wait(timeout=60)
        session.add(Project(name="first"))

    def write(n: int) -> None:
        def work(session):
            before = session.scalar(sa.select(sa.func.count()).select_from(Project))
            session.add(Project(name=f"p{n}"))
            session.flush()
            if n == 3:
                raise RuntimeError("refused")
            return before

        try:
            results[n] = store.write(work)
        except RuntimeError as exc:
            results[n] = exc

    try:
        holder = threading.Thread(target=store.write, args=(hold,))
        holder.start()
        assert holding.wait(timeout=60)  # the writer thread runs it: the others queue up
        threads = []
        for n in range(8):  # one at a time, so the queue keeps their order
            threads.append(threading.Thread(target=write, args=(n,)))
            threads[-1].start()
            for _ in range(1000):
                if store.writer._queue.qsize() == n + 1:
                    break
                threading.Event().wait(0.01)
            assert store.writer._queue.qsize() == n + 1
        release.set()
        for t in [holder, *threads]:
            t.join(timeout=60)
        assert len(commits) == 2  # the first write alone, then the eight together
        assert isinstance(results.pop(3), RuntimeError)
        # each saw the rows of the writes before it (the refused one's row is gone)
        assert results == {0: 1, 1: 2, 2: 3, 4: 4, 5: 5, 6: 6, 7: 7}
        with store.read() as s:
            names = set(s.scalars(sa.select(Project.name)))
        assert names == {"first"} | {f"p{n}" for n in range(8) if n != 3}
    finally:
        store.close()


def test_a_group_whose_commit_fails_answers_every_write_with_the_failure(tmp_path):
    store = open_store(tmp_path / "f.sqlite", writer=ThreadWriter())
    release, holding = threading.Event(), threading.Event()
    outcomes: list[object] = []

    commits: list[int] = []

    def refuse(_connection):  # the first write's commit passes, the group's fails
        commits.append(1)
        if len(commits) > 1:
            raise RuntimeError("disk on fire")

    sa.event.listen(store.engine, "commit", refuse)
    try:
        def hold(session):
            holding.set()
            release.wait(timeout=60)
            session.add(Project(name="a"))

        holder = threading.Thread(target=store.write, args=(hold,))
        holder.start()
        assert holding.wait(timeout=60)
        writers = [threading.Thread(target=lambda n=n: outcomes.append(_outcome(
            store, lambda s: s.add(Project(name=f"x{n}"))))) for n in range(3)]
        for n, t in enumerate(writers):
            t.start()
            for _ in range(1000):
                if store.writer._queue.qsize() == n + 1:
                    break
                threading.Event().wait(0.01)
        assert store.writer._queue.qsize() == 3
        release.set()
        for t in [holder, *writers]:
            t.join(timeout=60)
        sa.event.remove(store.engine, "commit", refuse)
        assert [str(o) for o in outcomes] == ["disk on fire"] * 3 and len(commits) == 2
        with store.read() as s:
            assert list(s.scalars(sa.select(Project.name))) == ["a"]  # the first write only
    finally:
        store.close()


def _outcome(store, work):
    try:
        return store.write(work)
    except RuntimeError as exc:
        return exc


def test_the_head_read_from_the_files_is_alembics(tmp_path):
    """An up-to-date store opens without alembic: its head, read from the files, is right."""
    import subprocess
    import sys

    from alembic.script import ScriptDirectory

    from rankscope.store.db import head_revision, open_store
    from rankscope.store.schema_revisions import alembic_config

    with open_store(tmp_path / "s.sqlite") as store, store.engine.connect() as connection:
        assert head_revision() == ScriptDirectory.from_config(
            alembic_config(connection)).get_current_head()
    code = ("import sys; from rankscope.store.db import open_store; "
            "open_store(sys.argv[1]).close(); print('alembic' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "s.sqlite")],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def _refused_port() -> int:
    """A port on 127.0.0.1 where nothing listens (bound, then closed)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_store_password_never_appears_in_its_errors(capsys: pytest.CaptureFixture[str]) -> None:
    """A PostgreSQL URL's password is a secret: error lines (CI logs, bug reports) name the
    store with it replaced by ***, from the library and from the command line."""
    pytest.importorskip("psycopg")
    from rankscope.cli.main import main

    url = f"postgresql://ann:s3cret-pw@127.0.0.1:{_refused_port()}/ratings"
    with pytest.raises(StoreError) as info:
        open_store(url)
    assert "s3cret-pw" not in str(info.value)
    assert "ann:***@127.0.0.1:" in str(info.value)
    code = main(["snapshots", "list", "--store", url])
    err = capsys.readouterr().err
    assert code == 2 and "s3cret-pw" not in err and "ann:***@" in err, err
