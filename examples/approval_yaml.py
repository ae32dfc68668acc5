"""The approval flow built from examples/approval.yaml, run from Python with the answers given in code.

Run it: python examples/approval_yaml.py
"""

from __future__ import annotations

from pathlib import Path

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer

HERE = Path(__file__).resolve().parent


def main() -> None:
    # --8<-- [start:load]
    graph = ag.load(HERE / "approval.yaml")  # a Graph, as if built in Python
    with graph.compile(MemoryCheckpointer()) as app:
        result = app.invoke({"topic": "release notes"}, thread_id="notes-1")
        result = app.invoke(
            ag.Command(resume={"approved": False, "feedback": "mention the fix"}), thread_id="notes-1"
        )
        result = app.invoke(ag.Command(resume={"approved": True}), thread_id="notes-1")
    print(result.status, result.state["draft"])
    # --8<-- [end:load]


if __name__ == "__main__":
    main()
