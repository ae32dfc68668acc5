"""An approval inbox: many runs wait for a person; any process lists them and answers.

Run the whole demo (it writes a SQLite file in a temporary directory):

    python examples/approval_inbox.py

Or one command at a time, each in a new process:

    python examples/approval_inbox.py submit expenses.db exp-1 250
    python examples/approval_inbox.py inbox expenses.db
    python examples/approval_inbox.py answer expenses.db exp-1 yes
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import actorgraph as ag
from actorgraph.checkpoint import SqliteCheckpointer

State = dict[str, Any]
LIMIT = 100  # expenses above this need a person


# --8<-- [start:graph]
def check(state: State) -> State:
    """Small expenses pass; larger ones wait for a person's answer."""
    if state["amount"] <= LIMIT:
        return {**state, "approved": True, "by": "policy"}
    answer = ag.interrupt({"question": f"Approve {state['amount']} for {state['what']}?"})
    return {**state, "approved": answer == "yes", "by": "person"}


def settle(state: State) -> State:
    return {**state, "status": "paid" if state["approved"] else "rejected"}


def expenses() -> ag.Graph[State]:
    graph: ag.Graph[State] = ag.Graph(name="expenses")
    graph.add_vertex("check", check)
    graph.add_vertex("settle", settle)
    graph.add_edge(ag.START, "check")
    graph.add_edge("check", "settle")
    graph.add_edge("settle", ag.END)
    return graph


@contextmanager
def opened(db: str) -> Iterator[ag.CompiledGraph[State]]:
    """The compiled graph on the SQLite file that every process shares."""
    store = SqliteCheckpointer(db)
    try:
        with expenses().compile(store) as app:
            yield app
    finally:
        store.close()


# --8<-- [end:graph]


# --8<-- [start:commands]
def submit(db: str, thread_id: str, amount: int, what: str = "travel") -> None:
    """Start a run: it finishes, or pauses until someone answers."""
    with opened(db) as app:
        result = app.invoke({"amount": amount, "what": what}, thread_id=thread_id)
    print(f"{thread_id}: {result.status}")


def inbox(db: str) -> None:
    """List every question waiting for an answer, across all threads."""
    with opened(db) as app:
        assert app.checkpointer is not None
        for thread in app.checkpointer.threads(status="interrupted"):
            for pending in app.get_state(thread.thread_id).interrupts:
                print(f"{thread.thread_id} {pending.id}: {pending.value['question']}")


def answer(db: str, thread_id: str, reply: str) -> None:
    """Answer a thread's pending question, by its id, and let the run go on."""
    with opened(db) as app:
        pending = app.get_state(thread_id).interrupts
        result = app.invoke(ag.Command(resume={pending[0].id: reply}), thread_id=thread_id)
    print(f"{thread_id}: {result.status}, {result.state['status']}")


# --8<-- [end:commands]


def another_process(*args: str) -> str:
    """Run one command of this file in a new interpreter, as a second person would."""
    done = subprocess.run(  # noqa: S603 - this very file, with our own arguments
        [sys.executable, __file__, *args], capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout


def demo(db: str) -> None:
    for thread_id, amount, what in (
        ("exp-1", 40, "lunch"),
        ("exp-2", 250, "a train"),
        ("exp-3", 900, "a laptop"),
    ):
        submit(db, thread_id, amount, what)
    listed = another_process("inbox", db)
    print(listed, end="")
    assert sorted(line.split()[0] for line in listed.splitlines()) == ["exp-2", "exp-3"]
    print(another_process("answer", db, "exp-3", "no"), end="")
    print(another_process("answer", db, "exp-2", "yes"), end="")
    with opened(db) as app:
        final = {t: app.get_state(t).state for t in ("exp-1", "exp-2", "exp-3")}
        assert app.checkpointer is not None
        assert app.checkpointer.threads(status="interrupted") == []
    assert final["exp-1"]["status"] == "paid"
    assert final["exp-1"]["by"] == "policy"
    assert final["exp-2"]["status"] == "paid"
    assert final["exp-2"]["by"] == "person"
    assert final["exp-3"]["status"] == "rejected"
    print("inbox empty; every expense settled")


def main(argv: list[str]) -> int:
    match argv:
        case ["submit", db, thread_id, amount]:
            submit(db, thread_id, int(amount))
        case ["inbox", db]:
            inbox(db)
        case ["answer", db, thread_id, reply]:
            answer(db, thread_id, reply)
        case []:
            with tempfile.TemporaryDirectory() as scratch:
                demo(str(Path(scratch) / "expenses.db"))
        case _:
            print(__doc__)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
