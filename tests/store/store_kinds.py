"""What the store tests share: a clock that moves when told, a toy embedding, and a store opener."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pg_server import POSTGRES

from actorgraph.store import BaseStore, MemoryStore, PostgresStore, SqliteStore

KINDS = ["memory", "sqlite", POSTGRES]
DATABASES = ["sqlite", POSTGRES]
WORDS = ("cat", "dog", "car")


class Clock:
    """A wall clock that stands still until `advance` moves it (picklable, so it crosses processes)."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def embed(texts: list[str]) -> list[list[float]]:
    """A deterministic toy embedding: how often each of three words occurs (plus a constant)."""
    return [[float(text.count(word)) for word in WORDS] + [0.1] for text in texts]


INDEX = {"embed": embed, "dims": 4, "fields": ["text"]}


def opener(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., BaseStore]]:
    """Opens stores of one kind, all on one database (a memory store is new each time), closed after."""
    made: list[BaseStore] = []
    target: Any = tmp_path / "store.db" if kind == "sqlite" else ""
    if kind == "postgres":
        target = request.getfixturevalue("postgres_db")

    def make(**kwargs: Any) -> BaseStore:
        store: BaseStore
        if kind == "memory":
            store = MemoryStore(**kwargs)
        elif kind == "sqlite":
            store = SqliteStore(target, **kwargs)
        else:
            store = PostgresStore(target, **kwargs)
        made.append(store)
        return store

    make.kind = kind  # type: ignore[attr-defined]
    make.target = target  # type: ignore[attr-defined]
    yield make
    for store in made:
        store.close()


def at_once(work: Callable[[int], object], count: int) -> list[BaseException]:
    """Run `work(0)` ... `work(count - 1)` on threads released together; the errors they raised."""
    errors: list[BaseException] = []
    start = threading.Barrier(count)

    def run(i: int) -> None:
        try:
            start.wait()
            work(i)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors
