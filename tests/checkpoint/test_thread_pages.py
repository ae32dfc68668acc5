"""Listing threads a page at a time (every store), and the indexes that keep a page cheap (SQL stores).

The index tests read the plan the database itself makes (`EXPLAIN QUERY PLAN` on
SQLite, `EXPLAIN` on PostgreSQL) for the very statements the store runs.
"""

from __future__ import annotations

import sqlite3
import time

import psycopg
import pytest
from store_rows import cid, row

from actorgraph._model.errors import ConfigError
from actorgraph.checkpoint import _store
from actorgraph.checkpoint._protocol import ThreadInfo
from actorgraph.checkpoint._sql import history_query, threads_query
from actorgraph.checkpoint._store import thread_counts
from actorgraph.checkpoint.postgres import PostgresCheckpointer
from actorgraph.checkpoint.sqlite import SqliteCheckpointer

_INDEXES = {"actorgraph_threads_by_status", "actorgraph_threads_by_time"}


def _fill(store, count: int, *, every: int = 3) -> None:
    """`count` threads t0.. (every `every`-th one interrupted), each updated after the one before."""
    for n in range(count):
        status = "interrupted" if n % every == 0 else "done"
        store.put(row(f"t{n}", 1, status=status), expect_head=None)
        time.sleep(0.001)  # distinct updated_at on every store, so the order is known


def _walk(store, size: int, **filters) -> list[list[str]]:
    pages: list[list[str]] = []
    after: ThreadInfo | None = None
    while True:
        page = store.threads(limit=size, after=after, **filters)
        if not page:
            return pages
        pages.append([i.thread_id for i in page])
        after = page[-1]


def test_pages_of_threads_list_each_thread_once_in_order(store_factory):
    store = store_factory()
    _fill(store, 7)
    everything = [i.thread_id for i in store.threads()]
    assert everything == [f"t{n}" for n in range(6, -1, -1)]
    assert _walk(store, 3) == [everything[:3], everything[3:6], everything[6:]]
    assert [i.thread_id for i in store.threads(limit=2)] == everything[:2]
    assert store.threads(limit=0) == []


def test_pages_of_one_status_skip_the_others(store_factory):
    store = store_factory()
    _fill(store, 10)
    assert _walk(store, 2, status="interrupted") == [["t9", "t6"], ["t3", "t0"]]
    assert store.threads(status="error", limit=5) == []


def test_a_thread_updated_between_pages_moves_to_the_front_and_is_not_listed_again(store_factory):
    store = store_factory()
    _fill(store, 4)
    first = store.threads(limit=2)
    assert [i.thread_id for i in first] == ["t3", "t2"]
    store.put(row("t0", 2, parent=1), expect_head=cid(1))  # t0 is now the newest
    assert [i.thread_id for i in store.threads(limit=2, after=first[-1])] == ["t1"]
    assert store.threads(limit=1)[0].thread_id == "t0"


def test_subgraph_threads_are_left_out_of_every_page(store_factory):
    store = store_factory()
    store.put(row("p", 1), expect_head=None)
    store.put(row("p|child:1", 1), expect_head=None)
    assert [i.thread_id for i in store.threads(limit=5)] == ["p"]


def test_a_negative_limit_is_refused(store_factory):
    store = store_factory()
    with pytest.raises(ConfigError, match=r"threads\(limit=-1\)"):
        store.threads(limit=-1)


def test_sqlite_pages_break_ties_of_updated_at_by_thread_id(tmp_path):
    with SqliteCheckpointer(tmp_path / "cp.db") as store:
        _fill(store, 5)
    with sqlite3.connect(tmp_path / "cp.db") as conn:  # five threads updated at the same instant
        conn.execute("UPDATE actorgraph_threads SET updated_at = 1000.0")
    with SqliteCheckpointer(tmp_path / "cp.db") as store:
        assert _walk(store, 2) == [["t0", "t1"], ["t2", "t3"], ["t4"]]


# -- the plans: an index, never a scan of the table or a sort of it ------------------------------------

_AFTER = ThreadInfo("t5", cid(1), "interrupted", 1e9)


def _statements(m: str) -> dict[str, tuple[str, list[object]]]:
    """The statements of the store's lookups that must stay cheap, with placeholder `m`."""
    head = SqliteCheckpointer.sql.select_head if m == "?" else PostgresCheckpointer.sql.select_head
    select_row = SqliteCheckpointer.sql.select_row if m == "?" else PostgresCheckpointer.sql.select_row
    sql = SqliteCheckpointer.sql if m == "?" else PostgresCheckpointer.sql
    return {
        "by status": threads_query(m, status="interrupted", limit=200, after=None),
        "by status, next page": threads_query(m, status="interrupted", limit=200, after=_AFTER),
        "every status": threads_query(m, status=None, limit=200, after=None),
        "every status, next page": threads_query(m, status=None, limit=200, after=_AFTER),
        "head": (head, ["t5", "t5"]),
        "thread counts": (sql.thread_counts, ["%|%"]),
        "history page": history_query(select_row, m, "t5", limit=50, before=cid(9)),
    }


def _sqlite_plans(path) -> dict[str, str]:
    with sqlite3.connect(path) as conn:
        return {
            name: "\n".join(r[3] for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}", args))
            for name, (sql, args) in _statements("?").items()
        }


def test_sqlite_lists_threads_and_finds_heads_by_index(tmp_path):
    with SqliteCheckpointer(tmp_path / "cp.db") as store:
        _fill(store, 30)
    for name, plan in _sqlite_plans(tmp_path / "cp.db").items():
        steps = [line for line in plan.splitlines() if "actorgraph_" in line]
        assert steps, f"{name}: {plan}"
        assert all("INDEX" in line for line in steps), f"{name} scans a table:\n{plan}"
        assert "TEMP B-TREE" not in plan, f"{name} sorts instead of reading an index in order:\n{plan}"


def test_sqlite_adds_the_thread_indexes_to_a_database_made_before_them(tmp_path):
    with SqliteCheckpointer(tmp_path / "cp.db") as store:
        _fill(store, 3)
    with sqlite3.connect(tmp_path / "cp.db") as conn:
        for index in _INDEXES:
            conn.execute(f"DROP INDEX {index}")
    assert "TEMP B-TREE" in _sqlite_plans(tmp_path / "cp.db")["by status"]
    with SqliteCheckpointer(tmp_path / "cp.db") as store:
        assert [i.thread_id for i in store.threads(status="interrupted")] == ["t0"]
    with sqlite3.connect(tmp_path / "cp.db") as conn:
        found = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert found >= _INDEXES


def _postgres_plans(dsn: str) -> dict[str, str]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        # the tables are tiny here, so a scan would be cheapest: forbid it, and see whether an index can serve
        conn.execute("SET enable_seqscan = off")
        conn.execute("SET enable_sort = off")
        cur = psycopg.ClientCursor(conn)
        return {
            name: "\n".join(r[0] for r in cur.execute(f"EXPLAIN {sql}", args).fetchall())
            for name, (sql, args) in _statements("%s").items()
        }


@pytest.mark.slow
def test_postgres_lists_threads_and_finds_heads_by_index(postgres_db):
    with PostgresCheckpointer(postgres_db) as store:
        _fill(store, 30)
    for name, plan in _postgres_plans(postgres_db).items():
        assert "Index" in plan, f"{name}: {plan}"
        assert "Seq Scan" not in plan, f"{name} scans a table:\n{plan}"
        assert "Sort" not in plan, f"{name} sorts instead of reading an index in order:\n{plan}"


@pytest.mark.slow
def test_postgres_adds_the_thread_indexes_to_a_database_made_before_them(postgres_db):
    with PostgresCheckpointer(postgres_db) as store:
        _fill(store, 3)
    with psycopg.connect(postgres_db, autocommit=True) as conn:
        for index in _INDEXES:
            conn.execute(f"DROP INDEX {index}")
    assert "Sort" in _postgres_plans(postgres_db)["by status"]
    with PostgresCheckpointer(postgres_db) as store:
        assert [i.thread_id for i in store.threads(status="interrupted")] == ["t0"]
    with psycopg.connect(postgres_db) as conn:
        found = {name for (name,) in conn.execute("SELECT indexname FROM pg_indexes")}
    assert found >= _INDEXES


# -- counting threads by status: one query on the status index -----------------------------------------


def test_thread_counts_count_each_status_and_leave_subgraph_threads_out(store_factory):
    store = store_factory()
    assert store.thread_counts() == {}
    _fill(store, 10)  # t0, t3, t6, t9 interrupted
    store.put(row("t1|child:1", 1, status="error"), expect_head=None)
    assert store.thread_counts() == {"interrupted": 4, "done": 6}
    store.put_writes("t2", cid(1), [], status="error")
    store.delete_thread("t3")
    assert store.thread_counts() == {"interrupted": 3, "done": 5, "error": 1}
    assert store.thread_counts() == thread_counts(store)


class _WithoutCounts:
    """A checkpointer written before `thread_counts()` existed: the protocol alone, over a real store."""

    def __init__(self, inner) -> None:
        self._inner = inner

    def __getattr__(self, name: str):
        if name == "thread_counts":
            raise AttributeError(name)
        return getattr(self._inner, name)


def test_a_store_without_thread_counts_is_counted_through_pages_of_threads(store_factory, monkeypatch):
    store = store_factory()
    _fill(store, 11)
    store.put(row("t1|child:1", 1, status="error"), expect_head=None)
    monkeypatch.setattr(_store, "COUNT_PAGE", 3)  # 11 threads: pages of 3, 3, 3 and 2
    older = _WithoutCounts(store)
    assert not hasattr(older, "thread_counts")
    assert thread_counts(older) == store.thread_counts() == {"interrupted": 4, "done": 7}
    monkeypatch.setattr(_store, "COUNT_PAGE", 4)  # 11 threads: the last page is short too
    assert thread_counts(older) == {"interrupted": 4, "done": 7}
