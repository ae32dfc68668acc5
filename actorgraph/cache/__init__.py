"""Node caches: where vertices with a `CachePolicy` keep their outcomes (`Graph.compile(cache=...)`).

- `MemoryCache()`: in this process, shared by every thread and every graph given it.
- `SqliteCache(path)`: a SQLite file (WAL mode), shared by every process that opens it.

A cache keeps what a vertex's function returned (a state, None or a `Command`,
its `Send`s included) and its private value, stored with a checkpoint
serializer: the safe `MsgpackSerializer` by default (no pickle; give it
`allowed=` for dataclass or pydantic states, as for a checkpointer). Keys are
digests of the vertex's input (`digest`): the same in every process, dict keys
and set members in any order, and never one key for two inputs a vertex could
tell apart (`1`, `1.0` and `True`; `str` and `bytes`; `list` and `tuple`; a
dict and a value spelling it out). With an `EncryptedSerializer` a digest is
keyed, so it tells nothing about the state without the key. An entry past its
TTL is never returned; the clock is `time.time` unless `clock=` says
otherwise. An entry the cache cannot use (damaged, or written with another
serializer or key) counts as a miss, with a `CacheWarning`: the vertex runs and
its outcome replaces the entry.

Layer (docs/design.md): persistence, beside `checkpoint/`. Imports only
`actorgraph._model` (records, errors) and the checkpoint serializers, never the
engine, the builder or the actors. `import actorgraph` loads neither `sqlite3`
nor the serializers: they load with the first cache made.
"""

from actorgraph.cache._caches import MemoryCache, SqliteCache

__all__ = ["MemoryCache", "SqliteCache"]
