"""`run`, `answer` and `resume`: start or continue a run on a thread, with the live view."""

from __future__ import annotations

import sys
import uuid
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import click

from actorgraph import ActorGraphError, AlreadyAnsweredError, Command, CompiledGraph
from actorgraph.cli._answering import question_to_answer
from actorgraph.cli._console import safe, stderr, stdout
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
from actorgraph.cli._thread import checked_thread, graph_for, is_stored, opened_graph, record_graph
from actorgraph.cli._typed import parse_json, parse_value
from actorgraph.cli._view import view_on
from actorgraph.cli._worker import queued_answer

__all__ = ["answer", "resume", "run"]

_quiet = click.option("-q", "--quiet", is_flag=True, help="No live view; only the outcome.")
_LONGEST_NAME = 200  # characters of --as, as the store keeps it


def _drive(  # noqa: PLR0913 - the run's parts, then how to show it, by keyword
    app: CompiledGraph[Any],
    given: Any,
    then: Next,
    *,
    out: Output,
    quiet: bool,
    answered_by: str | None = None,
) -> int:
    """Run (or continue) the thread with the view, then tell how it ended; the exit code.

    A late answer (`AlreadyAnsweredError`) is not a failure of the run: it goes to `guarded`
    (one line, exit 4), without advice to resume.
    """
    view = view_on(stderr if out.json else stdout)
    listeners = [] if quiet else [view]
    try:
        with nullcontext() if quiet else view.shown():
            result = app.invoke(given, thread_id=then.thread, listeners=listeners, answered_by=answered_by)
    except KeyboardInterrupt:  # invoke has cancelled the run: the thread stays resumable
        close_quickly(app)
        return tell_stopped(then, out)
    except AlreadyAnsweredError:
        raise
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
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"cannot read {where}: {getattr(exc, 'strerror', None) or exc}") from exc
    if text is None:
        return {}
    return parse_json(text, where)


def _refuse_unfinished(app: CompiledGraph[Any], then: Next) -> None:
    """A new input on a thread that waits for an answer, or failed, would be refused: say what to do."""
    assert app.checkpointer is not None  # noqa: S101 - opened() gives only graphs with a store
    if not is_stored(app.checkpointer, then.thread):
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
    an @entrypoint, or a function returning one). Prints the final state (an
    entrypoint's return value), or the questions the run waits for and the
    `actorgraph answer` command that answers them. TARGET is recorded with the
    thread: answer and resume find it there.
    """
    given = _input(input_json, input_file)
    named = checked_thread(thread, "--thread") if thread is not None else f"t-{uuid.uuid4().hex[:10]}"
    then = Next(named, GraphChoice(target), store)
    with opened(target, store) as app:
        if thread is not None:
            _refuse_unfinished(app, then)
        record_graph(app, then.thread, target)
        if not out.json:
            stdout.print(f"thread {then.thread}")
        return _drive(app, given, then, out=out, quiet=quiet)


def _answerer(name: str | None) -> str | None:
    """`--as NAME`, checked: a short name on one line (the store keeps it; others are shown it)."""
    if name is None:
        return None
    if not name.strip() or len(name) > _LONGEST_NAME or safe(name, lines=False) != name:
        shown = safe(name[:60], lines=False)
        msg = f"--as {shown!r}: give a name of 1 to {_LONGEST_NAME} printable characters, on one line"
        raise CommandError(msg)
    return name


@command(
    "answer",
    examples=[
        "actorgraph answer notes-1 yes",
        """actorgraph answer notes-1 '{"approved": false, "feedback": "shorter"}' --as ann""",
        "actorgraph answer buy-1 no --id int-4e0c0861153a2b7f -g myapp.flows:approvals",
    ],
)
@click.argument("thread")
@click.argument("value")
@click.option("--id", "interrupt_id", metavar="INTERRUPT_ID", help="Which question (when several wait).")
@click.option(
    "--as",
    "answered_by",
    metavar="NAME",
    help="Who answers (default: user@host (pid N)); shown to anyone who answers later.",
)
@click.option("--wait", is_flag=True, help="While workers run: wait for the queued run to stop again.")
@graph_option(required=False)
@_quiet
@store_options
@output_options
@guarded
def answer(  # noqa: PLR0913 - click passes every option as a keyword
    *,
    thread: str,
    value: str,
    interrupt_id: str | None,
    answered_by: str | None,
    wait: bool,
    graph: GraphChoice | None,
    quiet: bool,
    store: StoreChoice,
    out: Output,
) -> int:
    """Answer a question THREAD waits for with VALUE, and let the run go on.

    VALUE is read as JSON if it parses (42, true, {"ok": 1}), else as text. The
    answer is taken for its question before anything runs with it: if someone
    else's answer was taken first, nothing runs and the exit code is 4. While
    workers run (`actorgraph worker`), the answer is taken here and the run is
    queued for them (exit 0; --wait waits for it to stop again).
    """
    thread, reply, by = checked_thread(thread), parse_value(value), _answerer(answered_by)
    chosen = graph_for(thread, graph, store)
    then = Next(thread, chosen, store)
    with opened_graph(chosen, store, thread) as app:
        assert app.checkpointer is not None  # noqa: S101 - opened() gives only graphs with a store
        question = question_to_answer(app.checkpointer, then, interrupt_id)
        if not chosen.recorded:
            record_graph(app, thread, chosen.target)
        queued = queued_answer(app, then, {question: reply}, answered_by=by, wait=wait, out=out)
        if queued is not None:
            return queued
        return _drive(app, Command(resume={question: reply}), then, out=out, quiet=quiet, answered_by=by)


@command(
    "resume",
    examples=[
        "actorgraph resume notes-1",
        "actorgraph resume notes-1 -g flow.yaml            # another graph than the one recorded",
        "ACTORGRAPH_GRAPH=myapp.flows:report actorgraph resume t-3f2a9c1b7e",
    ],
)
@click.argument("thread")
@graph_option(required=False)
@_quiet
@store_options
@output_options
@guarded
def resume(*, thread: str, graph: GraphChoice | None, quiet: bool, store: StoreChoice, out: Output) -> int:
    """Continue THREAD: re-run what failed or was stopped, pass breakpoints.

    The tasks that finished are kept; only the others run again.
    """
    thread = checked_thread(thread)
    chosen = graph_for(thread, graph, store)
    then = Next(thread, chosen, store)
    with opened_graph(chosen, store, thread) as app:
        app.get_state(thread)  # an unknown thread is a usage error, said plainly
        if not chosen.recorded:
            record_graph(app, thread, chosen.target)
        return _drive(app, None, then, out=out, quiet=quiet)
