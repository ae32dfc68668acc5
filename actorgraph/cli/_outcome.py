"""How a run ended (done, interrupted, failed, stopped): for a person, with the command to go on, or JSON."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from actorgraph import Interrupt, RunResult, Snapshot, VertexError
from actorgraph._api.text import PREVIEW_CHARS, dumps, interrupt_record, preview, question, size_text
from actorgraph.cli._codes import DONE, INTERRUPTED, STOPPED
from actorgraph.cli._console import print_json, stderr, stdout, styled
from actorgraph.cli._exits import report
from actorgraph.cli._options import GraphChoice, Output, StoreChoice, command_line

__all__ = ["Next", "cut_short", "print_pending", "print_value", "tell_done", "tell_failed", "tell_stopped"]


def cut_short(text: str, limit: int = PREVIEW_CHARS) -> str:
    """`text`, or its first `limit` characters and `...` (a question or an error in a line)."""
    shown = preview(text, limit)
    return f"{shown.text}..." if shown.cut else shown.text


@dataclass(frozen=True, slots=True)
class Next:
    """What a person types next for a thread: the commands to answer, resume or show it.

    Attributes:
        thread: the thread.
        graph: the graph to name with `-g` (None, or one recorded with the thread: no `-g`).
        store: the store, named again unless it is the default one.
    """

    thread: str
    graph: GraphChoice | None
    store: StoreChoice

    def command(self, name: str, *words: str) -> str:
        """`actorgraph NAME THREAD WORDS [-g TARGET] [--db PATH]`, quoted for a shell, ready to paste."""
        graph = self.graph.words() if self.graph is not None else []
        return command_line(name, self.thread, *words, *graph, *self.store.words())

    def answers(self, pending: Sequence[Interrupt]) -> list[str]:
        """One command per pending interrupt (`--id` when several wait); `resume` passes breakpoints."""
        if any(p.kind != "interrupt" for p in pending):
            return [self.command("resume")]
        if len(pending) == 1:
            return [self.command("answer", "VALUE")]
        return [self.command("answer", "VALUE", "--id", p.id) for p in pending]


def print_value(value: Any, then: Next, *, full: bool = False, margin: str = "") -> None:
    """A value as JSON: a state indented, a question's value (with a `margin`) on one line.

    Whole with `full`; else its first characters, then how large it is and the command
    that shows it all.
    """
    text = dumps(value, indent=None if margin else 2)
    shown = preview(text, len(text) if full else PREVIEW_CHARS)
    stdout.print("\n".join(f"{margin}{line}" for line in shown.text.splitlines()))
    if shown.cut:
        size = size_text(len(text.encode(errors="surrogatepass")))
        note = f"{margin}... cut: {shown.note[1:-1]}, {size}; all of it: {then.command('show', '--full')}"
        stdout.print(styled((note, "dim")))


def print_pending(pending: Sequence[Interrupt], then: Next, *, full: bool = False) -> None:
    """The questions waiting, with their ids, and the commands that answer them."""
    for p in pending:
        if p.kind == "interrupt":
            asked = question(p.value)
            stdout.print(f"  {p.id} ({p.vertex}): {asked if full else cut_short(asked)}")
            if not isinstance(p.value, str):
                print_value(p.value, then, full=full, margin="    ")
        else:
            stdout.print(f"  {p.id}: breakpoint {p.kind} {p.vertex!r}")
    stdout.print("answer with:" if pending[0].kind == "interrupt" else "go on with:")
    for line in then.answers(pending):
        stdout.print(f"  {line}")


def tell_done(result: RunResult[Any] | Snapshot[Any], then: Next, out: Output) -> int:
    """Print the final state, or the pending interrupts and how to answer them; the exit code."""
    waiting = result.status == "interrupted"
    if out.json:
        record = {
            "thread_id": then.thread,
            "status": result.status,
            "step": result.step,
            "state": result.state,
            "interrupts": [interrupt_record(p) for p in result.interrupts],
            "checkpoint_id": result.checkpoint_id,
            "commands": then.answers(result.interrupts) if waiting else [],
        }
        print_json(record)
    elif waiting:
        count = len(result.interrupts)
        thread = f"thread {then.thread}: "
        stdout.print(styled(thread, ("interrupted", "magenta"), f", waiting for {count} answer(s)"))
        print_pending(result.interrupts, then)
    else:
        after = f" after superstep {result.step}"
        stdout.print(styled(f"thread {then.thread}: ", (result.status, "green"), after))
        print_value(result.state, then)
    return INTERRUPTED if waiting else DONE


def tell_failed(exc: Exception, then: Next, out: Output) -> int:
    """Print why the run failed (one line) and how to resume it once fixed; the exit code."""
    code = report(exc, debug=out.debug)
    resume = then.command("resume")
    if out.json:
        error: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc)}
        if isinstance(exc, VertexError):
            error |= {"vertex": exc.vertex, "step": exc.step, "attempts": exc.attempts}
            error |= {"error_type": exc.error_type, "error_message": exc.error_message}
        print_json({"thread_id": then.thread, "status": "error", "error": error, "commands": [resume]})
    stderr.print(f"fix the cause, then resume the thread: {resume}")
    return code


def tell_stopped(then: Next, out: Output) -> int:
    """Print that Ctrl-C stopped the run and how to resume it; the exit code (130)."""
    resume = then.command("resume")
    if out.json:
        print_json({"thread_id": then.thread, "status": "stopped", "commands": [resume]})
    stderr.print(f"stopped: the run was cancelled; resume it with: {resume}")
    return STOPPED
