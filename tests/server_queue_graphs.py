"""Graphs for the API server's queued-run tests: runs that take a while, runs whose vertices write a ledger.

`steps`: first (quick) -> second (an `async` vertex that sleeps `state["sleep"]`
seconds, cancelled with its run): a run whose first superstep is committed while
its second still goes, so an interrupt keeps it and a rollback takes it away.

`ledger`: a -> b -> c -> d, each sleeping `$SERVER_PAUSE` seconds (0.4 by
default) and appending one fsynced line to the ledger `$SERVER_LEDGER`
(`tests/ledger.py`): `RUN thread step vertex pid`. Before it works, each vertex
asks the store whether its result is stored already (its superstep committed:
the thread's head is at or past its step; or its result stored against the
head); if it is, a finished task is running again, and it writes `RERUN ...`,
which the crash tests count. The store is
`$SERVER_DB` (SQLite) or `$SERVER_DSN` (PostgreSQL).

`asking`: one vertex that asks a question (a thread paused across a kill).
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from ledger import note

import actorgraph as ag

_stores: dict[int, Any] = {}


def _first(state: dict[str, Any]) -> dict[str, Any]:
    return {**state, "log": [*state.get("log", []), "first"]}


async def _second(state: dict[str, Any]) -> dict[str, Any]:
    await asyncio.sleep(float(state.get("sleep", 1.0)))  # a cancelled run cancels it: no thread sleeps on
    return {**state, "log": [*state["log"], "second"]}


def steps() -> ag.Graph[Any]:
    """first -> second (sleeps): see the module."""
    graph: ag.Graph[Any] = ag.Graph()
    graph.add_vertex("first", _first).add_vertex("second", _second)
    graph.add_edge(ag.START, "first").add_edge("first", "second").add_edge("second", ag.END)
    return graph


def _store() -> Any:
    from actorgraph.checkpoint import PostgresCheckpointer, SqliteCheckpointer

    store = _stores.get(os.getpid())
    if store is None:
        dsn = os.environ.get("SERVER_DSN")
        store = PostgresCheckpointer(dsn) if dsn else SqliteCheckpointer(os.environ["SERVER_DB"])
        _stores[os.getpid()] = store
    return store


def _noted(name: str) -> Any:
    def vertex(state: dict[str, Any], ctx: ag.Context[Any]) -> dict[str, Any]:
        thread, ledger = str(ctx.thread_id), os.environ["SERVER_LEDGER"]
        store = _store()
        head = store.get(thread)
        if head is not None and (
            head.step >= ctx.step or ctx.task_id in store.get_writes(thread, head.checkpoint_id)
        ):
            note(ledger, f"RERUN {thread} {ctx.step} {name} {os.getpid()}")
        note(ledger, f"RUN {thread} {ctx.step} {name} {os.getpid()}")
        time.sleep(float(os.environ.get("SERVER_PAUSE", "0.4")))
        return {**state, "log": [*state.get("log", []), name]}

    vertex.__name__ = name
    return vertex


def ledger() -> ag.Graph[Any]:
    """a -> b -> c -> d, each noting itself in the ledger: see the module."""
    graph: ag.Graph[Any] = ag.Graph()
    previous = ag.START
    for name in ("a", "b", "c", "d"):
        graph.add_vertex(name, _noted(name))
        graph.add_edge(previous, name)
        previous = name
    graph.add_edge(previous, ag.END)
    return graph


def _ask(state: dict[str, Any]) -> dict[str, Any]:
    return {**state, "answer": ag.interrupt({"question": "go on?"})}


def asking() -> ag.Graph[Any]:
    """One vertex that asks a question and keeps the answer."""
    graph: ag.Graph[Any] = ag.Graph()
    graph.add_vertex("ask", _ask).add_edge(ag.START, "ask").add_edge("ask", ag.END)
    return graph
