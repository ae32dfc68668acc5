"""The server's runs: rows of the run queue that `CompiledGraph.submit` and `actorgraph worker` use.

A run of the API is a queue row that names its graph (`graph`, the graph's
name), whose payload is the request (encoded by the checkpointer's serializer,
so an encrypting one encrypts it too). Creating it is one transaction on the
thread's lock (`_queue_runs.py`): the thread's row is read (or made, with
`if_not_exists="create"`), its runs queued or running are found, and
`multitask_strategy` decides: `reject` refuses (nothing is written), `enqueue`
adds the run behind them, `interrupt` and `rollback` end the queued ones and ask
the running one to stop (its worker, in any process, reads that at its next
heartbeat). A run a request waits for (streamed, waited) is taken by this
server at once when its thread is free, or kept for it until its turn.

Ending a run records the thread's status in the same transaction: `busy` while
runs of it remain, else `idle`, `interrupted` (paused or cancelled) or `error`.
The API's run status is the queue state's: pending, running, success, error,
interrupted.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any, Final, cast

from actorgraph._model.errors import SerializationError
from actorgraph.checkpoint._codec import aad
from actorgraph.checkpoint._queue import NewRun, QueuedRow, run_queue
from actorgraph.checkpoint._queue_runs import active_runs, ask_cancel, insert_run, lock_thread
from actorgraph.server._graphs import Served
from actorgraph.server._models import RunCreate
from actorgraph.server._owners import Filter
from actorgraph.server._tables import BusyError, Tables
from actorgraph.server._wire import iso

__all__ = ["STATUS", "Created", "RunSpec", "Runs", "run_json"]

STATUS: Final = {
    "queued": "pending",
    "running": "running",
    "done": "success",
    "failed": "error",
    "interrupted": "interrupted",
}
"""The API's status of a run, by its state in the queue."""

_STATES: Final = {status: state for state, status in STATUS.items()}
_HEAD_STATUS: Final = {"interrupted": "interrupted", "error": "error"}


@dataclass(frozen=True, slots=True)
class RunSpec:
    """What a server run is, as its queue row's payload keeps it: the request, its graph, its thread's end."""

    graph_id: str
    assistant_id: str
    body: dict[str, Any]
    temporary: bool = False  # a stateless run whose thread is deleted when it ends

    def request(self) -> RunCreate:
        """The request, validated again (a stored payload is read as hostile as a request)."""
        return RunCreate.model_validate(self.body)


@dataclass(frozen=True, slots=True)
class Created:
    """A run just created: its row, what it is, and the runs of its thread it asked to stop."""

    row: QueuedRow
    spec: RunSpec
    asked: tuple[str, ...] = ()


def _aad(thread_id: str) -> bytes:
    return aad(thread_id, "server-run")


def encode(store: Any, thread_id: str, spec: RunSpec) -> bytes:
    """A run's payload for its queue row."""
    payload = {
        "kind": "server",
        "graph_id": spec.graph_id,
        "assistant_id": spec.assistant_id,
        "body": spec.body,
        "temporary": spec.temporary,
    }
    data: bytes = store.serializer.dumps(payload, aad=_aad(thread_id))
    return data


def decode(store: Any, row: QueuedRow) -> RunSpec:
    """What a queue row of the server holds.

    Raises:
        SerializationError: a payload that cannot be read or is not a server run's.
    """
    payload = store.serializer.loads(row.payload, aad=_aad(row.thread_id))
    if (
        not isinstance(payload, dict)
        or payload.get("kind") != "server"
        or not isinstance(payload.get("body"), dict)
        or not all(isinstance(payload.get(k), str) for k in ("graph_id", "assistant_id"))
    ):
        msg = f"queued run {row.run_id} of thread {row.thread_id!r} holds no run of the API server"
        raise SerializationError(msg)
    return RunSpec(
        payload["graph_id"], payload["assistant_id"], payload["body"], bool(payload.get("temporary"))
    )


def run_json(row: QueuedRow, spec: RunSpec | None) -> dict[str, Any]:
    """A run as the API shows it."""
    body = spec.body if spec is not None else {}
    stream = body.get("stream_mode", "values")
    return {
        "run_id": row.run_id,
        "thread_id": row.thread_id,
        "assistant_id": spec.assistant_id if spec is not None else None,
        "created_at": iso(row.submitted_at),
        "updated_at": iso(row.updated_at),
        "status": STATUS.get(row.state, row.state),
        "metadata": {
            **(body.get("metadata") or {}),
            **({"graph_id": spec.graph_id, "assistant_id": spec.assistant_id} if spec is not None else {}),
        },
        "kwargs": {
            "input": body.get("input"),
            "command": body.get("command"),
            "stream_mode": [stream] if isinstance(stream, str) else stream,
            "config": body.get("config") or {},
            "webhook": body.get("webhook"),
        },
        "multitask_strategy": body.get("multitask_strategy", "enqueue"),
    }


def _busy(thread_id: str) -> BusyError:
    msg = (
        f"thread {thread_id} has a run pending or running; wait for it to end, or send "
        "multitask_strategy 'enqueue', 'interrupt' or 'rollback'"
    )
    return BusyError(msg)


class Runs:
    """The server's runs in the queue of its checkpointer: created, read, cancelled, ended."""

    def __init__(self, store: Any, tables: Tables, *, name: str, lease: float) -> None:
        """Queue runs in `store`'s run queue; `name` is this server's name as a worker, `lease` its lease."""
        self.store = store
        self.tables = tables
        self.queue = run_queue(store)
        self.name = name
        self.lease = lease

    def create(  # noqa: PLR0913 - the graph, the request, the thread, and how the run is held
        self,
        served: Served,
        body: RunCreate,
        thread_id: str,
        *,
        create: bool,
        temporary: bool,
        here: bool,
        run_id: str | None = None,
        where: Filter | None = None,
    ) -> Created:
        """Create a run of `served` on `thread_id` as its `multitask_strategy` says, in one transaction.

        Args:
            served: the graph.
            body: the request.
            thread_id: the thread.
            create: make the thread when it does not exist.
            temporary: delete the thread when the run ends (a stateless run).
            here: a request here waits for it (taken now when free and due, else kept for this server).
            run_id: its id (a new UUID by default).
            where: an auth handler's filter the thread meets (one made here has the run's metadata).

        Raises:
            BusyError: `reject` on a thread with a run pending or running (nothing was written).
            LookupError: no thread (meeting `where`) and `create` is False.
        """
        spec = RunSpec(served.name, served.assistant_id, body.model_dump(mode="json"), temporary)
        stamp = time.time()

        def work(conn: Any) -> Created:
            return self.create_in(
                conn, served, spec, body, thread_id, create=create, here=here, run_id=run_id, stamp=stamp,
                metadata=body.metadata, where=where,
            )  # fmt: skip

        return cast("Created", self.queue.transaction(f"creating a run on thread {thread_id!r}", work))

    def create_in(  # noqa: PLR0913 - the transaction, the run, its thread, and how it is held
        self,
        conn: Any,
        served: Served,
        spec: RunSpec,
        body: RunCreate,
        thread_id: str,
        *,
        create: bool,
        here: bool,
        run_id: str | None,
        stamp: float,
        metadata: dict[str, Any] | None = None,
        where: Filter | None = None,
    ) -> Created:
        """`create`'s steps inside a caller's transaction (a cron's tick claims its tick in the same one).

        `metadata` is a thread's made here (`create`); `where`, an auth handler's filter the thread
        meets. Nothing is written before a refusal.

        Raises:
            BusyError: `reject` on a busy thread.
            LookupError: no such thread (meeting `where`) and `create` is False.
        """
        payload, after = encode(self.store, thread_id, spec), body.after_seconds
        lock_thread(self.store, conn, thread_id)
        thread = self.tables.thread_in(
            conn, thread_id, create=create, stamp=stamp, metadata=metadata, where=where
        )
        active = active_runs(self.store, conn, thread_id)
        if active and body.multitask_strategy == "reject":
            raise _busy(thread_id)
        asked = self._stop(conn, active, body.multitask_strategy, stamp)
        take_now = here and not (asked if body.multitask_strategy != "enqueue" else active) and not after
        new = NewRun(
            thread_id, payload, graph=served.name, run_id=run_id or str(uuid.uuid4()),
            holder=self.name if here else None, kept_for=self.name if here and not take_now else None,
            lease=self.lease, not_before=stamp + after if after else None,
        )  # fmt: skip
        row = insert_run(self.store, conn, new, take_now=take_now, stamp=stamp)
        self.tables.busy_in(conn, thread, served, stamp)
        return Created(row, spec, asked)

    def ended_in(
        self, conn: Any, thread_id: str, how: str, status: str | None = None, error: Any = None
    ) -> None:
        """Record the thread's status once one of its runs ended (`how`: its end in the queue)."""
        if active_runs(self.store, conn, thread_id):
            status = "busy"  # its next run is on its way
        elif status is None or how in ("deleted", "queued"):
            status = {"failed": "error", "interrupted": "interrupted"}.get(how) or self._head_status(
                conn, thread_id
            )
        self.tables.ended_in(conn, thread_id, status, error)

    def _head_status(self, conn: Any, thread_id: str) -> str:
        found = conn.execute(
            f"SELECT status FROM actorgraph_threads WHERE thread_id = {self.store.dialect.mark}",  # noqa: S608
            (thread_id,),
        ).fetchone()
        return _HEAD_STATUS.get(found[0] if found else "", "idle")

    def get(self, thread_id: str, run_id: str) -> tuple[QueuedRow, RunSpec | None] | None:
        """A run of the thread and what it is (None when its payload cannot be read); None if absent."""
        row = self.queue.run(run_id)
        if row is None or row.thread_id != thread_id or row.graph is None:
            return None
        return row, self._spec(row)

    def _spec(self, row: QueuedRow) -> RunSpec | None:
        try:
            return decode(self.store, row)
        except SerializationError:
            return None

    def listing(
        self, thread_id: str, *, status: str | None, limit: int, offset: int
    ) -> list[tuple[QueuedRow, RunSpec | None]]:
        """The thread's runs, newest first, one page of them (with that API status)."""
        if status is not None and status not in _STATES:
            return []
        states = None if status is None else (_STATES[status],)
        rows = self.queue.runs_of(thread_id, states=states, limit=limit, offset=offset)
        return [(row, self._spec(row)) for row in rows]

    def cancel(self, thread_id: str, run_id: str, action: str) -> str | None:
        """Ask a run to stop; its state afterwards ("running": its worker stops it), None if absent."""
        return self.queue.cancel(run_id, thread_id, action, ended=self.ended_in)

    def _stop(self, conn: Any, active: list[Any], strategy: str, stamp: float) -> tuple[str, ...]:
        """For `interrupt` and `rollback`: end the queued runs, ask the running one to stop; those asked."""
        if strategy not in ("interrupt", "rollback"):
            return ()
        asked = [
            run.run_id
            for run in active
            if ask_cancel(self.store, conn, run.run_id, strategy, stamp) == "running"
        ]
        return tuple(str(run_id) for run_id in asked)
