"""A filter on any field name finds the same rows in every store (memory, SQLite, PostgreSQL)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actorgraph.store import BaseStore, MemoryStore, PostgresStore, SqliteStore

pytestmark = pytest.mark.slow  # PostgreSQL, and a property with many examples

# Names JSON escapes, or that look like an escape or a path, beside any other text
TRICKY = st.sampled_from(
    ["\t", "\n", "\x01", "\x1f", "\x00", "\\", '"', "\\u0041", "\\t", ".", "$", "é", "\u2028"]
)
NAMES = st.lists(
    st.lists(st.characters(codec="utf-8") | TRICKY, max_size=5).map("".join),
    min_size=1,
    max_size=3,
    unique=True,
)


@pytest.fixture
def stores(postgres_db: str, tmp_path: Path) -> Iterator[list[BaseStore]]:
    made = [MemoryStore(), SqliteStore(tmp_path / "store.db"), PostgresStore(postgres_db)]
    yield made
    for store in made:
        store.close()


@settings(deadline=None, max_examples=120, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=NAMES)
def test_every_store_finds_the_same_rows_whatever_the_field_names(
    stores: list[BaseStore], names: list[str]
) -> None:
    namespace = (f"n{next(COUNTER)}",)
    rows = (
        {f"text-{i}": {name: "x"} for i, name in enumerate(names)}
        | {f"number-{i}": {name: 1, "other": "x"} for i, name in enumerate(names)}
        | {"none": {"other": "x"}}
    )
    for store in stores:
        for key, value in rows.items():
            store.put(namespace, key, value)
    for name, wanted in itertools.product(names, ["x", 1]):
        expected = sorted(k for k, v in rows.items() if name in v and v[name] == wanted)
        for store in stores:
            found = sorted(i.key for i in store.search(namespace, filter={name: wanted}, limit=100))
            assert found == expected, (type(store).__name__, name, wanted)


COUNTER = itertools.count()
