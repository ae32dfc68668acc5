"""`threads`: what the store holds, without running anything or loading any graph.

Each thread's head is read (`_stored`); one that cannot be read (damaged, forged,
or stored with a serializer this command was not given) is listed with what is
wrong instead of its questions, and the others are listed as usual.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from actorgraph import ActorGraphError, Interrupt
from actorgraph._api.text import duration, interrupt_record, question
from actorgraph.checkpoint import Checkpointer, ThreadInfo
from actorgraph.checkpoint._load import load
from actorgraph.checkpoint._queue import run_queue
from actorgraph.cli._codes import DONE
from actorgraph.cli._console import cell, print_json, stderr, stdout
from actorgraph.cli._exits import guarded
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
from actorgraph.cli._outcome import cut_short

__all__ = ["LIMIT", "ago", "store_of", "table", "threads"]

_STATUSES = ("interrupted", "error", "done", "running", "queued")
LIMIT = 100  # threads listed unless --limit says otherwise
_PROBLEM = 300  # characters of what is wrong with a thread, in the table (--json has it whole)


@contextmanager
def store_of(graph: GraphChoice | None, store: StoreChoice) -> Iterator[Checkpointer]:
    """The store to read: a compiled graph's own if -g names one (typed, not from the environment).

    Without `-g` no graph is loaded: the store is `--db` / `--dsn`.
    """
    if graph is None or graph.from_env:
        with open_store(store, readonly=True) as checkpointer:
            yield checkpointer
        return
    with opened(graph.target, store, readonly=True) as app:
        assert app.checkpointer is not None  # noqa: S101 - opened() gives only graphs with a store
        yield app.checkpointer


def ago(now: float, then: object) -> str:
    """`12 s`: how long ago `then` (stored seconds) was; `?` for a stored time that is not a number."""
    if isinstance(then, int | float) and not isinstance(then, bool):
        return duration(now - then)
    return "?"


@dataclass(frozen=True, slots=True)
class _Entry:
    """A listed thread: what the thread table says, its questions, and what is wrong with it."""

    info: ThreadInfo
    pending: tuple[Interrupt, ...] = ()
    problem: str | None = None
    worker: str = ""


def _entry(checkpointer: Checkpointer, info: ThreadInfo) -> _Entry:
    """The thread, its head read: the questions it waits for, or what keeps it from being read."""
    try:
        loaded = load(checkpointer, info.thread_id)
    except Exception as exc:  # noqa: BLE001 - one thread, whatever it holds, never stops the listing
        return _Entry(info, problem=str(exc) or type(exc).__name__)
    if loaded is None:
        return _Entry(info, problem="its head checkpoint is missing from the store")
    return _Entry(info, loaded.interrupts)


def table(*columns: str, title: str | None = None) -> Table:
    """A table whose ids stay whole, and whose other cells wrap rather than being cut."""
    made = Table(title=title, title_justify="left")
    for column in columns:
        made.add_column(column, overflow="fold", no_wrap=column in _WHOLE)
    return made


_WHOLE = ("thread", "status", "interrupt id", "checkpoint")  # ids are copied into commands: kept whole


def _threads_table(entries: list[_Entry], now: float, since: str) -> Table:
    workers = any(entry.worker for entry in entries)
    shown = table(
        "thread", "status", *(["worker"] if workers else []), since, "vertex", "question", "interrupt id"
    )
    for entry in entries:
        info = entry.info
        first = [cell(info.thread_id), cell(info.status), *([cell(entry.worker)] if workers else [])]
        first.append(ago(now, info.updated_at))
        if entry.problem is not None:
            problem = Text(f"unreadable: {cell(cut_short(entry.problem, _PROBLEM))}", style="red")
            shown.add_row(*first, "", problem, "")
            continue
        for p in entry.pending or (None,):
            cells = [cell(p.vertex), cell(question(p.value, short=True)), cell(p.id)] if p else ["", "", ""]
            shown.add_row(*first, *cells)
            first = [""] * len(first)
    return shown


@command(
    "threads",
    examples=[
        "actorgraph threads",
        "actorgraph threads --status interrupted          # the inbox: who waits for what",
        "actorgraph threads --status error --db runs.db --json",
    ],
)
@click.option("--status", type=click.Choice(_STATUSES), help="Only the threads with this status.")
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=LIMIT,
    show_default=True,
    help="List at most this many (the newest); 0 for all of them.",
)
@graph_option(required=False)
@store_options
@output_options
@guarded
def threads(
    *, status: str | None, limit: int, graph: GraphChoice | None, store: StoreChoice, out: Output
) -> int:
    """List the threads in the store, most recently updated first.

    With --status interrupted it is the inbox: each question waiting, its vertex,
    and how long it has waited. No graph is loaded (-g only to use a compiled
    graph's own store). A thread that cannot be read is listed with what is wrong.
    Only the newest --limit threads are read; the listing says when there are more.
    """
    now = time.time()
    with store_of(graph, store) as checkpointer:
        infos = checkpointer.threads(status=status, limit=limit + 1 if limit else None)
        more = bool(limit) and len(infos) > limit
        entries = [_entry(checkpointer, info) for info in (infos[:limit] if more else infos)]
        entries = with_workers(checkpointer, entries, status)
    if out.json:
        print_json([_thread_record(entry, now) for entry in entries])
    elif not entries:
        stdout.print(f"no {status} threads" if status else "no threads")
    else:
        stdout.print(_threads_table(entries, now, "waiting" if status == "interrupted" else "updated"))
        if any(entry.pending for entry in entries):
            stdout.print("answer with: actorgraph answer THREAD VALUE [--id INTERRUPT_ID]")
    if more:
        shown = f"the {limit} most recently updated" + (f" {status}" if status else "")
        stderr.print(f"listed {shown} threads; there are more: raise --limit (0 lists all) or use --status")
    return DONE


def _thread_record(entry: _Entry, now: float) -> dict[str, Any]:
    info = entry.info
    stamp = info.updated_at
    number = isinstance(stamp, int | float) and not isinstance(stamp, bool)
    return {
        "thread_id": info.thread_id,
        "status": info.status,
        "updated_at": stamp,
        "age_seconds": now - stamp if number else None,
        "head": info.head,
        "interrupts": [interrupt_record(p) for p in entry.pending],
        "problem": entry.problem,
        "worker": entry.worker or None,
    }


def with_workers(checkpointer: Checkpointer, entries: list[_Entry], status: str | None) -> list[_Entry]:
    """The entries with the worker holding each running run, after the queued runs of new threads."""
    try:
        rows: dict[str, Any] = {}
        for row in run_queue(checkpointer).rows():  # a thread's oldest: the one running, if one is
            rows.setdefault(row.thread_id, row)
    except ActorGraphError:  # a memory store, or the queue cannot be read: no worker to show
        return entries
    listed = {entry.info.thread_id for entry in entries}
    fresh = [
        _Entry(ThreadInfo(row.thread_id, "", row.state, row.updated_at), worker=row.worker or "")
        for row in rows.values()
        if row.thread_id not in listed and status in (None, row.state)
    ]
    held = [
        dataclasses.replace(e, worker=rows[e.info.thread_id].worker or "")
        if e.info.thread_id in rows and rows[e.info.thread_id].state == "running"
        else e
        for e in entries
    ]
    return fresh + held
