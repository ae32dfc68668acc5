"""`run`, `answer` and `resume`: start or continue a run on a thread, with the live view."""

from __future__ import annotations

import json
import sys
import uuid
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from actorgraph import ActorGraphError, Command, CompiledGraph
from actorgraph.cli._console import stderr, stdout
from actorgraph.cli._exits import CommandError, guarded
from actorgraph.cli._opened import close_quickly, opened
from actorgraph.cli._options import (
    GraphChoice,
    Output,
    StoreChoice,
    command,
    graph_option,
    output_options,
    store_options,
)
from actorgraph.cli._outcome import Next, tell_done, tell_failed, tell_stopped
from actorgraph.cli._view import view_on

__all__ = ["answer", "resume", "run"]

_quiet = click.option("-q", "--quiet", is_flag=True, help="No live view; only the outcome.")


def _drive(app: CompiledGraph[Any], given: Any, then: Next, *, out: Output, quiet: bool) -> int:
    """Run (or continue) the thread with the view, then tell how it ended; the exit code."""
    view = view_on(stderr if out.json else stdout)
    try:
        with nullcontext() if quiet else view.shown():
            result = app.invoke(given, thread_id=then.thread, listeners=[] if quiet else [view])
    except KeyboardInterrupt:  # invoke has cancelled the run: the thread stays resumable
        close_quickly(app)
        return tell_stopped(then, out)
    except ActorGraphError as exc:
        return tell_failed(exc, then, out)
    return tell_done(result, then, out)


def _input(text: str | None, file: str | None) -> Any:
    """The input state from --input or --input-file (`-` reads stdin); {} when neither is given."""
    if text is not None and file is not None:
        raise CommandError("give the input once: --input JSON or --input-file FILE, not both")
    where = "--input"
    if file is not None:
        where = f"--input-file {file}"
        try:
            text = sys.stdin.read() if file == "-" else Path(file).read_text()
        except OSError as exc:
            raise CommandError(f"cannot read {where}: {exc.strerror or exc}") from exc
    if text is None:
        return {}
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CommandError(f"{where} is not JSON: {exc}") from exc


def _refuse_unfinished(app: CompiledGraph[Any], then: Next) -> None:
    """A new input on a thread that waits for an answer, or failed, would be refused: say what to do."""
    assert app.checkpointer is not None  # noqa: S101 - opened() gives only graphs with a store
    if app.checkpointer.get(then.thread) is None:
        return
    status = app.get_state(then.thread).status
    if status == "interrupted":
        msg = f"thread {then.thread!r} waits for an answer; answer it: {then.command('answer', 'VALUE')}"
        raise CommandError(msg)
    if status in ("error", "running"):
        msg = f"thread {then.thread!r} did not finish ({status}); resume it: {then.command('resume')}"
        raise CommandError(msg)


@command(
    "run",
    examples=[
        """actorgraph run flow.yaml --input '{"topic": "release notes"}'""",
        "actorgraph run myapp.flows:approval --thread notes-1 --db runs.db",
        "actorgraph run flows.py:graph --input-file input.json --json",
    ],
)
@click.argument("target")
@click.option("--input", "input_json", metavar="JSON", help="The input state, as JSON (default: {}).")
@click.option("--input-file", metavar="FILE", help="Read the input state (JSON) from FILE; - is stdin.")
@click.option("--thread", metavar="ID", help="The thread to run on (default: a new one, printed).")
@_quiet
@store_options
@output_options
@guarded
def run(  # noqa: PLR0913 - click passes every option as a keyword
    *,
    target: str,
    input_json: str | None,
    input_file: str | None,
    thread: str | None,
    quiet: bool,
    store: StoreChoice,
    out: Output,
) -> int:
    """Run TARGET on a thread, showing each superstep's vertices as they run.

    TARGET is a graph file (flow.yaml), package.module:graph or path/to/file.py:graph
    (a Graph, a CompiledGraph with a checkpointer, which then uses its own store,
    or a function returning one). Prints the final state, or the questions the run
    waits for and the `actorgraph answer` command that answers them.
    """
    given = _input(input_json, input_file)
    then = Next(thread or f"t-{uuid.uuid4().hex[:10]}", GraphChoice(target), store)
    with opened(target, store) as app:
        if thread is not None:
            _refuse_unfinished(app, then)
        if not out.json:
            stdout.print(f"thread {escape(then.thread)}", highlight=False)
        return _drive(app, given, then, out=out, quiet=quiet)


def _parse(value: str) -> Any:
    """VALUE as JSON if it parses (`42`, `true`, `{"ok": 1}`), else the text itself."""
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


def _answer_for(app: CompiledGraph[Any], then: Next, value: Any, chosen: str | None) -> Command:
    """The `Command(resume={id: value})` for the pending interrupt chosen (by --id, or the only one)."""
    snapshot = app.get_state(then.thread)
    pending = [p for p in snapshot.interrupts if p.kind == "interrupt"]
    if not pending:
        advice = f"; resume it: {then.command('resume')}" if snapshot.status != "done" else ""
        raise CommandError(f"thread {then.thread!r} waits for no answer (status {snapshot.status}){advice}")
    ids = ", ".join(f"{p.id} ({p.vertex})" for p in pending)
    if chosen is None and len(pending) > 1:
        raise CommandError(
            f"thread {then.thread!r} waits for {len(pending)} answers: choose one with --id: {ids}"
        )
    if chosen is not None and chosen not in {p.id for p in pending}:
        msg = f"thread {then.thread!r} has no pending interrupt {chosen!r}; pending: {ids}"
        raise CommandError(msg)
    return Command(resume={chosen or pending[0].id: value})


@command(
    "answer",
    examples=[
        "actorgraph answer notes-1 yes -g flow.yaml",
        """actorgraph answer notes-1 '{"approved": false, "feedback": "shorter"}' -g flow.yaml""",
        "actorgraph answer buy-1 no --id int-4e0c0861153a2b7f -g myapp.flows:approvals",
    ],
)
@click.argument("thread")
@click.argument("value")
@click.option("--id", "interrupt_id", metavar="INTERRUPT_ID", help="Which question (when several wait).")
@graph_option()
@_quiet
@store_options
@output_options
@guarded
def answer(  # noqa: PLR0913 - click passes every option as a keyword
    *,
    thread: str,
    value: str,
    interrupt_id: str | None,
    graph: GraphChoice,
    quiet: bool,
    store: StoreChoice,
    out: Output,
) -> int:
    """Answer a question THREAD waits for with VALUE, and let the run go on.

    VALUE is read as JSON if it parses (42, true, {"ok": 1}), else as text.
    """
    then = Next(thread, graph, store)
    with opened(graph.target, store) as app:
        reply = _answer_for(app, then, _parse(value), interrupt_id)
        return _drive(app, reply, then, out=out, quiet=quiet)


@command(
    "resume",
    examples=[
        "actorgraph resume notes-1 -g flow.yaml",
        "ACTORGRAPH_GRAPH=myapp.flows:report actorgraph resume t-3f2a9c1b7e",
    ],
)
@click.argument("thread")
@graph_option()
@_quiet
@store_options
@output_options
@guarded
def resume(*, thread: str, graph: GraphChoice, quiet: bool, store: StoreChoice, out: Output) -> int:
    """Continue THREAD: re-run what failed or was stopped, pass breakpoints.

    The tasks that finished are kept; only the others run again.
    """
    then = Next(thread, graph, store)
    with opened(graph.target, store) as app:
        app.get_state(thread)  # an unknown thread is a usage error, said plainly
        return _drive(app, None, then, out=out, quiet=quiet)
