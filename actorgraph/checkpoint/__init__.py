"""Checkpointers: durable records of runs, and the serializers that encode them.

- `MemoryCheckpointer()`: in the process, for tests and short-lived runs.
- `SqliteCheckpointer(path)`: a local SQLite file (WAL); the embedded default
  (`readonly=True` to read a database without writing to it).
- `PostgresCheckpointer(dsn)`: PostgreSQL through psycopg 3 (`pip install "actorgraph[postgres]"`),
  with every wait bounded (`connect_timeout`, `statement_timeout`, `idle_timeout`, `keepalive`).

Every store is a context manager (`with SqliteCheckpointer(path) as cp:`) and
has `threads()`, `history()`, `prune(thread_id, keep=n)` and `delete_thread()`;
answers are claimed in the store before they run (`claim_answers`), and
`set_metadata` / `get_metadata` keep a few labels per thread.
A state version is stored as a manifest of content-addressed parts, so a value
that does not change is stored once.

Every checkpointer takes `serializer=`: `MsgpackSerializer(allowed=...)` (the
safe default: loading never imports or calls anything not allowed),
`PickleSerializer()` (trusted data only) or `EncryptedSerializer(inner, key)`
(AES-GCM, bound to thread and checkpoint).

Layer (docs/design.md): persistence. May import only `actorgraph._model` (records and errors)
and `actorgraph.events`, never the engine, the builder or the actors.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from actorgraph.checkpoint._protocol import (
    SCHEMA_VERSION,
    AnswerRow,
    Checkpointer,
    CheckpointRow,
    Serializer,
    ThreadInfo,
    WriteRow,
)

if TYPE_CHECKING:
    from actorgraph.checkpoint.memory import MemoryCheckpointer
    from actorgraph.checkpoint.postgres import PostgresCheckpointer
    from actorgraph.checkpoint.serde import EncryptedSerializer, MsgpackSerializer, PickleSerializer
    from actorgraph.checkpoint.sqlite import SqliteCheckpointer

# the stores and serializers load on first use, so `import actorgraph` stays light
_LAZY = {
    "MemoryCheckpointer": "actorgraph.checkpoint.memory",
    "SqliteCheckpointer": "actorgraph.checkpoint.sqlite",
    "PostgresCheckpointer": "actorgraph.checkpoint.postgres",
    "MsgpackSerializer": "actorgraph.checkpoint.serde",
    "PickleSerializer": "actorgraph.checkpoint.serde",
    "EncryptedSerializer": "actorgraph.checkpoint.serde",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        msg = f"module 'actorgraph.checkpoint' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "SCHEMA_VERSION",
    "AnswerRow",
    "CheckpointRow",
    "Checkpointer",
    "EncryptedSerializer",
    "MemoryCheckpointer",
    "MsgpackSerializer",
    "PickleSerializer",
    "PostgresCheckpointer",
    "Serializer",
    "SqliteCheckpointer",
    "ThreadInfo",
    "WriteRow",
]
