"""`show`: one thread, as the store tells it, without running anything or loading its graph.

Large values are shown cut, with their size and the command that shows them
whole (`show --full`); `--json` always holds them whole.
"""

from __future__ import annotations

import time
from typing import Any

import click
from rich.table import Table

from actorgraph._api.text import duration, error_text, interrupt_record, task_record
from actorgraph.cli._codes import DONE
from actorgraph.cli._console import cell, print_json, stdout, styled
from actorgraph.cli._exits import guarded, when
from actorgraph.cli._opened import opened
from actorgraph.cli._options import (
    GraphChoice,
    Output,
    StoreChoice,
    command,
    graph_option,
    output_options,
    store_options,
)
from actorgraph.cli._outcome import Next, cut_short, print_pending, print_value
from actorgraph.cli._stored import Reading, read, read_history
from actorgraph.cli._thread import checked_thread
from actorgraph.cli._threads import ago, store_of, table

__all__ = ["show"]

_CELL = 300  # characters of an error or a question in the superstep table, unless --full
_BRANCHES = 5  # states in flight shown one by one, unless --full


def _supersteps(history: list[Reading]) -> list[tuple[int, dict[str, Any]]]:
    """Every recorded task outcome, oldest superstep first: (superstep, task record)."""
    rows: list[tuple[int, dict[str, Any]]] = []
    for past in reversed(history):
        superstep = past.snapshot.superstep
        rows.extend((superstep.step, task_record(r)) for r in superstep.results.values())
    return rows


def _superstep_table(rows: list[tuple[int, dict[str, Any]]], *, full: bool) -> Table:
    shown = table("step", "vertex", "status", "attempts", "elapsed", "error or question", title="supersteps")
    for step, task in rows:
        elapsed = task["elapsed"]
        took = duration(elapsed) if elapsed is not None else ""
        note = task["error"] or task["question"] or ""
        note = note if full else cut_short(note, _CELL)
        cells = [step, task["task_id"], task["status"], task["attempts"], took, note]
        shown.add_row(*(cell(c) for c in cells))
    return shown


def _history_table(history: list[Reading], now: float) -> Table:
    shown = table("checkpoint", "step", "source", "status", "next", "created", title="history")
    for reading in history:
        past = reading.snapshot
        created = f"{ago(now, past.created_at)} ago"
        cells = [past.checkpoint_id, past.step, past.source, past.status, ", ".join(past.next), created]
        shown.add_row(*(cell(c) for c in cells))
    return shown


def _snapshot_record(reading: Reading) -> dict[str, Any]:
    snapshot = reading.snapshot
    return {
        "checkpoint_id": snapshot.checkpoint_id,
        "parent_id": snapshot.parent_id,
        "step": snapshot.step,
        "source": snapshot.source,
        "status": snapshot.status,
        "next": list(snapshot.next),
        "created_at": snapshot.created_at,
        "state": snapshot.state,
        "state_note": reading.note or None,
        "branches": [{"sender": sender, "state": state} for sender, state in reading.branches],
    }


def _claims_record(reading: Reading) -> list[dict[str, Any]]:
    fields = ("interrupt_id", "vertex", "answered_by", "answered_at")
    return [{name: getattr(claim, name) for name in fields} for claim in reading.claims.values()]


def _tell_branches(head: Reading, then: Next, *, full: bool) -> None:
    """The states in flight one by one (the first few, unless --full): the store alone cannot merge them."""
    shown = head.branches if full else head.branches[:_BRANCHES]
    for sender, state in shown:
        stdout.print(f"from {sender}:")
        print_value(state, then, full=full)
    if len(shown) < len(head.branches):
        more = len(head.branches) - len(shown)
        stdout.print(styled((f"... and {more} more: {then.command('show', '--full')}", "dim")))


def _tell(head: Reading, history: list[Reading], then: Next, *, all_: bool, full: bool) -> None:
    """The thread for a person: status, state, questions or error, supersteps (and checkpoints)."""
    snapshot = head.snapshot
    nxt = f" · next: {', '.join(snapshot.next)}" if snapshot.next else ""
    stdout.print(f"thread {then.thread}: {snapshot.status} · superstep {snapshot.step}{nxt}")
    if head.note:
        stdout.print(styled((f"({head.note})", "dim")))
    if snapshot.state is None and head.branches:
        _tell_branches(head, then, full=full)
    else:
        print_value(snapshot.state, then, full=full)
    if snapshot.interrupts:
        stdout.print(f"waiting for {len(snapshot.interrupts)} answer(s):")
        print_pending(snapshot.interrupts, then, full=full)
    for claim in head.claims.values():
        stdout.print(
            f"answer to {claim.interrupt_id} ({claim.vertex}) taken by {claim.answered_by}, at "
            f"{when(claim.answered_at)}; its run goes on, or stopped (resume finishes it)"
        )
    if snapshot.error is not None:
        stdout.print(styled(("error:", "red"), f" {error_text(snapshot.error)}"))
    elif snapshot.status in ("error", "running"):
        stdout.print(f"resume with: {then.command('resume')}")
    rows = _supersteps(history)
    if rows:
        stdout.print(_superstep_table(rows, full=full))
    if all_:
        stdout.print(_history_table(history, time.time()))


def _read(thread: str, graph: GraphChoice | None, store: StoreChoice) -> tuple[Reading, list[Reading]]:
    """The head and the history: by the store alone, or with the graph's merge when -g is typed."""
    if graph is None or graph.from_env:
        with store_of(None, store) as checkpointer:
            return read(checkpointer, thread), read_history(checkpointer, thread)
    with opened(graph.target, store, readonly=True) as app:
        return Reading(app.get_state(thread)), [Reading(past) for past in app.get_history(thread)]


@command(
    "show",
    examples=[
        "actorgraph show notes-1",
        "actorgraph show notes-1 --full                 # large states and questions whole",
        "actorgraph show notes-1 --history --json --db runs.db",
    ],
)
@click.argument("thread")
@click.option("--history", "all_", is_flag=True, help="Every checkpoint of the thread too.")
@click.option("--full", is_flag=True, help="Show large states, questions and errors whole, not cut.")
@graph_option(required=False)
@store_options
@output_options
@guarded
def show(  # noqa: PLR0913 - click passes every option as a keyword
    *, thread: str, all_: bool, full: bool, graph: GraphChoice | None, store: StoreChoice, out: Output
) -> int:
    """Show THREAD: status, state, pending questions, and each superstep's vertex outcomes.

    It reads the store alone: no graph is loaded (-g TARGET loads it, for a compiled
    graph's own store, or to merge branches in flight with the graph's own merge).
    A large state or question is cut, with its size; --full shows it whole.
    """
    thread = checked_thread(thread)
    head, history = _read(thread, graph, store)
    then = Next(thread, graph if graph is not None and not graph.from_env else None, store)
    if out.json:
        record = _snapshot_record(head) | {
            "thread_id": thread,
            "interrupts": [interrupt_record(p) for p in head.snapshot.interrupts],
            "claimed": _claims_record(head),
            "error": error_text(head.snapshot.error) if head.snapshot.error else None,
            "supersteps": [{"step": step, **task} for step, task in _supersteps(history)],
            "commands": then.answers(head.snapshot.interrupts) if head.snapshot.interrupts else [],
        }
        if all_:
            record["history"] = [_snapshot_record(past) for past in history]
        print_json(record)
    else:
        _tell(head, history, then, all_=all_, full=full)
    return DONE
