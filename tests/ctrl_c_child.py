"""Ctrl-C in a real process: `ctrl_c_child.py DB [sync|start|stream]`.

A loop vertex sends SIGINT to its own process at tick 20, as a user pressing
Ctrl-C would, while the main thread waits in `invoke` (or `start(...).result()`,
or a `stream` loop). The script prints one JSON line: the ticks when the
KeyboardInterrupt arrived, the ticks after the cancelled run had time to go on
if it were still going, and the state of the same thread resumed at once in
this process.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from typing import Any

import actorgraph as ag
from actorgraph.checkpoint import SqliteCheckpointer

ticks: list[int] = []
release = threading.Event()


def tick(state: dict[str, Any]) -> dict[str, Any]:
    ticks.append(state["n"])
    if len(ticks) == 20 and not release.is_set():
        os.kill(os.getpid(), signal.SIGINT)
        release.wait(5)  # the tick in flight at the interrupt finishes only after the caller gave up
    return {"n": state["n"] + 1}


def main() -> None:
    # a terminal's Ctrl-C: the default handler, even when the tests run in a background job (whose
    # shell ignores SIGINT, which this process would inherit)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    path, how = sys.argv[1], sys.argv[2]
    g: ag.Graph = ag.Graph()
    g.add_vertex("tick", tick)
    g.add_edge(ag.START, "tick")
    g.add_conditional_edges("tick", lambda s: "tick" if s["n"] < 100 else ag.END, ["tick", ag.END])
    with SqliteCheckpointer(path) as store, g.compile(store) as app:
        try:
            if how == "start":
                app.start({"n": 0}, thread_id="t").result()
            elif how == "stream":
                for _ in app.stream({"n": 0}, thread_id="t"):
                    pass
            else:
                app.invoke({"n": 0}, thread_id="t")
        except KeyboardInterrupt:
            at_interrupt = len(ticks)
        else:
            sys.exit("the run finished: the KeyboardInterrupt never reached the caller")
        release.set()
        time.sleep(0.5)  # a run still going would tick about 50 times meanwhile
        later = len(ticks)
        resumed = app.invoke(None, thread_id="t")
        report = {"at": at_interrupt, "later": later, "state": resumed.state, "status": resumed.status}
        sys.stdout.write(json.dumps(report) + "\n")


if __name__ == "__main__":
    main()
