"""A cross-thread memory store: JSON values filed under namespaces and keys, shared by every thread.

- `MemoryStore()`: in the process, for tests and one-process services.
- `SqliteStore(path)`: a local SQLite file, shared by threads and processes.
- `PostgresStore(dsn)`: PostgreSQL through psycopg 3 (`pip install "actorgraph[postgres]"`).

Each has `put(namespace, key, value, ttl=...)`, `get`, `delete`,
`search(namespace_prefix, query=..., filter=..., limit=..., offset=...)` and
`list_namespaces(...)`, with async twins (`aput`, `aget`, ...). Given
`index={"embed": fn, "dims": n, "fields": [...]}`, a store embeds the values it
is given and `search(query=...)` ranks them by cosine similarity. A graph
compiled with `compile(store=...)` hands the store to its vertices as `ctx.store`.

Layer (docs/design.md): persistence, beside `actorgraph.checkpoint` (whose SQL dialects
and PostgreSQL connection it reuses). May import only `actorgraph._model` and the checkpoint package.
"""

from __future__ import annotations

from actorgraph._model.errors import StoreError
from actorgraph.store._base import BaseStore
from actorgraph.store._items import Item, SearchItem
from actorgraph.store.memory import MemoryStore
from actorgraph.store.postgres import PostgresStore
from actorgraph.store.sqlite import SqliteStore

__all__ = ["BaseStore", "Item", "MemoryStore", "PostgresStore", "SearchItem", "SqliteStore", "StoreError"]
