"""The queue of runs, in the checkpointer's own SQL database, and the workers that take them.

A queued run is one row of `actorgraph_queue`, keyed by its `run_id`, with its
thread and its place among the thread's runs (`seq`). `CompiledGraph.submit`
queues one when the thread has none queued or running; the API server queues
them behind each other (`multitask_strategy`, `_queue_runs.py`). A worker takes
the oldest queued run whose thread has no other run running or queued before it
(PostgreSQL: `SELECT ... FOR UPDATE SKIP LOCKED`, so workers on other machines
pass each other's rows by; SQLite: `BEGIN IMMEDIATE`, the file's write lock), so
a thread's runs are taken in order and never overlap, and it holds a lease on
the run (`lease_until`, wall-clock seconds), renewed by its heartbeat. A run
whose lease ran out (its worker died) is taken again by the next worker that
looks, which resumes the thread from its checkpoint. The guard against a double
commit is not the lease but the thread's head: moving it is a compare-and-set,
so a worker that lost its lease and still runs cannot commit a superstep its
successor committed.

A run names the graph that runs it (`graph`; None for `submit`'s, which any
worker of the store takes), may be kept for one worker until its turn (the API
server keeps a streamed run for itself), may wait until a time (`not_before`),
and may be asked to stop (`cancel`): its worker reads that at its heartbeat.

Workers register in `actorgraph_workers` with a heartbeat, so front ends know
whether anyone will take a queued resume (`live_workers`).
"""

# ruff: noqa: S608 - statements are fixed text with placeholders; the queue runs in its store's transactions

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable, Sequence
from typing import Any

from actorgraph._model.errors import CheckpointError, ConfigError
from actorgraph.checkpoint._protocol import Checkpointer
from actorgraph.checkpoint._queue_pick import pick
from actorgraph.checkpoint._queue_read import QueueReader
from actorgraph.checkpoint._queue_rows import (
    COLUMNS,
    QUEUE_STATES,
    QueuedRow,
    WorkerRow,
    queued_row,
    shown_id,
)
from actorgraph.checkpoint._queue_runs import (
    NewRun,
    active_runs,
    ask_cancel,
    insert_run,
    lock_thread,
    settle,
    take,
)
from actorgraph.checkpoint._store import check_stored_thread_id, now

__all__ = [
    "QUEUE_STATES",
    "Ended",
    "NewRun",
    "QueuedRow",
    "RunQueue",
    "Settled",
    "WorkerRow",
    "check_lease",
    "run_queue",
    "worker_name",
]

Ended = Callable[[Any, Any, str], None]
"""Told, in the transaction that ends a run, its thread id (as stored) and how it ended:
`(conn, thread_id, state)` with state "done", "failed", "interrupted", "queued" or "deleted"."""

Settled = Callable[[Any, QueuedRow, str], None]
"""Told, in the transaction of a claim, of a running run it ended because its worker died after a
cancel was asked of it: `(conn, its row, how it ended)` ("interrupted" or "deleted")."""

_ERROR_TEXT = 2000  # characters of a failed run's error kept in its row
_LONGEST_LEASE = 86400.0  # a day
_UNREADABLE_PER_CLAIM = 100  # damaged rows one claim marks failed before it lets the transaction go
_ENDS = ("done", "failed", "queued", "interrupted")

log = logging.getLogger("actorgraph.queue")


def worker_name() -> str:
    """`host:pid`, the default name of a worker process."""
    import socket  # noqa: PLC0415 - only workers need it, and `import actorgraph` stays slim

    return f"{socket.gethostname()}:{os.getpid()}"


class RunQueue(QueueReader):
    """The run queue and the worker registry of one SQL checkpointer (SQLite or PostgreSQL)."""

    def transaction(self, op: str, work: Callable[[Any], Any]) -> Any:
        """`work(conn)` in one transaction of the store (the queue's tables made first): for `_queue_runs`."""
        return self._write(op, work)

    # -- submitting ----------------------------------------------------------------------------

    def enqueue(self, thread_id: str, payload: bytes, *, base_head: str | None = None) -> str:
        """Queue a run of `thread_id` for any worker; its thread's listed status becomes "queued"; its run id.

        `base_head` is kept for compatibility: the head is recorded when a worker first takes the run.

        Raises:
            CheckpointError: the thread has a run queued or running already (it is
                not queued twice), or the database failed.
        """
        del base_head
        check_stored_thread_id(thread_id)
        new = NewRun(thread_id, payload)

        def work(conn: Any) -> None:
            lock_thread(self._store, conn, thread_id)
            for found in active_runs(self._store, conn, thread_id):
                held = f" by worker {found.worker}" if found.state == "running" else ""
                msg = (
                    f"thread {thread_id!r} has a run {found.state}{held} already; wait for it to stop "
                    "(handle.wait()) before submitting another"
                )
                raise CheckpointError(msg)
            insert_run(self._store, conn, new, take_now=False, stamp=now())

        self._write(f"queueing a run of thread {thread_id!r}", work)
        return new.run_id

    # -- working -------------------------------------------------------------------------------

    def claim(  # noqa: PLR0913 - who takes, for how long, and which runs; all but two keyword-only
        self,
        worker: str,
        lease: float,
        *,
        graphs: Sequence[str] | None = None,
        mine_only: bool = False,
        ended: Ended | None = None,
        settled: Settled | None = None,
    ) -> QueuedRow | None:
        """Take the oldest run this worker may take, or one whose lease ran out; None when none waits.

        Args:
            worker: the worker's name.
            lease: seconds the run stays its own without a heartbeat.
            graphs: the graphs it runs (None: the runs that name none, `submit`'s).
            mine_only: take only runs kept for this worker.
            ended: told of each run the claim ends on the way.
            settled: told of each of those that its worker ran (and died before stopping), with its row.

        A damaged row (a column holding what the queue never writes there) is marked
        failed on the way, with the reason, and logged; a run whose worker died after it
        was asked to stop is ended as asked. One damaged row never stops the workers.
        """
        if graphs is not None and not graphs:
            return None
        stamp = now()
        query, args = pick(
            self._m, worker, stamp, graphs=graphs, mine_only=mine_only, postgres=self._postgres
        )
        unreadable: list[tuple[Any, Any, str]] = []

        def work(conn: Any) -> QueuedRow | None:
            unreadable.clear()  # a retried transaction starts over
            for _ in range(_UNREADABLE_PER_CLAIM):
                found = conn.execute(query, args).fetchone()
                if found is None:
                    return None
                row = self._readable(conn, found, worker, stamp=stamp, ended=ended, unreadable=unreadable)
                if row is None:
                    continue
                if row.state == "running" and row.cancel is not None:  # its worker died before stopping it
                    self._stopped(conn, row, stamp, ended, settled)
                    continue
                return take(self._store, conn, row, worker, lease=lease, stamp=stamp)
            return None

        result: QueuedRow | None = self._write("taking a queued run", work)
        _warn_unreadable(worker, unreadable)  # once the transaction holds
        return result

    def _stopped(
        self, conn: Any, row: QueuedRow, stamp: float, ended: Ended | None, settled: Settled | None
    ) -> None:
        """End a run whose worker died after it was asked to stop, as asked; tell `ended` and `settled`."""
        how = settle(self._store, conn, row, "interrupted", stamp=stamp)
        if ended is not None:
            ended(conn, row.thread_id, how)
        if settled is not None:
            settled(conn, row, how)

    def _readable(  # noqa: PLR0913 - a claim's state, passed on
        self, conn: Any, found: Any, worker: str, *, stamp: float, ended: Ended | None, unreadable: list[Any]
    ) -> QueuedRow | None:
        """The row `found`, checked; None for a damaged one, marked failed (and noted in `unreadable`)."""
        try:
            return queued_row(found)
        except CheckpointError as exc:
            unreadable.append((found[0], found[1], str(exc)))
            self._fail_unreadable(conn, found[0], str(exc), worker, stamp)
            if ended is not None and isinstance(found[1], str):
                ended(conn, found[1], "failed")
            return None

    def _fail_unreadable(self, conn: Any, key: Any, reason: str, worker: str, stamp: float) -> None:
        """Mark a damaged row failed with why, so no worker takes it again (its key as stored)."""
        m = self._m
        conn.execute(
            f"UPDATE actorgraph_queue SET state = 'failed', error = {m}, worker = {m}, lease_until = NULL,"
            f" updated_at = {m} WHERE run_id = {m}",
            (reason[:_ERROR_TEXT], worker, stamp, key),
        )

    def heartbeat(
        self, worker: str, lease: float, run_ids: Sequence[str], *, register: bool = True
    ) -> dict[str, str]:
        """Record that `worker` lives and renew its leases (and the runs kept for it).

        `register`: record it in the registry of `submit`'s workers (`live_workers`).

        Returns:
            The runs it is to stop: run id -> "lost" (another worker holds it, or it
            ended or went), "interrupt" or "rollback" (a cancel was asked of it).
        """
        m, stamp = self._m, now()

        def work(conn: Any) -> dict[str, str]:
            if register:
                conn.execute(
                    f"INSERT INTO actorgraph_workers VALUES ({m}, {m}, {m}, {m})"
                    " ON CONFLICT (worker) DO UPDATE SET seen_at = excluded.seen_at, lease = excluded.lease",
                    (worker, stamp, stamp, lease),
                )
            stop: dict[str, str] = {}
            for run_id in run_ids:
                renewed = conn.execute(
                    f"UPDATE actorgraph_queue SET lease_until = {m} WHERE run_id = {m}"
                    f" AND worker = {m} AND state IN ('running', 'queued')",
                    (stamp + lease, run_id, worker),
                )
                if renewed.rowcount != 1:
                    stop[run_id] = "lost"
            return stop | self._asked(conn, worker)

        result: dict[str, str] = self._write(f"renewing the leases of worker {worker}", work)
        return result

    def _asked(self, conn: Any, worker: str) -> dict[str, str]:
        found = conn.execute(
            f"SELECT run_id, cancel FROM actorgraph_queue WHERE worker = {self._m} AND state = 'running'"
            " AND cancel IS NOT NULL",
            (worker,),
        ).fetchall()
        return {str(run_id): str(cancel) for run_id, cancel in found}

    def cancels(self, worker: str) -> dict[str, str]:
        """The runs `worker` holds that were asked to stop: run id -> "interrupt" or "rollback" (a read)."""
        if not self._has_tables():
            return {}
        result: dict[str, str] = self._store._query(  # noqa: SLF001
            f"reading the cancels of worker {worker}", lambda conn: self._asked(conn, worker)
        )
        return result

    def finish(
        self, run_id: str, worker: str, *, state: str, error: str | None = None, ended: Ended | None = None
    ) -> str | None:
        """Record how a run this worker holds stopped; how it ended, or None if the lease was lost.

        `state` is "done", "failed", "interrupted" (it was cancelled) or "queued" (let go, for
        another worker). A cancel asked of the run wins: an interrupt makes a run let go or
        cancelled `interrupted`, a rollback deletes it and what it wrote ("deleted").
        `ended` is told in the same transaction.
        """
        if state not in _ENDS:
            raise ConfigError(f"a run finishes as {', '.join(map(repr, _ENDS))}, not {state!r}")
        m, stamp = self._m, now()
        text = None if error is None else error[:_ERROR_TEXT]
        lock = " FOR UPDATE" if self._postgres else ""

        def work(conn: Any) -> str | None:
            found = conn.execute(
                f"SELECT {COLUMNS} FROM actorgraph_queue WHERE run_id = {m} AND worker = {m}"
                f" AND state = 'running'{lock}",
                (run_id, worker),
            ).fetchone()
            if found is None:
                return None
            try:
                row = queued_row(found)
            except CheckpointError as exc:  # damaged while it ran: it ends failed, with why
                self._fail_unreadable(conn, run_id, str(exc), worker, stamp)
                return "failed"
            how = settle(self._store, conn, row, state, stamp=stamp, error=text)
            if ended is not None:
                ended(conn, row.thread_id, how)
            return how

        result: str | None = self._write(f"finishing queued run {run_id!r}", work)
        return result

    def cancel(self, run_id: str, thread_id: str, action: str, *, ended: Ended | None = None) -> str | None:
        """Ask a run to stop ("interrupt" or "rollback"); its state afterwards (`ask_cancel`), or None."""
        if action not in ("interrupt", "rollback"):
            raise ConfigError(f"a run is cancelled with 'interrupt' or 'rollback', not {action!r}")

        def work(conn: Any) -> str | None:
            lock_thread(self._store, conn, thread_id)
            how = ask_cancel(self._store, conn, run_id, action, now())
            if how in ("interrupted", "deleted") and ended is not None:
                ended(conn, thread_id, how)
            return how

        result: str | None = self._write(f"cancelling run {run_id!r}", work)
        return result

    def delete(self, run_id: str) -> bool:
        """Delete a run's row (one that has ended); False if there was none."""
        m = self._m
        sql = f"DELETE FROM actorgraph_queue WHERE run_id = {m} AND state NOT IN ('queued', 'running')"
        result: bool = self._write(
            f"deleting run {run_id!r}", lambda conn: conn.execute(sql, (run_id,)).rowcount == 1
        )
        return result

    def leave(self, worker: str) -> None:
        """Remove `worker` from the registry (it stops)."""
        self._write(
            f"removing worker {worker}",
            lambda conn: conn.execute(f"DELETE FROM actorgraph_workers WHERE worker = {self._m}", (worker,)),
        )


def _shown(key: Any) -> str:
    return key if isinstance(key, str) else shown_id(key)


def _warn_unreadable(worker: str, unreadable: Sequence[tuple[Any, Any, str]]) -> None:
    """Log each damaged row a claim marked failed, naming its thread, its run and why."""
    for run_key, thread_key, reason in unreadable:
        fields = {
            "worker": worker,
            "thread_id": _shown(thread_key),
            "run_id": _shown(run_key),
            "error": reason,
        }
        log.warning("queued run unreadable: marked failed", extra=fields)


def run_queue(checkpointer: Checkpointer) -> RunQueue:
    """The run queue of a SQL checkpointer (`SqliteCheckpointer` or `PostgresCheckpointer`).

    Raises:
        ConfigError: the checkpointer keeps no SQL database (a `MemoryCheckpointer`
            lives in one process, so no worker could take its runs).
    """
    dialect = getattr(checkpointer, "dialect", None)
    if dialect is None or not hasattr(checkpointer, "_write"):
        kind = type(checkpointer).__name__
        msg = (
            f"queued runs need a SqliteCheckpointer (workers on one machine) or a PostgresCheckpointer "
            f"(workers anywhere); {kind} keeps no database workers can share"
        )
        raise ConfigError(msg)
    queue = getattr(checkpointer, "_run_queue", None)
    if not isinstance(queue, RunQueue):
        queue = RunQueue(checkpointer)
        checkpointer._run_queue = queue  # type: ignore[attr-defined]  # noqa: SLF001
    return queue


def check_lease(lease: object) -> float:
    """A lease in seconds, checked: a finite number from 1 to a day.

    Raises:
        ConfigError: anything else.
    """
    if (
        isinstance(lease, bool)
        or not isinstance(lease, int | float)
        or not math.isfinite(lease)
        or not 1 <= lease <= _LONGEST_LEASE
    ):
        msg = f"lease={lease!r}: give the lease in seconds, a number from 1 to 86400 (default 30)"
        raise ConfigError(msg)
    return float(lease)
