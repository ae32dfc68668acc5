"""The node caches themselves: one suite for `MemoryCache` and `SqliteCache`."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import actorgraph as ag
from actorgraph._model.policy import CachedOutcome
from actorgraph.checkpoint import MsgpackSerializer


class Clock:
    """A wall clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["memory", "sqlite"])
def make(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    opened: list[Any] = []

    def make_cache(**options: Any) -> Any:
        if request.param == "memory":
            cache: Any = ag.MemoryCache(**options)
        else:
            cache = ag.SqliteCache(tmp_path / "cache.db", **options)
        opened.append(cache)
        return cache

    yield make_cache
    for cache in opened:
        if isinstance(cache, ag.SqliteCache):
            cache.close()


def test_an_outcome_comes_back_equal_and_a_copy(make: Any) -> None:
    cache = make()
    state = {"n": [1, 2], "who": ("a", 1)}
    cache.put("g/v", "k", CachedOutcome(state, {"seen": 3}), None)
    got = cache.get("g/v", "k")
    assert got == CachedOutcome(state, {"seen": 3})
    assert got.returned is not state
    assert cache.get("g/v", "other") is None
    assert cache.get("g/w", "k") is None


def test_a_command_with_sends_comes_back_as_a_command(make: Any) -> None:
    cache = make()
    command = ag.Command(update={"x": 1}, goto=["a", ag.Send("b", {"i": 2})])
    cache.put("g/v", "k", CachedOutcome(command, None), None)
    got = cache.get("g/v", "k").returned
    assert got == ag.Command(update={"x": 1}, goto=("a", ag.Send("b", {"i": 2})))
    cache.put("g/v", "one", CachedOutcome(ag.Command(goto="a"), None), None)
    assert cache.get("g/v", "one").returned == ag.Command(goto="a")


def test_an_entry_expires_after_its_ttl(make: Any) -> None:
    clock = Clock()
    cache = make(clock=clock)
    cache.put("g/v", "k", CachedOutcome(1, None), 10.0)
    cache.put("g/v", "forever", CachedOutcome(2, None), None)
    clock.now += 9.9
    assert cache.get("g/v", "k") is not None
    clock.now += 0.1
    assert cache.get("g/v", "k") is None
    clock.now += 1e9
    assert cache.get("g/v", "forever") == CachedOutcome(2, None)


def test_clear_forgets_namespaces_or_everything(make: Any) -> None:
    cache = make()
    for namespace in ("g/a", "g/b", "h/a"):
        cache.put(namespace, "k", CachedOutcome(namespace, None), None)
    cache.clear(["g/a"])
    assert [cache.get(n, "k") is None for n in ("g/a", "g/b", "h/a")] == [True, False, False]
    cache.clear()
    assert [cache.get(n, "k") is None for n in ("g/a", "g/b", "h/a")] == [True, True, True]


def test_digests_ignore_dict_and_set_order_and_tell_values_apart(make: Any) -> None:
    cache = make()
    one = cache.digest(({"a": 1, "b": {"x": {1, 2, 3}, "y": [1]}}, None))
    two = cache.digest(({"b": {"y": [1], "x": {3, 2, 1}}, "a": 1}, None))
    assert one == two
    assert one != cache.digest(({"a": 1, "b": {"x": {1, 2, 3}, "y": [2]}}, None))
    assert one != cache.digest(({"a": 1, "b": {"x": {1, 2, 3}, "y": [1]}}, 0))
    assert cache.digest((1, None)) != cache.digest((1.0, None)) != cache.digest((True, None))
    assert cache.digest(([1], None)) != cache.digest(((1,), None))


@dataclasses.dataclass
class Point:
    x: int


def test_a_class_the_serializer_does_not_allow_is_refused_and_an_allowed_one_kept(make: Any) -> None:
    with pytest.raises(ag.SerializationError):
        make().put("g/v", "k", CachedOutcome(Point(1), None), None)
    with pytest.raises(ag.SerializationError):
        make().digest((Point(1), None))
    allowed = make(serializer=MsgpackSerializer(allowed=[Point]))
    allowed.put("g/v", "k", CachedOutcome(Point(1), None), None)
    assert allowed.get("g/v", "k").returned == Point(1)


def test_a_serializer_without_dumps_is_refused() -> None:
    with pytest.raises(ag.ActorGraphError, match="serializer= must have dumps"):
        ag.MemoryCache(serializer=object())


def test_an_encrypted_serializer_gives_stable_keyed_digests() -> None:
    pytest.importorskip("cryptography")
    from actorgraph.checkpoint import EncryptedSerializer

    key = EncryptedSerializer.generate_key()
    cache = ag.MemoryCache(serializer=EncryptedSerializer(MsgpackSerializer(), key))
    another_key = EncryptedSerializer.generate_key()
    other = ag.MemoryCache(serializer=EncryptedSerializer(MsgpackSerializer(), another_key))
    parts = ({"a": 1, "b": 2}, None)
    assert cache.digest(parts) == cache.digest(({"b": 2, "a": 1}, None))
    assert cache.digest(parts) != other.digest(parts)
    cache.put("g/v", "k", CachedOutcome({"secret": 1}, None), None)
    assert cache.get("g/v", "k") == CachedOutcome({"secret": 1}, None)


def test_two_sqlite_caches_on_one_file_share_entries(tmp_path: Path) -> None:
    with ag.SqliteCache(tmp_path / "c.db") as one, ag.SqliteCache(tmp_path / "c.db") as two:
        one.put("g/v", "k", CachedOutcome({"n": 1}, None), None)
        assert two.get("g/v", "k") == CachedOutcome({"n": 1}, None)
        two.clear(["g/v"])
        assert one.get("g/v", "k") is None


def test_another_process_reads_what_this_one_wrote(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    program = (
        "import actorgraph as ag; from actorgraph._model.policy import CachedOutcome\n"
        f"with ag.SqliteCache({str(path)!r}) as c:\n"
        "    c.put('g/v', 'k', CachedOutcome({'from': 'child'}, 7), None)"
    )
    subprocess.run([sys.executable, "-c", program], check=True, timeout=60)
    with ag.SqliteCache(path) as cache:
        assert cache.get("g/v", "k") == CachedOutcome({"from": "child"}, 7)


def test_a_closed_sqlite_cache_says_so(tmp_path: Path) -> None:
    cache = ag.SqliteCache(tmp_path / "c.db")
    cache.close()
    cache.close()
    with pytest.raises(ag.ActorGraphError, match="is closed"):
        cache.get("g/v", "k")


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "not.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(ag.ActorGraphError, match="could not open"):
        ag.SqliteCache(path)


def test_expired_entries_are_swept(tmp_path: Path) -> None:
    clock = Clock()
    cache = ag.MemoryCache(clock=clock)
    for i in range(300):
        cache.put("g/v", str(i), CachedOutcome(i, None), 1.0)
        clock.now += 0.01
    assert len(cache) < 300


@pytest.mark.parametrize("ttl", [10**400, float("inf"), 0, -1.0], ids=["10**400", "inf", "0", "-1"])
def test_a_ttl_out_of_range_is_refused_before_anything_is_kept(make: Any, ttl: float) -> None:
    cache = make()
    with pytest.raises(ag.ConfigError, match=r"put\(ttl=.*at most 1e\+09"):
        cache.put("g/v", "k", CachedOutcome(1, None), ttl)
    assert cache.get("g/v", "k") is None
