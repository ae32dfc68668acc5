"""Graphs the worker tests run in worker processes, with a probe that catches a committed task run again.

`fan` is START -> split -> (left, right) -> join -> END, with a by-key merge:
every task sleeps a little (so a SIGKILL lands in the middle of runs), appends
its name to `log` and adds to `total`. Before it works, each task asks the
store whether its own result is committed already: stored against the
thread's head (a finished task of the pending superstep), or in a later
checkpoint (its superstep committed). Either means a finished task is running
again; the probe then writes a `RERUN` line to the ledger, which the test
counts. Every task that starts writes a `START` line (a task killed before its
result was stored may start again: that is allowed and counted apart).

The ledger is `$WORKER_LEDGER`, the store `$WORKER_DSN` (PostgreSQL) or `$WORKER_DB` (SQLite).
"""

from __future__ import annotations

import os
import time
from typing import Any

import actorgraph as ag
from actorgraph.checkpoint import Checkpointer, PostgresCheckpointer, SqliteCheckpointer
from actorgraph.merge import add, append, by_key

_PAUSE = float(os.environ.get("WORKER_PAUSE", "0.03"))
_stores: dict[int, Checkpointer] = {}


def _store() -> Checkpointer:
    store = _stores.get(os.getpid())
    if store is None:
        dsn = os.environ.get("WORKER_DSN")
        store = PostgresCheckpointer(dsn) if dsn else SqliteCheckpointer(os.environ["WORKER_DB"])
        _stores[os.getpid()] = store
    return store


def _ledger(line: str) -> None:
    fd = os.open(os.environ["WORKER_LEDGER"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{line}\n".encode())
    finally:
        os.close(fd)


def _committed(thread: str, step: int, task_id: str) -> bool:
    """True when this task's result is stored already (against the head, or in a committed superstep)."""
    store = _store()
    head = store.get(thread)
    if head is None:
        return False
    return head.step >= step or task_id in store.get_writes(thread, head.checkpoint_id)


def _work(name: str, amount: int) -> Any:
    def vertex(state: dict[str, Any], ctx: ag.Context[Any]) -> dict[str, Any]:
        thread = str(ctx.thread_id)
        if _committed(thread, ctx.step, ctx.task_id):
            _ledger(f"RERUN {thread} {ctx.step} {ctx.task_id} pid {os.getpid()}")
        _ledger(f"START {thread} {ctx.step} {ctx.task_id} pid {os.getpid()}")
        time.sleep(_PAUSE)
        factor = 1 + state["seed"] % 7
        return {**state, "log": [*state["log"], name], "total": state["total"] + amount * factor}

    return vertex


def fan() -> ag.Graph[Any]:
    """The graph of the kill test (see the module's docstring)."""
    g: ag.Graph[Any] = ag.Graph(merge=by_key({"log": append, "total": add}))
    for name, amount in (("split", 1), ("left", 10), ("right", 100), ("join", 1000)):
        g.add_vertex(name, _work(name, amount))
    g.add_edge(ag.START, "split")
    g.add_edge("split", "left")
    g.add_edge("split", "right")
    g.add_edge(["left", "right"], "join")
    g.add_edge("join", ag.END)
    return g


def expected(seed: int) -> dict[str, Any]:
    """The final state of an uninterrupted run of `fan` from `{"seed": seed, "log": [], "total": 0}`."""
    factor = 1 + seed % 7
    return {"seed": seed, "log": ["split", "left", "right", "join"], "total": 1111 * factor}


def asking() -> ag.Graph[Any]:
    """START -> note -> approve (asks) -> END: the web inbox test's graph."""
    g: ag.Graph[Any] = ag.Graph()
    g.add_vertex("note", lambda s: {**s, "noted": True})
    g.add_vertex("approve", lambda s: {**s, "approved": ag.interrupt({"question": "ship it?"})})
    g.add_edge(ag.START, "note")
    g.add_edge("note", "approve")
    g.add_edge("approve", ag.END)
    return g


def _call_the_service(state: dict[str, Any]) -> dict[str, Any]:
    msg = f"the service is down (seed {state['seed']})"
    raise ConnectionError(msg)


def failing() -> ag.Graph[Any]:
    """START -> prepare -> call (raises ConnectionError, no retry) -> END: the worker log test's graph."""
    g: ag.Graph[Any] = ag.Graph()
    g.add_vertex("prepare", lambda s: {**s, "prepared": True})
    g.add_vertex("call", _call_the_service)
    g.add_edge(ag.START, "prepare")
    g.add_edge("prepare", "call")
    g.add_edge("call", ag.END)
    return g
