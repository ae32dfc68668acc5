"""Import time and memory, measured in fresh interpreters: `python -m benchmarks.startup`.

Each probe is a new interpreter that reads its own RSS, imports, reads it
again, then compiles and runs a one-vertex graph: the import's time and the
RSS it adds over bare Python, and the time from the import's start to the
first run's end (what a lazy import must not make dearer). Medians of 10
interpreters. On a shared machine the times move with its load; the
instructions that callgrind counts (`--instructions`, valgrind needed) do
not: the same programs, minus a bare interpreter's (`python -c pass`).

Every child may write bytecode (`PYTHONDONTWRITEBYTECODE` is dropped) and one
unmeasured run goes first, so modules load from their `.pyc` files, as from an
installed wheel: compiling the sources instead takes several times as long.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["instructions", "probe", "report"]

RUNS = 10

_PROBE = r"""
import json, time
def rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
before = rss()
t = time.perf_counter()
{imports}
imported = time.perf_counter()
after_import = rss()
{build}
ran = time.perf_counter()
print(json.dumps({{
    "import_ms": (imported - t) * 1000,
    "import_mib": after_import - before,
    "first_run_ms": (ran - t) * 1000,
    "run_mib": rss() - before,
}}))
"""

AG_IMPORT = "import actorgraph"

AG_BUILD = """
g = actorgraph.Graph()
g.add_vertex("a", lambda s: s)
g.add_edge(actorgraph.START, "a")
g.add_edge("a", actorgraph.END)
app = g.compile()
app.invoke({"x": 1})
app.close()
"""

LG_IMPORT = "from langgraph.graph import StateGraph, START, END"

LG_BUILD = """
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


def _child(*args: str) -> subprocess.CompletedProcess[str]:
    """A fresh interpreter run with `args`, allowed to write bytecode."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    return subprocess.run(args, check=True, capture_output=True, text=True, env=env, timeout=1800)


def probe(imports: str, build: str, runs: int = RUNS) -> dict[str, float]:
    """The medians, over `runs` fresh interpreters, of import time and RSS, and of the first run's end."""
    code = _PROBE.format(imports=imports, build=build)
    _child(sys.executable, "-c", code)  # writes the bytecode the measured runs load
    samples = [json.loads(_child(sys.executable, "-c", code).stdout) for _ in range(runs)]
    return {key: statistics.median(s[key] for s in samples) for key in samples[0]}


def _callgrind(code: str) -> int:
    """Instructions of a fresh interpreter running `code`, counted by callgrind (after a run uncounted)."""
    _child(sys.executable, "-c", code)
    with tempfile.TemporaryDirectory() as tmp:
        valgrind = [shutil.which("valgrind") or "valgrind", "--tool=callgrind"]
        out = f"--callgrind-out-file={Path(tmp) / 'callgrind.out'}"
        done = _child(*valgrind, out, sys.executable, "-c", code)
    found = re.search(r"Collected\s*:\s*(\d+)", done.stderr)
    if found is None:
        msg = f"callgrind printed no instruction count:\n{done.stderr[-2000:]}"
        raise RuntimeError(msg)
    return int(found.group(1))


def instructions() -> dict[str, int]:
    """Instructions over a bare interpreter's: `import actorgraph`, and import plus a first run."""
    bare = _callgrind("pass")
    return {
        "import": _callgrind(AG_IMPORT) - bare,
        "first_run": _callgrind(f"{AG_IMPORT}\n{AG_BUILD}") - bare,
    }


def report(have_langgraph: bool, *, count: bool = False) -> str:
    """A Markdown table of import time and memory, and of the time to a first run's end."""
    ours = probe(AG_IMPORT, AG_BUILD)
    theirs = probe(LG_IMPORT, LG_BUILD) if have_langgraph else None

    def cell(key: str, unit: str, digits: int) -> str:
        mine = f"{ours[key]:.{digits}f} {unit}"
        return f"{mine} | {f'{theirs[key]:.{digits}f} {unit}' if theirs else 'n/a'}"

    lines = [
        f"### Start-up (median of {RUNS} fresh interpreters)",
        "",
        "| measure | actorgraph | LangGraph |",
        "| --- | ---: | ---: |",
        f"| import time | {cell('import_ms', 'ms', 0)} |",
        f"| RSS over bare Python after the import | {cell('import_mib', 'MiB', 1)} |",
        f"| import, compile and run a 1-vertex graph | {cell('first_run_ms', 'ms', 0)} |",
        f"| RSS over bare Python after that run | {cell('run_mib', 'MiB', 1)} |",
    ]
    if count and shutil.which("valgrind"):
        counted = {key: f"{value / 1e6:,.0f} M" for key, value in instructions().items()}
        lines += [
            f"| import: instructions over bare Python | {counted['import']} | |",
            f"| import, compile and run: instructions over bare Python | {counted['first_run']} | |",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--instructions", action="store_true", help="also count instructions (valgrind)")
    parser.add_argument("--langgraph", action="store_true", help="measure LangGraph beside (bench extra)")
    args = parser.parse_args(argv)
    print(report(args.langgraph, count=args.instructions))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
