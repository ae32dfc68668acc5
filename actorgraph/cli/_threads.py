"""`threads` and `show`: what the store holds, without running anything."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click
from rich.markup import escape
from rich.table import Table

from actorgraph import ActorGraphError, Interrupt, Snapshot
from actorgraph._text import dumps, duration, error_text, interrupt_record, question, task_record
from actorgraph.checkpoint import Checkpointer, ThreadInfo
from actorgraph.checkpoint._load import load  # the questions are read without the graph
from actorgraph.cli._console import print_json, stdout
from actorgraph.cli._exits import DONE, guarded
from actorgraph.cli._opened import open_store, opened
from actorgraph.cli._options import (
    GraphChoice,
    Output,
    StoreChoice,
    command,
    graph_option,
    output_options,
    store_options,
)
from actorgraph.cli._outcome import Next, print_pending

__all__ = ["show", "threads"]

_STATUSES = ("interrupted", "error", "done", "running")


@contextmanager
def _store_of(graph: GraphChoice | None, store: StoreChoice) -> Iterator[Checkpointer]:
    """The store to list: the graph's own if -g names a compiled graph that has one, else --db/--dsn."""
    if graph is None:
        with open_store(store, readonly=True) as checkpointer:
            yield checkpointer
        return
    with opened(graph.target, store, readonly=True) as app:
        assert app.checkpointer is not None  # noqa: S101 - opened() gives only graphs with a store
        yield app.checkpointer


def _waiting(checkpointer: Checkpointer, info: ThreadInfo) -> tuple[Interrupt, ...]:
    """The questions an interrupted thread waits for, read from the store (no graph needed)."""
    if info.status != "interrupted":
        return ()
    try:
        loaded = load(checkpointer, info.thread_id)
    except ActorGraphError:  # a serializer this command was not given (encrypted, say)
        return ()
    return loaded.interrupts if loaded is not None else ()


_WHOLE = ("thread", "status", "interrupt id", "checkpoint")  # ids are copied into commands: kept whole


def _table(*columns: str, title: str | None = None) -> Table:
    """A table whose ids stay whole, and whose other cells wrap rather than being cut."""
    table = Table(title=title, title_justify="left")
    for column in columns:
        table.add_column(column, overflow="fold", no_wrap=column in _WHOLE)
    return table


def _threads_table(entries: list[tuple[ThreadInfo, tuple[Interrupt, ...]]], now: float, since: str) -> Table:
    table = _table("thread", "status", since, "vertex", "question", "interrupt id")
    for info, pending in entries:
        ago = duration(now - info.updated_at)
        first = [info.thread_id, info.status, ago]
        for p in pending or (None,):
            cells = [p.vertex, question(p.value, short=True), p.id] if p else ["", "", ""]
            table.add_row(*(escape(c) for c in [*first, *cells]))
            first = ["", "", ""]
    return table


@command(
    "threads",
    examples=[
        "actorgraph threads",
        "actorgraph threads --status interrupted          # the inbox: who waits for what",
        "actorgraph threads --status error --db runs.db --json",
    ],
)
@click.option("--status", type=click.Choice(_STATUSES), help="Only the threads with this status.")
@graph_option(required=False)
@store_options
@output_options
@guarded
def threads(*, status: str | None, graph: GraphChoice | None, store: StoreChoice, out: Output) -> int:
    """List the threads in the store, most recently updated first.

    With --status interrupted it is the inbox: each question waiting, its vertex,
    and how long it has waited. No graph is needed (-g only to use a compiled
    graph's own store).
    """
    now = time.time()
    with _store_of(graph, store) as checkpointer:
        entries = [(info, _waiting(checkpointer, info)) for info in checkpointer.threads(status=status)]
    if out.json:
        print_json([_thread_record(info, pending, now) for info, pending in entries])
    elif not entries:
        stdout.print(f"no {status} threads" if status else "no threads")
    else:
        stdout.print(_threads_table(entries, now, "waiting" if status == "interrupted" else "updated"))
        if any(pending for _, pending in entries):
            stdout.print("answer with: actorgraph answer THREAD VALUE [--id INTERRUPT_ID] -g TARGET")
    return DONE


def _thread_record(info: ThreadInfo, pending: tuple[Interrupt, ...], now: float) -> dict[str, Any]:
    return {
        "thread_id": info.thread_id,
        "status": info.status,
        "updated_at": info.updated_at,
        "age_seconds": now - info.updated_at,
        "head": info.head,
        "interrupts": [interrupt_record(p) for p in pending],
    }


def _supersteps(history: list[Snapshot[Any]]) -> list[tuple[int, dict[str, Any]]]:
    """Every recorded task outcome, oldest superstep first: (superstep, task record)."""
    rows: list[tuple[int, dict[str, Any]]] = []
    for past in reversed(history):
        rows.extend((past.superstep.step, task_record(r)) for r in past.superstep.results.values())
    return rows


def _superstep_table(rows: list[tuple[int, dict[str, Any]]]) -> Table:
    table = _table("step", "vertex", "status", "attempts", "elapsed", "error or question", title="supersteps")
    for step, task in rows:
        took = duration(task["elapsed"]) if task["elapsed"] is not None else ""
        note = task["error"] or task["question"] or ""
        cells = [str(step), task["task_id"], task["status"], str(task["attempts"]), took, note]
        table.add_row(*(escape(c) for c in cells))
    return table


def _history_table(history: list[Snapshot[Any]], now: float) -> Table:
    table = _table("checkpoint", "step", "source", "status", "next", "created", title="history")
    for past in history:
        created = f"{duration(now - past.created_at)} ago"
        cells = [past.checkpoint_id, str(past.step), past.source, past.status, ", ".join(past.next), created]
        table.add_row(*(escape(c) for c in cells))
    return table


def _snapshot_record(snapshot: Snapshot[Any]) -> dict[str, Any]:
    return {
        "checkpoint_id": snapshot.checkpoint_id,
        "parent_id": snapshot.parent_id,
        "step": snapshot.step,
        "source": snapshot.source,
        "status": snapshot.status,
        "next": list(snapshot.next),
        "created_at": snapshot.created_at,
        "state": snapshot.state,
    }


def _tell(snapshot: Snapshot[Any], history: list[Snapshot[Any]], then: Next, *, all_: bool) -> None:
    """The thread for a person: status, state, questions or error, supersteps (and checkpoints)."""
    nxt = f" · next: {', '.join(snapshot.next)}" if snapshot.next else ""
    stdout.print(f"thread {escape(then.thread)}: {snapshot.status} · superstep {snapshot.step}{escape(nxt)}")
    stdout.print_json(dumps(snapshot.state))
    if snapshot.interrupts:
        stdout.print(f"waiting for {len(snapshot.interrupts)} answer(s):")
        print_pending(snapshot.interrupts, then)
    if snapshot.error is not None:
        stdout.print(f"[red]error:[/] {escape(error_text(snapshot.error))}")
    elif snapshot.status in ("error", "running"):
        stdout.print(f"resume with: {escape(then.command('resume'))}", highlight=False)
    rows = _supersteps(history)
    if rows:
        stdout.print(_superstep_table(rows))
    if all_:
        stdout.print(_history_table(history, time.time()))


@command(
    "show",
    examples=[
        "actorgraph show notes-1 -g flow.yaml",
        "actorgraph show notes-1 -g myapp.flows:approval --history --json",
    ],
)
@click.argument("thread")
@click.option("--history", "all_", is_flag=True, help="Every checkpoint of the thread too.")
@graph_option()
@store_options
@output_options
@guarded
def show(*, thread: str, all_: bool, graph: GraphChoice, store: StoreChoice, out: Output) -> int:
    """Show THREAD: status, state, pending questions, and each superstep's vertex outcomes."""
    then = Next(thread, graph, store)
    with opened(graph.target, store, readonly=True) as app:
        snapshot = app.get_state(thread)
        history = app.get_history(thread)
    if out.json:
        record = _snapshot_record(snapshot) | {
            "thread_id": thread,
            "interrupts": [interrupt_record(p) for p in snapshot.interrupts],
            "error": error_text(snapshot.error) if snapshot.error else None,
            "supersteps": [{"step": step, **task} for step, task in _supersteps(history)],
            "commands": then.answers(snapshot.interrupts) if snapshot.interrupts else [],
        }
        if all_:
            record["history"] = [_snapshot_record(past) for past in history]
        print_json(record)
    else:
        _tell(snapshot, history, then, all_=all_)
    return DONE
