"""Checkpointers: durable records of runs, and the serializers that encode them.

- `MemoryCheckpointer()`: in the process, for tests and short-lived runs.
- `SqliteCheckpointer(path)`: a local SQLite file (WAL); the embedded default.
- `PostgresCheckpointer(dsn)`: PostgreSQL through psycopg 3 (`pip install "actorgraph[postgres]"`).

Every checkpointer takes `serializer=`: `MsgpackSerializer(allowed=...)` (the
safe default: loading never imports or calls anything not allowed),
`PickleSerializer()` (trusted data only) or `EncryptedSerializer(inner, key)`
(AES-GCM, bound to thread and checkpoint).
"""

from actorgraph.checkpoint._protocol import (
    SCHEMA_VERSION,
    Checkpointer,
    CheckpointRow,
    Serializer,
    ThreadInfo,
    WriteRow,
)
from actorgraph.checkpoint.memory import MemoryCheckpointer
from actorgraph.checkpoint.postgres import PostgresCheckpointer
from actorgraph.checkpoint.serde import EncryptedSerializer, MsgpackSerializer, PickleSerializer
from actorgraph.checkpoint.sqlite import SqliteCheckpointer

__all__ = [
    "SCHEMA_VERSION",
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
