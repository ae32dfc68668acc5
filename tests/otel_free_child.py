"""A child interpreter that runs graphs and prints which OpenTelemetry modules were imported.

`blocked`: OpenTelemetry cannot be imported at all (as if opentelemetry-api were
not installed). `unused`: it is installed, but this program never imports it.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

if sys.argv[1] == "blocked":
    sys.modules["opentelemetry"] = None  # type: ignore[assignment] # any import of it now fails

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer


def bump(state: dict[str, Any]) -> dict[str, Any]:
    return {**state, "n": state["n"] + 1}


async def abump(state: dict[str, Any]) -> dict[str, Any]:
    await asyncio.sleep(0)
    return bump(state)


def ask(state: dict[str, Any]) -> dict[str, Any]:
    return {**state, "answer": ag.interrupt("ok?")}


def main() -> None:
    inner = ag.Graph()
    inner.add_vertex("fetch", bump).add_edge(ag.START, "fetch").add_edge("fetch", ag.END)
    graph = ag.Graph()
    graph.add_vertex("research", inner).add_vertex("think", abump).add_vertex("ask", ask)
    graph.add_edge(ag.START, "research").add_edge("research", "think").add_edge("think", "ask")
    graph.add_edge("ask", ag.END)
    with graph.compile(checkpointer=MemoryCheckpointer()) as app:
        assert app.invoke({"n": 0}, thread_id="t").status == "interrupted"
        done = app.invoke(ag.Command(resume="yes"), thread_id="t")
    assert done.state == {"n": 2, "answer": "yes"}, done.state
    imported = sorted(n for n, m in sys.modules.items() if n.startswith("opentelemetry") and m is not None)
    print(json.dumps(imported))  # noqa: T201 - the report line


if __name__ == "__main__":
    main()
