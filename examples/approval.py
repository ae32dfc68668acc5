"""Draft, check, ask a person, then publish or revise: a run that waits for an answer.

The flaky style check is retried by its policy; the review pauses the run with
`interrupt()` until a person answers, minutes or days later, maybe from another
process. Everything is checkpointed in SQLite (or PostgreSQL with --dsn).

Interactive, on the terminal:

    python examples/approval.py ask "release notes"

As separate commands (each one a new process):

    python examples/approval.py start "release notes" --thread notes-1
    python examples/approval.py inbox
    python examples/approval.py answer --thread notes-1 --revise "mention the fix"
    python examples/approval.py answer --thread notes-1 --approve
    python examples/approval.py status --thread notes-1
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import actorgraph as ag
from actorgraph.checkpoint import Checkpointer, PostgresCheckpointer, SqliteCheckpointer

State = dict[str, Any]


def write(state: State) -> State:
    """Write (or rewrite) the draft, taking the last feedback into account."""
    revision = state.get("revision", 0) + 1
    text = f"{state['topic'].capitalize()}: draft {revision}."
    if state.get("feedback"):
        text += f" Revised to {state['feedback'][-1]}."
    return {**state, "draft": text, "revision": revision}


def check(state: State, ctx: ag.Context[Any]) -> State:
    """A style checker that times out on its first try (the retry policy absorbs it)."""
    if ctx.attempt == 1:
        msg = "style checker timed out"
        raise ConnectionError(msg)
    return {**state, "checked": ctx.attempt}


def review(state: State) -> State:
    """Pause for a person: publish as is, or send back with feedback."""
    answer = ag.interrupt(
        {"question": "Publish this draft?", "draft": state["draft"], "answer": "yes, or what to change"}
    )
    if isinstance(answer, str):  # typed by a person (the web inbox's text field, the CLI)
        answer = answer_from(answer)
    if answer.get("approved"):
        return {**state, "approved": True}
    return {**state, "approved": False, "feedback": [*state.get("feedback", []), answer["feedback"]]}


def publish(state: State) -> State:
    """Mark the draft as published."""
    return {**state, "status": "published"}


def build() -> ag.Graph[State]:
    """Build the flow: write, check (retried), review (pauses), then publish or write again."""
    graph: ag.Graph[State] = ag.Graph(name="approval")
    graph.add_vertex("write", write)
    graph.add_vertex(
        "check", check, retry=ag.RetryPolicy(max_attempts=3, initial_interval=0.05, jitter=False)
    )
    graph.add_vertex("review", review)
    graph.add_vertex("publish", publish)
    graph.add_edge(ag.START, "write")
    graph.add_edge("write", "check")
    graph.add_edge("check", "review")
    graph.add_conditional_edges(
        "review", lambda s: "publish" if s["approved"] else "write", ["publish", "write"]
    )
    graph.add_edge("publish", ag.END)
    return graph


@contextmanager
def opened(args: argparse.Namespace) -> Iterator[ag.CompiledGraph[State]]:
    """The compiled graph on the chosen store, closed afterwards."""
    store: Checkpointer = PostgresCheckpointer(args.dsn) if args.dsn else SqliteCheckpointer(args.db)
    try:
        with build().compile(store) as app:
            yield app
    finally:
        store.close()


def show(result: ag.RunResult[State] | ag.Snapshot[State]) -> None:
    """Print where the run stands: the question waiting, or the final state."""
    if result.status == "interrupted":
        for pending in result.interrupts:
            print(f"waiting for an answer ({pending.id}): {pending.value['question']}")
            print(f"  draft: {pending.value['draft']}")
    else:
        print(f"status: {result.status}")
    print(json.dumps(result.state, sort_keys=True))


def answer_from(reply: str) -> dict[str, Any]:
    """`y` / `yes` approves; anything else is feedback for a revision."""
    if reply.strip().lower() in ("y", "yes"):
        return {"approved": True}
    return {"approved": False, "feedback": reply.strip()}


def ask(args: argparse.Namespace) -> None:
    """Run to the end, asking on the terminal whenever the run pauses."""
    with opened(args) as app:
        result = app.invoke({"topic": args.topic}, thread_id=args.thread)
        while result.status == "interrupted":
            show(result)
            reply = input("Publish? y = yes, anything else = feedback for a revision: ")
            result = app.invoke(ag.Command(resume=answer_from(reply)), thread_id=args.thread)
        show(result)


def start(args: argparse.Namespace) -> None:
    """Start a run; it stops at the first question."""
    with opened(args) as app:
        show(app.invoke({"topic": args.topic}, thread_id=args.thread))


def answer(args: argparse.Namespace) -> None:
    """Answer the pending question of a thread and run on."""
    reply = {"approved": True} if args.approve else {"approved": False, "feedback": args.revise}
    with opened(args) as app:
        show(app.invoke(ag.Command(resume=reply), thread_id=args.thread))


def status(args: argparse.Namespace) -> None:
    """Show a thread without running it."""
    with opened(args) as app:
        show(app.get_state(args.thread))


def inbox(args: argparse.Namespace) -> None:
    """List every thread waiting for an answer."""
    with opened(args) as app:
        assert app.checkpointer is not None
        for thread in app.checkpointer.threads(status="interrupted"):
            pending = app.get_state(thread.thread_id).interrupts
            print(f"{thread.thread_id}: {pending[0].value['draft'] if pending else '?'}")


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run the chosen command."""
    parser = argparse.ArgumentParser(description="An approval flow that waits for a person.")
    parser.add_argument("--db", default="approval.db", help="SQLite file (default: approval.db)")
    parser.add_argument("--dsn", default=None, help="a PostgreSQL DSN instead of SQLite")
    commands = parser.add_subparsers(dest="command", required=True)
    for name, fn in (("ask", ask), ("start", start)):
        sub = commands.add_parser(name, help=fn.__doc__)
        sub.add_argument("topic")
        sub.add_argument("--thread", default="approval-1")
        sub.set_defaults(run=fn)
    sub = commands.add_parser("answer", help=answer.__doc__)
    sub.add_argument("--thread", default="approval-1")
    choice = sub.add_mutually_exclusive_group(required=True)
    choice.add_argument("--approve", action="store_true")
    choice.add_argument("--revise", metavar="FEEDBACK")
    sub.set_defaults(run=answer)
    for name, fn in (("status", status), ("inbox", inbox)):
        sub = commands.add_parser(name, help=fn.__doc__)
        sub.add_argument("--thread", default="approval-1")
        sub.set_defaults(run=fn)
    args = parser.parse_args(argv)
    args.run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
