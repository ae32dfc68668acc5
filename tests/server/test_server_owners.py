"""The filters auth handlers return: checked once, and the same in SQL (SQLite, PostgreSQL) as in Python.

A filter decides which rows a user sees, in the store's own query. The SQL
each database runs and the Python test used for what is not a row (the system
assistants) must agree on every metadata and every filter: a property test
draws both and compares the rows each selects.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pg_server import POSTGRES

from actorgraph.server._owners import FilterError, filter_of

ROWS = [
    {"owner": "alice"},
    {"owner": "bob", "teams": ["red", "blue"]},
    {"owner": "alice", "teams": ["blue"], "n": 1},
    {"n": 1.0, "flag": True, "none": None},
    {"n": True, "teams": "red", "owner": {"name": "alice"}},
    {"teams": [1, "1", True], "owner": "carol"},
    {},
]

EXAMPLES: list[tuple[dict[str, Any], set[int]]] = [
    ({"owner": "alice"}, {0, 2}),
    ({"owner": {"$eq": "bob"}}, {1}),
    ({"teams": {"$contains": "red"}}, {1}),  # a string "red" is no array holding it
    ({"teams": {"$contains": ["red", "blue"]}}, {1}),
    ({"teams": {"$contains": ["blue"]}, "owner": "alice"}, {2}),
    ({"n": 1}, {2, 3}),  # 1 is 1.0, and true is not 1
    ({"flag": True}, {3}),
    ({"none": None}, {3}),
    ({"teams": {"$contains": 1}}, {5}),
    ({"teams": {"$contains": "1"}}, {5}),
    ({"$or": [{"owner": "bob"}, {"owner": "carol"}]}, {1, 5}),
    ({"$and": [{"owner": "alice"}, {"n": 1}]}, {2}),
    ({"$or": [{"owner": "alice"}, {"$and": [{"owner": "bob"}, {"teams": {"$contains": "red"}}]}]}, {0, 1, 2}),
    ({}, {0, 1, 2, 3, 4, 5, 6}),
    ({"owner": "nobody"}, set()),
]


def sqlite_rows(rows: list[dict[str, Any]], condition: dict[str, Any]) -> set[int]:
    where = filter_of(condition)
    sql, args = where.sql("SQLite", "things.metadata")
    with sqlite3.connect(":memory:") as conn:
        conn.execute("CREATE TABLE things (id INTEGER PRIMARY KEY, metadata TEXT NOT NULL)")
        conn.executemany(
            "INSERT INTO things VALUES (?, ?)", [(i, orjson.dumps(r).decode()) for i, r in enumerate(rows)]
        )
        return {i for (i,) in conn.execute(f"SELECT id FROM things WHERE {sql}", args)}  # noqa: S608 - the SQL tested


def python_rows(rows: list[dict[str, Any]], condition: dict[str, Any]) -> set[int]:
    where = filter_of(condition)
    return {i for i, r in enumerate(rows) if where.matches(r)}


@pytest.mark.parametrize(("condition", "wanted"), EXAMPLES)
def test_each_form_selects_the_same_rows_in_sqlite_and_in_python(condition, wanted):
    assert sqlite_rows(ROWS, condition) == wanted
    assert python_rows(ROWS, condition) == wanted


@pytest.mark.parametrize(
    ("condition", "words"),
    [
        ("alice", "is a dict"),
        ({"owner": ["alice"]}, "cannot be compared"),
        ({"owner": {"name": "alice"}}, "$eq"),
        ({"owner": {"$ne": "alice"}}, "$eq"),
        ({"owner": {"$eq": "a", "$contains": "b"}}, "$eq"),
        ({"owner": "a\x00b"}, "NUL"),
        ({"owner": 2**60}, "2**53"),
        ({"owner": float("nan")}, "cannot be compared"),
        ({"$or": []}, "non-empty list"),
        ({"$or": "alice"}, "non-empty list"),
        ({"$in": ["a"]}, "not a metadata key"),
        ({"": "a"}, "not a metadata key"),
        ({"$or": [{"$or": [{"$or": [{"a": 1}]}]}]}, "nest at most 2"),
        ({"teams": {"$contains": []}}, "non-empty list"),
        ({f"k{i}": i for i in range(101)}, "at most 100"),
    ],
)
def test_what_is_no_filter_is_refused_saying_why(condition, words):
    with pytest.raises(FilterError, match=None) as refused:
        filter_of(condition)
    assert words in str(refused.value)


def test_store_filters_are_equalities_only():
    assert filter_of({"owner": "a", "$and": [{"kind": "note"}, {"n": 1}]}).equalities() == {
        "owner": "a",
        "kind": "note",
        "n": 1,
    }
    for condition in (
        {"$or": [{"a": 1}, {"a": 2}]},
        {"teams": {"$contains": "red"}},
        {"$and": [{"a": 1}, {"a": 2}]},
    ):
        with pytest.raises(FilterError):
            filter_of(condition).equalities()


# -- the property: SQL and Python agree on every metadata and every filter ---------------------------

KEYS = st.sampled_from(["owner", "teams", "n", "o'wner", 'we"ird', "a.b", "$x", "ü"])
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([1.0, 2.5, -0.0]),
    st.sampled_from(["alice", "bob", "", "1", "true", "ALICE", "x'y", "ü"]),
)
VALUES = st.one_of(SCALARS, st.lists(SCALARS, max_size=4), st.dictionaries(KEYS, SCALARS, max_size=2))
METADATA = st.dictionaries(KEYS, VALUES, max_size=4)
FILTER_KEYS = KEYS.filter(lambda k: not k.startswith("$"))
CONDITIONS = st.one_of(
    SCALARS,
    st.builds(lambda v: {"$eq": v}, SCALARS),
    st.builds(lambda v: {"$contains": v}, SCALARS),
    st.builds(lambda v: {"$contains": v}, st.lists(SCALARS, min_size=1, max_size=3)),
)
PLAIN = st.dictionaries(FILTER_KEYS, CONDITIONS, max_size=3)
FILTERS = st.recursive(
    PLAIN,
    lambda inner: st.builds(
        lambda op, parts, rest: {**rest, op: parts},
        st.sampled_from(["$or", "$and"]),
        st.lists(inner, min_size=1, max_size=3),
        PLAIN,
    ),
    max_leaves=4,
)


def _valid(condition: dict[str, Any]) -> bool:
    try:
        filter_of(condition)
    except FilterError:
        return False
    return True


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(METADATA, min_size=1, max_size=8), FILTERS.filter(_valid))
def test_sqlite_selects_exactly_the_rows_python_matches(rows, condition):
    assert sqlite_rows(rows, condition) == python_rows(rows, condition)


@pytest.fixture(params=[POSTGRES])
def pg_conn(request):
    import psycopg

    with psycopg.connect(request.getfixturevalue("postgres_db"), autocommit=True) as conn:
        conn.execute("CREATE TABLE things (id integer PRIMARY KEY, metadata text NOT NULL)")
        yield conn


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(METADATA, min_size=1, max_size=8), condition=FILTERS.filter(_valid))
def test_postgresql_selects_exactly_the_rows_python_matches(pg_conn, rows, condition):
    pg_conn.execute("DELETE FROM things")
    with pg_conn.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO things VALUES (%s, %s)", [(i, orjson.dumps(r).decode()) for i, r in enumerate(rows)]
        )
    sql, args = filter_of(condition).sql("PostgreSQL", "things.metadata")
    found = {i for (i,) in pg_conn.execute(f"SELECT id FROM things WHERE {sql}", args)}  # noqa: S608
    assert found == python_rows(rows, condition)


def test_postgresql_examples(pg_conn):
    with pg_conn.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO things VALUES (%s, %s)", [(i, orjson.dumps(r).decode()) for i, r in enumerate(ROWS)]
        )
    for condition, wanted in EXAMPLES:
        sql, args = filter_of(condition).sql("PostgreSQL", "things.metadata")
        found = {i for (i,) in pg_conn.execute(f"SELECT id FROM things WHERE {sql}", args)}  # noqa: S608
        assert found == wanted, condition
