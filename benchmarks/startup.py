"""Import time and memory: measured in fresh interpreters."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

__all__ = ["report"]

_PROBE = r"""
import json, time, resource, sys
def rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
before = rss()
t = time.perf_counter()
{imports}
elapsed = time.perf_counter() - t
{build}
print(json.dumps({{"import_ms": elapsed * 1000, "rss_mib": rss() - before}}))
"""

_AG_BUILD = """
g = actorgraph.Graph()
g.add_vertex("a", lambda s: s)
g.add_edge(actorgraph.START, "a")
g.add_edge("a", actorgraph.END)
app = g.compile()
app.invoke({"x": 1})
app.close()
"""

_LG_BUILD = """
from typing import TypedDict
class S(TypedDict):
    x: int
g = StateGraph(S)
g.add_node("a", lambda s: s)
g.add_edge(START, "a")
g.add_edge("a", END)
app = g.compile()
app.invoke({"x": 1})
"""


def _probe(imports: str, build: str, runs: int = 5) -> tuple[float, float]:
    code = _PROBE.format(imports=imports, build=build)
    samples = [
        json.loads(
            subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
        )
        for _ in range(runs)
    ]
    return (
        statistics.median(s["import_ms"] for s in samples),
        statistics.median(s["rss_mib"] for s in samples),
    )


def report(have_langgraph: bool) -> str:
    """A Markdown table of import time and memory after compiling and running a small graph."""
    ours = _probe("import actorgraph", _AG_BUILD)
    theirs = (
        _probe("from langgraph.graph import StateGraph, START, END", _LG_BUILD) if have_langgraph else None
    )
    lines = [
        "### Start-up (median of 5 fresh interpreters)",
        "",
        "| measure | actorgraph | LangGraph |",
        "| --- | ---: | ---: |",
        f"| import time | {ours[0]:.0f} ms | {f'{theirs[0]:.0f} ms' if theirs else 'n/a'} |",
        (
            "| RSS over bare Python after compiling and running a 1-vertex graph | "
            f"{ours[1]:.1f} MiB | {f'{theirs[1]:.1f} MiB' if theirs else 'n/a'} |"
        ),
    ]
    return "\n".join(lines)
