"""The webhooks owed: an outbox table in the checkpointer's database, taken under a lease.

When a run with a webhook ends, its Run object is written to
`actorgraph_server_webhooks` in the transaction that records the end (so a
delivery is owed exactly when the end is recorded, whatever happens to the
process next). Any server or `actorgraph worker --config` of the store that has
a signing secret takes the oldest delivery due, under a lease; delivered, the
row is deleted; failed, it is due again later (`next_at`), until the time for
retries has passed, when it is deleted and the failure logged. A process that
dies while delivering leaves its lease to run out, and another (or itself,
restarted) delivers it: at least once. The body is encoded by the
checkpointer's serializer (an encrypting one encrypts it), bound to its run.

A row is read as hostile: one that holds what this module never writes there is
deleted with a warning naming its run, never delivered and never fatal.
"""

# ruff: noqa: S608, SLF001 - statements are fixed text with placeholders; they use their store's transactions

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any, Final

import orjson

from actorgraph._model.errors import ActorGraphError
from actorgraph.checkpoint._codec import aad
from actorgraph.checkpoint._store import now

__all__ = ["Outbox", "Owed"]

log = logging.getLogger("actorgraph.server")

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS actorgraph_server_webhooks (
    run_id {key} PRIMARY KEY, thread_id {key} NOT NULL, url {text} NOT NULL, payload {blob} NOT NULL,
    attempts {int} NOT NULL, next_at {real} NOT NULL, created_at {real} NOT NULL, worker {text},
    lease_until {real}, error {text}
);
CREATE INDEX IF NOT EXISTS actorgraph_server_webhooks_by_time ON actorgraph_server_webhooks (next_at)
"""
_COLUMNS: Final = "run_id, thread_id, url, payload, attempts, created_at"
_FORGED: Final = 366 * 86400.0  # a time over a year ahead was written by no server: it does not hold
_DAMAGED_PER_TAKE: Final = 100
_ERROR_TEXT: Final = 2000


@dataclass(frozen=True, slots=True)
class Owed:
    """A delivery taken from the outbox: the run, its URL, the Run object to send, tries so far, since."""

    run_id: str
    thread_id: str
    url: str
    body: dict[str, Any]
    attempts: int
    created_at: float


def _aad(run_id: str) -> bytes:
    return aad(run_id, "server-webhook")


class Outbox:
    """The owed webhooks of one SQL checkpointer's database (its table made when it is opened)."""

    def __init__(self, store: Any) -> None:
        """Keep them in `store`'s database (a `SqliteCheckpointer` or `PostgresCheckpointer`)."""
        self._store = store
        self.store = store
        self._m = store.dialect.mark
        self._lock = " FOR UPDATE SKIP LOCKED" if store.dialect.name == "PostgreSQL" else ""
        d = store.dialect
        ddl = _SCHEMA.format(key=d.key, text=d.text, real=d.real, int=d.int, blob=d.blob)
        statements = [s for s in ddl.split(";") if s.strip()]

        def create(conn: Any) -> None:
            if d.lock_schema:
                conn.execute(d.lock_schema)
            for statement in statements:
                conn.execute(statement)

        store._write("creating the webhook outbox", create)

    def owe_in(self, conn: Any, run_id: str, thread_id: str, url: str, body: dict[str, Any]) -> None:
        """Owe a delivery of `body` to `url`, in the caller's transaction (the one that ends the run)."""
        payload = self._store.serializer.dumps(orjson.dumps(body), aad=_aad(run_id))
        m, stamp = self._m, now()
        conn.execute(
            f"INSERT INTO actorgraph_server_webhooks (run_id, thread_id, url, payload, attempts, next_at,"
            f" created_at) VALUES ({m}, {m}, {m}, {m}, 0, {m}, {m}) ON CONFLICT (run_id) DO NOTHING",
            (run_id, thread_id, url, payload, stamp, stamp),
        )

    def take(self, worker: str, lease: float) -> Owed | None:
        """Hold the oldest delivery due for `lease` seconds; None when none is due.

        A damaged row met on the way is deleted and logged.
        """
        m = self._m
        sql = (
            f"SELECT {_COLUMNS} FROM actorgraph_server_webhooks"
            f" WHERE (next_at <= {m} OR next_at > {m}) AND (lease_until IS NULL OR lease_until < {m}"
            f" OR lease_until > {m}) ORDER BY next_at, run_id LIMIT 1{self._lock}"
        )
        damaged: list[tuple[Any, str]] = []

        def work(conn: Any) -> Owed | None:
            damaged.clear()  # a retried transaction starts over
            stamp = now()
            args = (stamp, stamp + _FORGED, stamp, stamp + _FORGED)
            for _ in range(_DAMAGED_PER_TAKE):
                found = conn.execute(sql, args).fetchone()
                if found is None:
                    return None
                try:
                    owed = self._owed(found)
                except _Damaged as exc:
                    damaged.append((found[0], str(exc)))
                    conn.execute(f"DELETE FROM actorgraph_server_webhooks WHERE run_id = {m}", (found[0],))
                    continue
                conn.execute(
                    f"UPDATE actorgraph_server_webhooks SET worker = {m}, lease_until = {m}"
                    f" WHERE run_id = {m}",
                    (worker, stamp + lease, owed.run_id),
                )
                return owed
            return None

        result: Owed | None = self._store._write("taking an owed webhook", work)
        for run_id, why in damaged:
            log.warning("owed webhook unreadable: dropped", extra={"run_id": repr(run_id)[:80], "error": why})
        return result

    def _owed(self, found: Any) -> Owed:
        run_id, thread_id, url, payload, attempts, created = found
        if not (isinstance(run_id, str) and isinstance(thread_id, str) and isinstance(url, str)):
            raise _Damaged("its run, thread or URL is not text")
        if isinstance(attempts, bool) or not isinstance(attempts, int) or not 0 <= attempts < 2**31:
            raise _Damaged(f"its attempts are {attempts!r:.40}")
        if isinstance(created, bool) or not isinstance(created, int | float) or not math.isfinite(created):
            raise _Damaged(f"its time is {created!r:.40}")
        try:
            body = orjson.loads(self._store.serializer.loads(bytes(payload), aad=_aad(run_id)))
        except (ActorGraphError, orjson.JSONDecodeError, TypeError, ValueError) as exc:
            raise _Damaged(f"its body cannot be read: {exc}") from None
        if not isinstance(body, dict):
            raise _Damaged("its body is not a JSON object")
        return Owed(run_id, thread_id, url, body, attempts, float(created))

    def delivered(self, run_id: str) -> None:
        """The delivery was made (or given up): it is owed no more, whoever holds it now."""
        sql = f"DELETE FROM actorgraph_server_webhooks WHERE run_id = {self._m}"
        self._store._write(
            f"forgetting the webhook of run {run_id}", lambda conn: conn.execute(sql, (run_id,))
        )

    def failed(self, run_id: str, worker: str, *, error: str, retry_at: float | None) -> None:
        """A delivery failed: due again at `retry_at`, or dropped (None) when its time for retries is over."""
        m = self._m
        if retry_at is None:
            self.delivered(run_id)
            return
        sql = (
            f"UPDATE actorgraph_server_webhooks SET attempts = attempts + 1, next_at = {m}, worker = NULL,"
            f" lease_until = NULL, error = {m} WHERE run_id = {m} AND worker = {m}"
        )
        args = (retry_at, error[:_ERROR_TEXT], run_id, worker)
        self._store._write(f"retrying the webhook of run {run_id}", lambda conn: conn.execute(sql, args))

    def give_back(self, run_id: str, worker: str) -> None:
        """Let a delivery this process holds go, due at once (the process stops)."""
        m = self._m
        sql = (
            f"UPDATE actorgraph_server_webhooks SET worker = NULL, lease_until = NULL"
            f" WHERE run_id = {m} AND worker = {m}"
        )
        self._store._write(
            f"giving back the webhook of run {run_id}", lambda conn: conn.execute(sql, (run_id, worker))
        )

    def count(self) -> int:
        """How many deliveries are owed (for tests and statistics)."""
        found = self._store._read(
            "counting owed webhooks", "SELECT count(*) FROM actorgraph_server_webhooks", ()
        )
        return int(found[0][0])


class _Damaged(Exception):  # noqa: N818 - internal: a row this module did not write
    """A column of an outbox row holds what is never written there."""
