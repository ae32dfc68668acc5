"""Checkpointers: durable records of runs (memory, SQLite, PostgreSQL) and their serializers."""
