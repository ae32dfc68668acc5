"""Objects a test shares with its vertices, in this process or in Ray worker processes.

The engine tests run on both backends (ACTORGRAPH_TEST_BACKEND=ray). A vertex
on the Ray backend runs in another process, so a closure's list or counter
there is a copy: what it appends never reaches the test. These objects keep
their contents in a file guarded by a lock (`fcntl.flock`), so every process
on the machine sees the same contents; pickled, they carry only the file's path.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import pickle
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["SharedBarrier", "SharedDict", "SharedEvent", "SharedList"]

_MADE: list[str] = []  # the directories this process made, removed when it exits
_CREATOR = os.getpid()


@atexit.register
def _remove() -> None:
    if os.getpid() == _CREATOR:
        for path in _MADE:
            shutil.rmtree(path, ignore_errors=True)


def _directory(prefix: str) -> Path:
    path = tempfile.mkdtemp(prefix=prefix)
    _MADE.append(path)
    return Path(path)


class _Store:
    """One pickled value in a file, read and changed under an exclusive lock."""

    def __init__(self, initial: Any) -> None:
        self.path = _directory("ag-shared-") / "value"
        self.path.write_bytes(pickle.dumps(initial))

    @contextlib.contextmanager
    def locked(self) -> Iterator[list[Any]]:
        """The value in a one-item list; what is in it at the end is written back."""
        with self.path.with_suffix(".lock").open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            box = [pickle.loads(self.path.read_bytes())]  # noqa: S301 - a file this test wrote
            before = pickle.dumps(box[0])
            yield box
            after = pickle.dumps(box[0])
            if after != before:
                tmp = self.path.with_suffix(f".{os.getpid()}")
                tmp.write_bytes(after)
                tmp.replace(self.path)

    def read(self) -> Any:
        with self.locked() as box:
            return box[0]


class SharedList:
    """A list every process sees: `append`, `extend`, `len`, iteration, `==` with a list."""

    def __init__(self, items: list[Any] | None = None) -> None:
        self._store = _Store(list(items or []))

    def append(self, item: Any) -> None:
        with self._store.locked() as box:
            box[0].append(item)

    def extend(self, items: Any) -> None:
        with self._store.locked() as box:
            box[0].extend(items)

    def clear(self) -> None:
        with self._store.locked() as box:
            box[0] = []

    def copy(self) -> list[Any]:
        return list(self._store.read())

    def __len__(self) -> int:
        return len(self._store.read())

    def __iter__(self) -> Iterator[Any]:
        return iter(self._store.read())

    def __getitem__(self, index: Any) -> Any:
        return self._store.read()[index]

    def __contains__(self, item: object) -> bool:
        return item in self._store.read()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SharedList):
            other = other.copy()
        return bool(self._store.read() == other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SharedList({self._store.read()!r})"


class SharedDict:
    """A dict every process sees; `d[k] += 1` is safe when each key has one writer at a time
    (use `add` for a counter several tasks bump at once)."""

    def __init__(self, items: dict[Any, Any] | None = None) -> None:
        self._store = _Store(dict(items or {}))

    def __getitem__(self, key: Any) -> Any:
        return self._store.read()[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        with self._store.locked() as box:
            box[0][key] = value

    def add(self, key: Any, amount: int = 1) -> int:
        """Add `amount` to `key` (from 0) atomically; return the new count."""
        with self._store.locked() as box:
            box[0][key] = box[0].get(key, 0) + amount
            return int(box[0][key])

    def get(self, key: Any, default: Any = None) -> Any:
        return self._store.read().get(key, default)

    def setdefault(self, key: Any, default: Any) -> Any:
        with self._store.locked() as box:
            return box[0].setdefault(key, default)

    def copy(self) -> dict[Any, Any]:
        return dict(self._store.read())

    def items(self) -> Any:
        return self._store.read().items()

    def keys(self) -> Any:
        return self._store.read().keys()

    def values(self) -> Any:
        return self._store.read().values()

    def __contains__(self, key: object) -> bool:
        return key in self._store.read()

    def __iter__(self) -> Iterator[Any]:
        return iter(self._store.read())

    def __len__(self) -> int:
        return len(self._store.read())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SharedDict):
            other = other.copy()
        return bool(self._store.read() == other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SharedDict({self._store.read()!r})"


class SharedEvent:
    """`threading.Event` across processes: `set`, `clear`, `is_set`, `wait(timeout)` (polls)."""

    def __init__(self) -> None:
        self._path = _directory("ag-event-") / "set"

    def set(self) -> None:
        self._path.touch()

    def clear(self) -> None:
        self._path.unlink(missing_ok=True)

    def is_set(self) -> bool:
        return self._path.exists()

    def wait(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._path.exists():
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.002)
        return True


class SharedBarrier:
    """`threading.Barrier(parties).wait(timeout)` across processes (single use)."""

    def __init__(self, parties: int) -> None:
        self.parties = parties
        self._arrived = SharedDict({"n": 0})

    def wait(self, timeout: float) -> None:
        """Return once `parties` callers have arrived.

        Raises:
            threading.BrokenBarrierError: they did not all arrive within `timeout` seconds.
        """
        self._arrived.add("n")
        deadline = time.monotonic() + timeout
        while self._arrived["n"] < self.parties:
            if time.monotonic() >= deadline:
                raise threading.BrokenBarrierError
            time.sleep(0.002)
