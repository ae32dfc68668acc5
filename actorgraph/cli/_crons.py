"""`crons`: the crons of `actorgraph server`'s store (list, add, delete), with no server running.

They are the rows the cron routes and `actorgraph.server.Crons` write; every
server and `actorgraph worker --config` of the store that serves a cron's graph
queues its runs at its ticks. Needs the `server` extra (croniter reads the
schedules).
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from actorgraph import ConfigError
from actorgraph._api.text import duration
from actorgraph.cli._codes import DONE
from actorgraph.cli._console import cell, print_json, stdout
from actorgraph.cli._exits import CommandError, guarded, when
from actorgraph.cli._options import Output, StoreChoice, command, output_options, store_options
from actorgraph.cli._threads import table

__all__ = ["crons"]


@contextmanager
def _crons(store: StoreChoice) -> Iterator[Any]:
    """The store's crons (`actorgraph.server.Crons`), closed afterwards.

    Raises:
        CommandError: no server extra, no such SQLite file, or a bad value (exit 2).
    """
    try:
        from actorgraph.server import Crons  # noqa: PLC0415 - the server extra, for these commands only
    except ImportError as exc:
        name = getattr(exc, "name", None) or "croniter"
        raise CommandError(
            f'crons need the server extra ({name} is missing): pip install "actorgraph[server]"'
        ) from exc
    if not store.dsn and not Path(store.db).is_file():
        msg = f"no store {store.db!r} here: give the server's store with --db or --dsn"
        raise CommandError(msg)
    try:
        with Crons(dsn=store.dsn) if store.dsn else Crons(db=store.db) as found:
            yield found
    except ConfigError as exc:
        raise CommandError(str(exc)) from None


def _json_option(text: str | None, name: str) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CommandError(f"--{name} is not JSON: {exc}") from None


def _record(cron: Any) -> dict[str, Any]:
    """A cron for --json: as the API shows it, with the graph's name."""
    from actorgraph.server._cron_routes import cron_json  # noqa: PLC0415 - the server extra, imported above

    return {"graph": cron.graph, **cron_json(cron)}


@click.group("crons", context_settings={"max_content_width": 100})
def crons() -> None:
    """List, add and delete the crons of `actorgraph server`'s store (runs queued on a schedule).

    A cron queues a run of a graph at each tick of its schedule; every server and
    `actorgraph worker --config` of the store that serves the graph fires it, each
    tick once. Needs the server extra.
    """


def _subcommand(name: str, examples: list[str]) -> Callable[[Callable[..., int]], click.Command]:
    def add_to_group(fn: Callable[..., int]) -> click.Command:
        made = command(name, examples=examples)(fn)
        crons.add_command(made)
        return made

    return add_to_group


@_subcommand(
    "list",
    examples=[
        "actorgraph crons list --db actorgraph.db",
        'actorgraph crons list --graph agent --dsn "$DSN" --json',
    ],
)
@click.option(
    "--graph", metavar="NAME", help="Only the crons of this graph (its name, as the server serves it)."
)
@click.option("--thread", "thread_id", metavar="ID", help="Only the crons of this thread.")
@click.option(
    "--limit", type=click.IntRange(1, 1000), default=100, show_default=True, help="At most this many."
)
@store_options
@output_options
@guarded
def list_crons(
    *, graph: str | None, thread_id: str | None, limit: int, store: StoreChoice, out: Output
) -> int:
    """List the crons, newest first: their schedule, thread, next tick and whether they are enabled."""
    now = time.time()
    with _crons(store) as found:
        listed = found.list(graph=graph, thread_id=thread_id, limit=limit)
    if out.json:
        print_json([_record(cron) for cron in listed])
        return DONE
    if not listed:
        stdout.print("no crons")
        return DONE
    shown = table("cron", "graph", "schedule", "thread", "next tick", "enabled")
    shown.columns[0].no_wrap = True  # an id is copied into `crons delete`: kept whole
    for cron in listed:
        schedule = cron.schedule + (f" ({cron.timezone})" if cron.timezone else "")
        thread = cron.thread_id or f"new ({cron.on_run_completed})"  # a new thread each tick
        tick = (
            "none"
            if cron.next_run_at is None
            else f"{when(cron.next_run_at)} (in {duration(cron.next_run_at - now)})"
        )
        shown.add_row(
            cell(cron.cron_id),
            cell(cron.graph),
            cell(schedule),
            cell(thread),
            tick,
            str(cron.enabled).lower(),
        )
    stdout.print(shown)
    return DONE


@_subcommand(
    "add",
    examples=[
        "actorgraph crons add agent '0 9 * * 1-5' --input '{\"topic\": \"news\"}' --timezone Europe/Paris",
        "actorgraph crons add agent '*/15 * * * *' --thread notes-1 --dsn \"$DSN\"",
    ],
)
@click.argument("graph")
@click.argument("schedule")
@click.option("--input", "input_text", metavar="JSON", help="The input of each run (JSON).")
@click.option(
    "--thread",
    "thread_id",
    metavar="ID",
    help="Run on this thread (it must exist); default: a new thread each tick.",
)
@click.option("--timezone", metavar="ZONE", help="The IANA zone of the schedule (default UTC).")
@click.option(
    "--end-time",
    "end_time",
    metavar="TIME",
    help="Stop firing after this ISO 8601 time (UTC without an offset).",
)
@click.option(
    "--metadata",
    "metadata_text",
    metavar="JSON",
    help="The cron's metadata, carried by each run (JSON object).",
)
@click.option(
    "--multitask-strategy",
    type=click.Choice(["enqueue", "reject", "interrupt", "rollback"]),
    default="enqueue",
    show_default=True,
    help="What a run does when its thread is busy.",
)
@click.option(
    "--keep-threads", is_flag=True, help="Keep each run's new thread (without --thread); default: delete it."
)
@click.option("--disabled", is_flag=True, help="Add it disabled (the API's PATCH enables it).")
@store_options
@output_options
@guarded
def add(  # noqa: PLR0913 - one keyword per option, as click passes them
    *,
    graph: str,
    schedule: str,
    input_text: str | None,
    thread_id: str | None,
    timezone: str | None,
    end_time: str | None,
    metadata_text: str | None,
    multitask_strategy: str,
    keep_threads: bool,
    disabled: bool,
    store: StoreChoice,
    out: Output,
) -> int:
    """Add a cron: a run of GRAPH (its name, as the server serves it) at each tick of SCHEDULE.

    SCHEDULE is a cron expression: five fields (minute hour day-of-month month
    day-of-week), a sixth for the second, or @hourly, @daily... Quote it.
    """
    options: dict[str, Any] = {"multitask_strategy": multitask_strategy, "enabled": not disabled}
    if thread_id is None:
        options["on_run_completed"] = "keep" if keep_threads else "delete"
    elif keep_threads:
        raise CommandError("--keep-threads is for a cron without --thread (a cron on a thread keeps it)")
    try:
        ends = None if end_time is None else dt.datetime.fromisoformat(end_time)
    except ValueError:
        raise CommandError(
            f"--end-time {end_time!r} is not an ISO 8601 time (2030-01-31T09:00:00+01:00)"
        ) from None
    with _crons(store) as found:
        cron = found.add(
            graph, schedule, input=_json_option(input_text, "input"), thread_id=thread_id, timezone=timezone,
            end_time=ends, metadata=_json_option(metadata_text, "metadata"), **options,
        )  # fmt: skip
    if out.json:
        print_json(_record(cron))
    else:
        tick = "none" if cron.next_run_at is None else when(cron.next_run_at)
        stdout.print(f"added cron {cron.cron_id}: {graph} at {schedule!r}, next tick {tick}", highlight=False)
    return DONE


@_subcommand(
    "delete", examples=["actorgraph crons delete 1ef3cefa-4c09-6926-96d0-3dc97fd5e39b --db actorgraph.db"]
)
@click.argument("cron_id")
@store_options
@output_options
@guarded
def delete(*, cron_id: str, store: StoreChoice, out: Output) -> int:
    """Delete a cron (the runs it queued stay)."""
    with _crons(store) as found:
        gone = found.delete(cron_id)
    if not gone:
        raise CommandError(f"no cron {cron_id!r} in the store: `actorgraph crons list` shows them")
    if out.json:
        print_json({"cron_id": cron_id, "deleted": True})
    else:
        stdout.print(f"deleted cron {cron_id}", highlight=False)
    return DONE
