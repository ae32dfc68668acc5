"""The database stores across reopening and processes: pickled to their arguments, reconnected lazily."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from store_kinds import DATABASES, INDEX, opener

from actorgraph._model.errors import StoreError
from actorgraph.store import MemoryStore, SqliteStore

CHILD = Path(__file__).resolve().parent / "store_child.py"


@pytest.fixture(params=DATABASES)
def make(request, tmp_path):
    yield from opener(request.param, request, tmp_path)


def test_values_outlive_the_store_object(make):
    first = make(index=INDEX)
    first.put(("a", "b"), "k", {"text": "cat"}, ttl=3600)
    first.close()
    again = make(index=INDEX)
    item = again.get(("a", "b"), "k")
    assert item.value == {"text": "cat"}
    assert again.search(("a",), query="cat")[0].score == pytest.approx(1.0)
    assert again.list_namespaces() == [("a", "b")]


def test_two_store_objects_on_one_database_see_each_other(make):
    one, two = make(), make()
    one.put(("a",), "k", {"v": 1})
    assert two.get(("a",), "k").value == {"v": 1}
    two.delete(("a",), "k")
    assert one.get(("a",), "k") is None


def test_a_pickled_store_reconnects_in_its_copy(make):
    store = make(index=INDEX)
    store.put(("a",), "k", {"text": "dog"})
    copy = pickle.loads(pickle.dumps(store))  # noqa: S301 - our own bytes
    try:
        assert copy._conn is None  # connects on its first call, not when unpickled
        assert copy.get(("a",), "k").value == {"text": "dog"}
        copy.put(("a",), "k2", {"text": "dog dog"})
        assert [i.key for i in store.search(("a",), query="dog")] == ["k", "k2"]
    finally:
        copy.close()


@pytest.mark.slow
def test_a_child_process_reads_and_writes_the_parents_store(make, tmp_path):
    store = make(index=INDEX)
    store.put(("shared",), "from-parent", {"text": "cat"})
    pickled = tmp_path / "store.pickle"
    pickled.write_bytes(pickle.dumps(store))
    done = subprocess.run(
        [sys.executable, str(CHILD), str(pickled)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"read": {"text": "cat"}, "top": "from-child"}
    child = store.get(("shared",), "from-child").value
    assert child["text"] == "dog dog"
    assert child["pid"] != os.getpid()


def test_a_memory_store_refuses_to_be_pickled():
    with pytest.raises(StoreError, match=r"SqliteStore.*PostgresStore"):
        pickle.dumps(MemoryStore())


def test_a_closed_store_says_so(make):
    store = make()
    store.put(("a",), "k", {})
    store.close()
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.get(("a",), "k")


def test_the_context_manager_closes_the_store(make):
    with make() as store:
        store.put(("a",), "k", {})
    with pytest.raises(StoreError, match="closed"):
        store.put(("a",), "k", {})


def test_a_file_that_is_not_a_database_is_refused(tmp_path):
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="not an intact SQLite database"):
        SqliteStore(path)


def test_a_store_shares_a_file_with_a_checkpointer(tmp_path):
    from actorgraph.checkpoint import SqliteCheckpointer

    path = tmp_path / "both.db"
    with SqliteCheckpointer(path) as checkpointer, SqliteStore(path) as store:
        store.put(("a",), "k", {"v": 1})
        assert checkpointer.threads() == []
        assert store.get(("a",), "k").value == {"v": 1}
