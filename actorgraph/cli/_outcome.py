"""How a run ended (done, interrupted, failed, stopped): for a person, with the command to go on, or JSON."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.markup import escape

from actorgraph import Interrupt, RunResult, Snapshot, VertexError
from actorgraph._text import dumps, interrupt_record, question
from actorgraph.cli._console import print_json, stderr, stdout
from actorgraph.cli._exits import DONE, INTERRUPTED, STOPPED, report
from actorgraph.cli._options import GraphChoice, Output, StoreChoice, command_line

__all__ = ["Next", "print_pending", "tell_done", "tell_failed", "tell_stopped"]


@dataclass(frozen=True, slots=True)
class Next:
    """What a person types next for a thread: the commands to answer or resume it."""

    thread: str
    graph: GraphChoice
    store: StoreChoice

    def command(self, name: str, *words: str) -> str:
        """`actorgraph NAME THREAD WORDS -g TARGET [--db PATH]`, ready to paste."""
        return command_line(name, self.thread, *words, *self.graph.words(), *self.store.words())

    def answers(self, pending: Sequence[Interrupt]) -> list[str]:
        """One command per pending interrupt (`--id` when several wait); `resume` passes breakpoints."""
        if any(p.kind != "interrupt" for p in pending):
            return [self.command("resume")]
        if len(pending) == 1:
            return [self.command("answer", "VALUE")]
        return [self.command("answer", "VALUE", "--id", p.id) for p in pending]


def print_pending(pending: Sequence[Interrupt], then: Next) -> None:
    """The questions waiting, with their ids, and the commands that answer them."""
    for p in pending:
        if p.kind == "interrupt":
            stdout.print(f"  {escape(p.id)} ({escape(p.vertex)}): {escape(question(p.value))}")
            if not isinstance(p.value, str):
                stdout.print(f"    {escape(dumps(p.value))}", highlight=False)
        else:
            stdout.print(f"  {escape(p.id)}: breakpoint {p.kind} {escape(p.vertex)!r}")
    stdout.print("answer with:" if pending[0].kind == "interrupt" else "go on with:")
    for line in then.answers(pending):
        stdout.print(f"  {escape(line)}", highlight=False)


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
        stdout.print(f"thread {escape(then.thread)}: [magenta]interrupted[/], waiting for {count} answer(s)")
        print_pending(result.interrupts, then)
    else:
        stdout.print(f"thread {escape(then.thread)}: [green]{result.status}[/] after superstep {result.step}")
        stdout.print_json(dumps(result.state))
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
    stderr.print(f"fix the cause, then resume the thread: {escape(resume)}", highlight=False)
    return code


def tell_stopped(then: Next, out: Output) -> int:
    """Print that Ctrl-C stopped the run and how to resume it; the exit code (130)."""
    resume = then.command("resume")
    if out.json:
        print_json({"thread_id": then.thread, "status": "stopped", "commands": [resume]})
    stderr.print(f"stopped: the run was cancelled; resume it with: {escape(resume)}", highlight=False)
    return STOPPED
