"""Rows of the database stores changed outside actorgraph: a `StoreError` naming the row, no bare error."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from pg_server import POSTGRES
from store_kinds import INDEX, opener

from actorgraph._model.errors import StoreError

DEEP = "[" * 100_000 + "]" * 100_000


def change(make: Any, sql: str, args: tuple[Any, ...] = ()) -> None:
    """Run `sql` on the store's database, as another program would (`?` marks its arguments)."""
    if make.kind == "sqlite":
        with sqlite3.connect(make.target) as conn:
            conn.execute(sql, args)
        conn.close()
        return
    import psycopg

    with psycopg.connect(make.target, autocommit=True) as conn:
        conn.execute(sql.replace("?", "%s"), args)  # type: ignore[arg-type]


@pytest.fixture(params=["sqlite", POSTGRES])
def make(request, tmp_path):
    yield from opener(request.param, request, tmp_path)


@pytest.fixture
def make_sqlite(request, tmp_path):
    yield from opener("sqlite", request, tmp_path)


# (the change, its arguments, what the error says is wrong): on both databases
DAMAGES = {
    "deep-json": ("UPDATE actorgraph_store SET value = ?", (DEEP,), "nests too deeply"),
    "not-json": ("UPDATE actorgraph_store SET value = ?", ("{not json",), "not valid JSON"),
    "a-list": ("UPDATE actorgraph_store SET value = ?", ("[1, 2]",), "not a JSON object"),
    "far-time": ("UPDATE actorgraph_store SET created_at = ?", (1e300,), "created_at 1e"),
    "inf-time": ("UPDATE actorgraph_store SET updated_at = ?", (float("-inf"),), "updated_at -inf"),
}
# only SQLite keeps what it is given whatever the column's type
SQLITE_DAMAGES = {
    "blob-value": ("UPDATE actorgraph_store SET value = ?", (b'{"a": "x"}',), "holds bytes"),
    "int-value": ("UPDATE actorgraph_store SET value = 7", (), "JSON number"),  # stored as the text 7
    "text-time": ("UPDATE actorgraph_store SET created_at = 'yesterday'", (), "created_at 'yesterday'"),
    "blob-key": ("UPDATE actorgraph_store SET key = CAST(key AS BLOB)", (), "key"),
}


def damaged(make: Any, sql: str, args: tuple[Any, ...]) -> Any:
    store = make()
    store.put(("docs",), "k", {"a": "x"})
    change(make, sql, args)
    return store


def reads(store: Any) -> dict[str, Any]:
    return {
        "get": lambda: store.get(("docs",), "k"),
        "search": lambda: store.search(("docs",)),
        "filter": lambda: store.search(("docs",), filter={"a": "x"}),
        "filter-ne": lambda: store.search(("docs",), filter={"a": {"$ne": "y"}}),
    }


@pytest.mark.parametrize("damage", DAMAGES.values(), ids=DAMAGES.keys())
def test_a_damaged_row_is_a_store_error_naming_it(make, damage):
    sql, args, wrong = damage
    store = damaged(make, sql, args)
    for what, read in reads(store).items():
        if what == "filter" and wrong == "not a JSON object":
            assert read() == []  # the database sees no field "a": nothing to read, nothing to say
            continue
        with pytest.raises(StoreError) as failed:
            read()
        message = str(failed.value)
        assert "outside actorgraph" in message, (what, message)
        if make.kind == "postgres" and what == "filter" and wrong in ("nests too deeply", "not valid JSON"):
            assert "a stored value is not JSON text" in message  # the database read it, not Python
            continue
        assert wrong in message, (what, message)
        assert "('docs',) 'k'" in message, (what, message)
    assert store.list_namespaces() == [("docs",)]


def test_a_filter_over_damaged_and_sound_rows_names_the_damaged_one(make_sqlite):
    store = make_sqlite()
    store.put(("docs",), "k", {"a": "x"})
    store.put(("docs",), "other", {"a": "y"})
    change(make_sqlite, "UPDATE actorgraph_store SET value = ? WHERE key = 'k'", (DEEP,))
    with pytest.raises(StoreError, match=r"'k' nests too deeply.*outside actorgraph"):
        store.search(("docs",), filter={"a": "y"})


@pytest.mark.parametrize("damage", SQLITE_DAMAGES.values(), ids=SQLITE_DAMAGES.keys())
def test_a_row_of_another_type_in_sqlite_is_a_store_error_naming_it(make_sqlite, damage):
    sql, args, wrong = damage
    store = damaged(make_sqlite, sql, args)
    for what, read in reads(store).items():
        if what == "get" and "key" in sql.split("SET")[1]:
            assert read() is None  # a key of another type is another key
            continue
        if what == "filter" and wrong == "JSON number":
            assert read() == []  # the database sees no field "a": nothing to read, nothing to say
            continue
        with pytest.raises(StoreError, match=wrong) as failed:
            read()
        assert "outside actorgraph" in str(failed.value), what


def test_a_damaged_namespace_in_sqlite_is_a_store_error(make_sqlite):
    store = damaged(make_sqlite, "UPDATE actorgraph_store SET namespace = CAST(namespace AS BLOB)", ())
    with pytest.raises(StoreError, match=r"namespace b'docs'.*outside actorgraph"):
        store.list_namespaces()
    with pytest.raises(StoreError, match=r"namespace b'docs'.*outside actorgraph"):
        store.search(())


@pytest.mark.parametrize(
    ("vector", "wrong"),
    [
        (DEEP, "embedding"),
        ("not json", "embedding"),
        ('["a", 1, 2, 3]', "embedding"),
        ("[1, 2]", "2 numbers"),
    ],
)
def test_a_damaged_embedding_is_a_store_error(make, vector, wrong):
    store = make(index=INDEX)
    store.put(("docs",), "k", {"text": "cat"})
    change(make, "UPDATE actorgraph_store_vectors SET vector = ?", (vector,))
    with pytest.raises(StoreError, match=f"{wrong}.*outside actorgraph"):
        store.search(("docs",), query="cat")
