"""What a run's webhook sends, and owing it in the transaction that records the run's end.

The body is the Run object as LangGraph's server sends it to a webhook: the run
as `GET /threads/{id}/runs/{run_id}` shows it (`run_id`, `thread_id`,
`assistant_id`, `metadata`, `kwargs`, `multitask_strategy`, `created_at`,
`updated_at`), its end's `status` (`success`: finished or paused for a
question; `error`; `interrupted`: cancelled; `rollback`: cancelled and deleted),
`run_started_at`, `run_ended_at`, the thread's `values` when the run ended, and
`error` (`{"error": type, "message": ...}`) when it failed; `webhook_sent_at`
is added at each attempt.

The runner (`_runner.py`) asks `Ends.owed` for a writer before it records a
run's end (the values are read then, off the event loop), and calls that writer
inside the transaction that records the end, with how the queue ended it: the
outbox row exists exactly when the end does. A run whose end is not recorded
here (given back to the queue, or lost to another worker) owes nothing yet.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, Final

from actorgraph._model.errors import SerializationError
from actorgraph.checkpoint._queue import QueuedRow
from actorgraph.server._graphs import Graphs
from actorgraph.server._queued import RunSpec, decode, run_json
from actorgraph.server._state import State
from actorgraph.server._webhook_outbox import Outbox
from actorgraph.server._wire import iso, message_keys, wire_state

__all__ = ["ENDS", "Ends", "webhook_body"]

log = logging.getLogger("actorgraph.server")

ENDS: Final = {"done": "success", "failed": "error", "interrupted": "interrupted", "deleted": "rollback"}
"""A webhook's `status`, by how the queue recorded the run's end (a run given back owes none)."""

Owe = Callable[[Any, str], None]
"""Writes the outbox row of a run's end: `(conn, how the queue ended it)`."""


def webhook_body(  # noqa: PLR0913 - the run and what is known of its end
    row: QueuedRow, spec: RunSpec, *, values: Any, error: Any, began: float | None, ended: float
) -> dict[str, Any]:
    """The Run object a webhook sends, without its `status` (known in the end's transaction)."""
    body = {
        **run_json(row, spec),
        "updated_at": iso(ended),
        "run_started_at": iso(began),
        "run_ended_at": iso(ended),
        "values": values,
    }
    if error is not None:
        body["error"] = error
    return body


class Ends:
    """Owes the webhooks of the runs that end in this process."""

    def __init__(self, outbox: Outbox, graphs: Graphs) -> None:
        """Owe them in `outbox`, reading the values of threads with `graphs`."""
        self.outbox = outbox
        self.state = State(graphs)
        self.wake: Callable[[], None] = lambda: None  # tells this process's deliverer (if any) one is owed

    def owed(self, row: QueuedRow, spec: RunSpec, error: Any, began: float) -> Owe | None:
        """What writes the run's webhook in its end's transaction; None for a run without one.

        Called off the event loop, before the end is recorded: it reads the thread's values.
        """
        if not isinstance(spec.body.get("webhook"), str):
            return None
        values = self._values(spec, row.thread_id)
        body = webhook_body(row, spec, values=values, error=error, began=began, ended=time.time())
        return lambda conn, how: self._owe_in(conn, row, spec, body, how)

    def settled_in(self, conn: Any, row: QueuedRow, how: str) -> None:
        """Owe the webhook of a run a claim ended (its worker died after a cancel), in that transaction.

        Its values are not read there (the transaction holds the store): they are sent as None.
        """
        try:
            spec = decode(self.outbox.store, row)
        except SerializationError:
            return  # the claim that takes a damaged run says so
        if isinstance(spec.body.get("webhook"), str):
            body = webhook_body(row, spec, values=None, error=None, began=None, ended=time.time())
            self._owe_in(conn, row, spec, body, how)

    def _owe_in(self, conn: Any, row: QueuedRow, spec: RunSpec, body: dict[str, Any], how: str) -> None:
        status = ENDS.get(how)
        if status is not None:
            self.outbox.owe_in(
                conn, row.run_id, row.thread_id, spec.body["webhook"], {**body, "status": status}
            )

    def _values(self, spec: RunSpec, thread_id: str) -> Any:
        """The thread's values as the run left them (None if they cannot be read: the webhook still goes)."""
        try:
            served = self.state.graphs.get(spec.graph_id)
            snap = self.state.snapshot(served, thread_id)
            if snap is None:
                return None
            return wire_state(snap.state, message_keys(served.app.spec.merge, snap.state))
        except Exception:  # the run's end is recorded whatever its values do
            log.warning("a webhook's values could not be read", extra={"thread_id": thread_id}, exc_info=True)
            return None
