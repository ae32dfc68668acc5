"""A big value that does not change: bytes on disk, time and peak memory, beside LangGraph's SqliteSaver.

Each workload runs one thread whose state holds a big value that no vertex
changes, plus a counter that every superstep increments. actorgraph's vertex
returns the whole state (its idiom), LangGraph's node returns the counter (its
idiom); both save every superstep before the next starts (durability "sync").
Bytes on disk are the SQLite file with its WAL after the store is closed; time
is the median of the timed runs. Peak memory is measured on one more run in a
fresh interpreter, two ways: the growth of its peak resident set over what it
held before the run (Linux's VmHWM, reset just before; it sees native
allocations too), and tracemalloc's peak of Python allocations (a run under
tracemalloc is slower, so neither of these runs is timed).
"""

from __future__ import annotations

import gc
import itertools
import json
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import actorgraph as ag
from actorgraph.checkpoint.sqlite import SqliteCheckpointer

__all__ = ["CASES", "Case", "Measured", "measure", "report"]

MIB = 1 << 20
_ids = itertools.count()


@dataclass(frozen=True)
class Case:
    """One workload: a value of `mib` MiB kept unchanged for `steps` supersteps."""

    name: str
    steps: int
    make: Callable[[], Any]


def _text(mib: int) -> Callable[[], Any]:
    return lambda: "x" * (mib * MIB)


def _records(mib: int) -> Callable[[], Any]:
    # about 100 bytes each when serialized
    return lambda: [{"id": i, "text": f"record {i:08d} " + "r" * 75} for i in range(mib * MIB // 100)]


CASES = (
    Case("5 MiB text x 20 supersteps", 20, _text(5)),
    Case("5 MiB of records (52,428 dicts) x 20 supersteps", 20, _records(5)),
    Case("50 MiB text x 5 supersteps", 5, _text(50)),
)


@dataclass(frozen=True)
class Measured:
    """What one library took for one case."""

    disk: int
    seconds: float
    spread: tuple[float, float]
    rss: int
    traced: int


def _ours(folder: Path, steps: int) -> tuple[Callable[[Any], object], Callable[[], int]]:
    path = folder / f"ag{next(_ids)}.db"
    store = SqliteCheckpointer(path)
    g: ag.Graph = ag.Graph()
    g.add_vertex("inc", lambda s: {**s, "n": s["n"] + 1})
    g.add_edge(ag.START, "inc")
    g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < steps else ag.END)
    app = g.compile(store)

    def run(big: Any) -> object:
        return app.invoke({"n": 0, "big": big}, thread_id="t", durability="sync")

    def close() -> int:
        app.close()
        store.close()
        return _disk(path)

    return run, close


class _State(TypedDict):
    n: int
    big: Any


def _theirs(folder: Path, steps: int) -> tuple[Callable[[Any], object], Callable[[], int]]:
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph

    path = folder / f"lg{next(_ids)}.db"
    conn = sqlite3.connect(path, check_same_thread=False)
    g = StateGraph(_State)
    g.add_node("inc", lambda s: {"n": s["n"] + 1})
    g.add_edge(START, "inc")
    g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < steps else END)
    app = g.compile(checkpointer=SqliteSaver(conn))

    def run(big: Any) -> object:
        config = {"configurable": {"thread_id": "t"}, "recursion_limit": steps + 10}
        return app.invoke({"n": 0, "big": big}, config, durability="sync")

    def close() -> int:
        conn.close()
        return _disk(path)

    return run, close


def _disk(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(f"{path.name}*"))


def measure(library: str, case: Case, repeat: int, folder: Path) -> Measured:
    """Time `repeat` runs (each on a new file), then take the peaks in a fresh interpreter."""
    build = _ours if library == "actorgraph" else _theirs
    big = case.make()
    times, disks = [], []
    for _ in range(repeat):
        run, close = build(folder, case.steps)
        gc.collect()
        start = time.perf_counter()
        run(big)
        times.append(time.perf_counter() - start)
        disks.append(close())
    del big
    command = [sys.executable, "-m", "benchmarks.big_state", library, str(CASES.index(case)), str(folder)]
    peaks = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
    return Measured(max(disks), statistics.median(times), (min(times), max(times)), *peaks)


def _status(field: str) -> int:
    """A size from /proc/self/status, in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    return 0


def _peaks(library: str, case: Case, folder: Path) -> tuple[int, int]:
    """Peak resident growth and peak traced bytes of one run (in this fresh interpreter)."""
    build = _ours if library == "actorgraph" else _theirs
    big = case.make()
    run, close = build(folder, case.steps)
    gc.collect()
    Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current resident set
    before = _status("VmRSS")
    run(big)
    rss = _status("VmHWM") - before
    close()
    run, close = build(folder, case.steps)
    gc.collect()
    tracemalloc.start()
    try:
        run(big)
        traced = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        close()
    return rss, traced


def report(repeat: int, have_langgraph: bool, workdir: Path | None = None) -> str:
    """A Markdown table of every case, actorgraph beside LangGraph's SqliteSaver."""
    folder = workdir or Path(tempfile.mkdtemp(prefix="ag-big-"))
    lines = [
        f"### A big unchanged value, SQLite (median of {repeat} runs; range in brackets)",
        "",
        "| workload | library | on disk | time | peak RSS growth | peak traced |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    libraries = ["actorgraph", "LangGraph"] if have_langgraph else ["actorgraph"]
    for case in CASES:
        found = {library: measure(library, case, repeat, folder) for library in libraries}
        for library, m in found.items():
            low, high = m.spread
            lines.append(
                f"| {case.name} | {library} | {m.disk / MIB:,.1f} MiB | {m.seconds:.2f} s "
                f"[{low:.2f}-{high:.2f}] | {m.rss / MIB:,.0f} MiB | {m.traced / MIB:,.0f} MiB |"
            )
        if have_langgraph:
            ours, theirs = found["actorgraph"], found["LangGraph"]
            lines.append(
                f"| | ratio | {ours.disk / theirs.disk:.2f}x | {ours.seconds / theirs.seconds:.2f}x | "
                f"{ours.rss / theirs.rss:.2f}x | {ours.traced / theirs.traced:.2f}x |"
            )
    return "\n".join(lines)


if __name__ == "__main__":  # one peak measurement: LIBRARY CASE_INDEX FOLDER
    print(json.dumps(_peaks(sys.argv[1], CASES[int(sys.argv[2])], Path(sys.argv[3]))))
