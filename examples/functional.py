"""A workflow written as a function: @entrypoint and @task, a person in the middle, and resume.

Run it: python examples/functional.py
"""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path

import actorgraph.worker
from actorgraph import Command, interrupt
from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.func import entrypoint, task

calls = {"outline": 0, "section": 0}


# --8<-- [start:tasks]
@task
def outline(topic: str) -> list[str]:
    """Plan the sections of an essay."""
    calls["outline"] += 1
    return [f"{topic}: why", f"{topic}: how", f"{topic}: what next"]


@task
def section(title: str) -> str:
    """Write one section."""
    calls["section"] += 1
    return f"{title} ... ({len(title)} words)"


# --8<-- [end:tasks]


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        checkpointer = SqliteCheckpointer(str(Path(scratch) / "essays.db"))

        # --8<-- [start:entrypoint]
        @entrypoint(checkpointer=checkpointer)
        def essay(topic: str, previous: str | None = None) -> str:
            titles = outline(topic).result()
            drafts = [section(t) for t in titles]  # three calls, in parallel
            text = "\n".join(d.result() for d in drafts)
            verdict = interrupt({"review": text})  # a person reads the draft
            return text if verdict == "ok" else f"{text}\n(revise: {verdict})"

        # --8<-- [end:entrypoint]

        # --8<-- [start:run]
        with essay:
            paused = essay.invoke("actors", thread_id="essay-1")
            print(f"{paused.status}: {len(paused.interrupts)} question, {calls}")
            done = essay.invoke(Command(resume="ok"), thread_id="essay-1")  # days later, any process
            print(f"{done.status}: {done.state.splitlines()[0]}")
            print(f"calls after the answer: {calls}")  # the tasks did not run again
            # --8<-- [end:run]

            # --8<-- [start:stream]
            for update in essay.stream("tests", thread_id="essay-2"):  # "updates", as LangGraph's
                print(list(update))  # each task call as it finishes, then the question
            for update in essay.stream(Command(resume="ok"), thread_id="essay-2"):
                print(list(update))  # the function's return value
            print(essay.get_state("essay-2").state.splitlines()[0])  # the thread's state: the value
            # --8<-- [end:stream]

            stop = threading.Event()  # a worker, here a thread; in production: actorgraph worker
            worker = threading.Thread(target=actorgraph.worker.run, args=(essay,), kwargs={"stop": stop})
            worker.start()
            # --8<-- [start:workers]
            handle = essay.submit("queues", thread_id="essay-3")  # queued: a worker runs it
            handle.wait(timeout=30)  # "done" once the worker stopped it: here, at the question
            answer = essay.submit(Command(resume="ok"), thread_id="essay-3")  # claimed here and now
            answer.wait(timeout=30)  # the worker runs the function on; finished calls return their records
            print(f"essay-3: {essay.get_state('essay-3').status}, {calls}")
            # --8<-- [end:workers]
            stop.set()
            worker.join()
        checkpointer.close()


if __name__ == "__main__":
    main()
