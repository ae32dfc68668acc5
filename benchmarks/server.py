"""`actorgraph server` beside LangGraph's reference server, over HTTP: `python -m benchmarks.server`.

The same small graph (two steps on a counter: `benchmarks/server_graph.py`, and
`server_graph_langgraph.py` in LangGraph) is served by `actorgraph server`
(SQLite in a temporary folder) and by `langgraph dev` from `langgraph-cli[inmem]`
(its in-memory runtime), each a child process on a free loopback port, both
running at once. One client process (this one) drives them with
`langgraph-sdk`'s async client, in `--repeat` rounds; in each round every
measure is taken of one server, then of the other, so that both see the same
load on a shared machine:

- **wait/s, 1 client**: `runs.wait` on one thread, one after another, for
  `--seconds`; runs per second over all rounds.
- **wait/s, 20 clients**: the same from 20 clients at once, each on its thread;
  and the server's CPU time (user and system, from /proc) per run meanwhile,
  which the machine's load moves far less than wall time.
- **first `values`**: a streamed run (`stream_mode="values"`) on a thread, one
  after another, `--samples` in all: from sending the request to receiving the
  first `values` event; median and p99.
- **streams at once**: `--streams` runs streamed at once, each on its own
  thread (made beforehand), from the first request to the end of the last
  stream; median (range) of the rounds. Every stream's values are checked.
- **RSS**: the server's resident memory (its process tree, from /proc) once it
  answers, and after everything above.

The reference is a benchmark-only install in a separate environment
(`--reference-venv`, default /work/wt/refserver-venv: `pip install
"langgraph-cli[inmem]"` there), never a dependency of actorgraph, and not run in
CI. Its in-memory runtime hands every run (waited and streamed ones too) to its
background queue, which it looks at every half second when idle: that, not
the graph, is most of its time per run. It runs `--reference-jobs` runs at
once (`--n-jobs-per-worker`; its own default is one). LangGraph's licensed
production server (PostgreSQL and Redis) is not measured here.

Needs actorgraph's `bench`, `server` and `cli` extras (`pip install -e
".[bench,server,cli]"`: langgraph-sdk comes with LangGraph).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
GRAPH = "bench"
START_WAIT = 120.0


@dataclass
class Figures:
    """What was measured of one server (each list gains one item per round)."""

    name: str
    pid: int
    url: str
    client: Any = None
    waits_1: list[tuple[int, float]] = field(default_factory=list)  # (runs, seconds)
    waits_20: list[tuple[int, float, float]] = field(default_factory=list)  # (runs, seconds, server CPU)
    first: list[float] = field(default_factory=list)
    streams: list[float] = field(default_factory=list)
    at_once: int = 0
    rss_idle: int = 0
    rss_after: int = 0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tree_rss(pid: int) -> int:
    """The resident memory of `pid` and its descendants, in bytes."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        todo.extend(children.get(current, []))
        try:
            status = Path(f"/proc/{current}/status").read_text()
        except OSError:
            continue
        rss = [line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")]
        total += int(rss[0]) * 1024 if rss else 0
    return total


def _actorgraph_command(folder: Path, port: int) -> list[str]:
    command = [sys.executable, "-m", "actorgraph.cli", "server", "--port", str(port)]
    return [*command, "--db", str(folder / "bench.db"), "-g", f"{GRAPH}={HERE / 'server_graph.py'}:graph"]


def _reference_command(folder: Path, port: int, venv: Path, jobs: int) -> list[str]:
    config = {"dependencies": ["."], "graphs": {GRAPH: f"{HERE / 'server_graph_langgraph.py'}:graph"}}
    (folder / "langgraph.json").write_text(json.dumps(config))
    command = [str(venv / "bin" / "langgraph"), "dev", "--config", "langgraph.json", "--host", "127.0.0.1"]
    return [*command, "--port", str(port), "--no-browser", "--no-reload", "--n-jobs-per-worker", str(jobs)]


@contextmanager
def _serving(command: list[str], folder: Path, port: int) -> Iterator[subprocess.Popen[bytes]]:
    """`command` running in `folder` until it answers GET /ok on `port`; stopped when the block ends."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACTORGRAPH_")}
    env |= {"LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGSMITH_TRACING": "false"}
    with (folder / "server.log").open("wb") as log:
        process = subprocess.Popen(command, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + START_WAIT
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/ok", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                tail = (folder / "server.log").read_text(errors="replace")[-3000:]
                msg = f"{command[0]} did not answer on port {port}:\n{tail}"
                raise RuntimeError(msg)
            time.sleep(0.1)
        yield process
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(30)


def _check(result: Any, n: int) -> None:
    expected = {"n": (n + 1) * 2, "by": "double"}
    if result != expected:
        msg = f"expected {expected}, got {result!r}"
        raise RuntimeError(msg)


async def _waits(client: Any, seconds: float, clients: int) -> tuple[int, float]:
    """`runs.wait` from `clients` clients at once, each on its thread, for `seconds`: (runs, seconds)."""
    threads = [(await client.threads.create())["thread_id"] for _ in range(clients)]

    async def loop(thread_id: str, deadline: float) -> int:
        done = 0
        while time.monotonic() < deadline:
            _check(await client.runs.wait(thread_id, GRAPH, input={"n": done}), done)
            done += 1
        return done

    began = time.monotonic()
    counts = await asyncio.gather(*(loop(t, began + seconds) for t in threads))
    return sum(counts), time.monotonic() - began


async def _streamed(client: Any, thread_id: str, n: int) -> float:
    """Stream one run; seconds from the request to its first `values` event (the values checked)."""
    began, first, last = time.monotonic(), None, None
    async for part in client.runs.stream(thread_id, GRAPH, input={"n": n}, stream_mode="values"):
        if part.event == "values":
            first = time.monotonic() - began if first is None else first
            last = part.data
        elif part.event == "error":
            msg = f"the run failed: {part.data}"
            raise RuntimeError(msg)
    _check(last, n)
    if first is None:
        msg = "the stream had no values event"
        raise RuntimeError(msg)
    return first


async def _firsts(client: Any, samples: int) -> list[float]:
    thread_id = (await client.threads.create())["thread_id"]
    return [await _streamed(client, thread_id, i) for i in range(samples)]


async def _many(client: Any, streams: int) -> float:
    """Seconds for `streams` runs streamed at once, each on a thread of its own."""
    threads = [(await client.threads.create())["thread_id"] for _ in range(streams)]
    began = time.monotonic()
    await asyncio.gather(*(_streamed(client, t, i) for i, t in enumerate(threads)))
    return time.monotonic() - began


def _cpu(pid: int) -> float:
    """The CPU seconds (user and system) `pid` has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _round(servers: list[Figures], args: argparse.Namespace) -> None:
    """One round of every measure, each server in turn (so that both see the same load on the machine)."""
    for one in servers:
        one.waits_1.append(await _waits(one.client, args.seconds, 1))
    for one in servers:
        before = _cpu(one.pid)
        runs, seconds = await _waits(one.client, args.seconds, 20)
        one.waits_20.append((runs, seconds, _cpu(one.pid) - before))
    for one in servers:
        one.first += await _firsts(one.client, args.samples // args.repeat)
    for one in servers:
        one.streams.append(await _many(one.client, args.streams))
        one.at_once = args.streams


async def _measure(servers: list[Figures], args: argparse.Namespace) -> None:
    from langgraph_sdk import get_client

    for one in servers:
        one.client = get_client(url=one.url, timeout=600)
        one.rss_idle = _tree_rss(one.pid)
        await _waits(one.client, 2.0, 1)  # warm-up: imports, first connections, caches
    for index in range(args.repeat):
        print(f"round {index + 1} of {args.repeat} ...", file=sys.stderr, flush=True)
        await _round(servers, args)
    for one in servers:
        one.rss_after = _tree_rss(one.pid)


def measure(names: list[str], args: argparse.Namespace) -> list[Figures]:
    """Start the servers, measure them in alternation, stop them."""
    with contextlib.ExitStack() as stack:
        servers = []
        for name in names:
            folder, port = Path(stack.enter_context(tempfile.TemporaryDirectory())), _free_port()
            if name == "actorgraph":
                command = _actorgraph_command(folder, port)
            else:
                command = _reference_command(folder, port, Path(args.reference_venv), args.reference_jobs)
            process = stack.enter_context(_serving(command, folder, port))
            servers.append(Figures(name, process.pid, f"http://127.0.0.1:{port}"))
        asyncio.run(_measure(servers, args))
    return servers


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


def _rows(figures: Figures) -> list[tuple[str, float, str]]:
    """(measure, value for ratios, shown) of one server; a ratio is 'times better' for every row."""
    mib, first, p99 = 2**20, statistics.median(figures.first), _p99(figures.first)
    together = statistics.median(figures.streams)
    wait_1 = sum(r for r, _ in figures.waits_1) / sum(t for _, t in figures.waits_1)
    wait_20 = sum(r for r, _, _ in figures.waits_20) / sum(t for _, t, _ in figures.waits_20)
    cpu = sum(c for _, _, c in figures.waits_20) / sum(r for r, _, _ in figures.waits_20)
    return [
        ("`runs.wait` per second, 1 client", wait_1, f"{wait_1:,.1f}/s"),
        ("`runs.wait` per second, 20 clients", wait_20, f"{wait_20:,.1f}/s"),
        ("server CPU per `runs.wait` (20 clients)", 1 / cpu, _ms(cpu)),
        ("request to first `values` event, median", 1 / first, _ms(first)),
        ("request to first `values` event, p99", 1 / p99, _ms(p99)),
        (f"{figures.at_once} streams at once, all done", 1 / together, _streams(figures.streams)),
        ("server RSS once started", mib / figures.rss_idle, f"{figures.rss_idle / mib:.0f} MiB"),
        ("server RSS after the runs", mib / figures.rss_after, f"{figures.rss_after / mib:.0f} MiB"),
    ]


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms"


def _streams(times: list[float]) -> str:
    return f"{statistics.median(times):.2f} s ({min(times):.2f}-{max(times):.2f})"


def table(servers: list[Figures]) -> str:
    """The Markdown table: each measure for both servers, and how many times better actorgraph is."""
    ours = next((one for one in servers if one.name == "actorgraph"), None)
    theirs = next((one for one in servers if one.name == "reference"), None)
    lines = [
        "| measure | actorgraph server | langgraph dev | actorgraph better by |",
        "| --- | ---: | ---: | ---: |",
    ]
    mine = _rows(ours) if ours is not None else None
    reference = _rows(theirs) if theirs is not None else None
    for index, (label, _, _) in enumerate(mine or reference or []):
        left = mine[index] if mine is not None else None
        right = reference[index] if reference is not None else None
        ratio = f"{left[1] / right[1]:.1f}x" if left is not None and right is not None else ""
        shown = [row[2] if row is not None else "not run" for row in (left, right)]
        lines.append(f"| {label} | {shown[0]} | {shown[1]} | {ratio} |")
    return "\n".join(lines)


def main() -> None:
    """Measure both servers, in alternation, and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each runs.wait figure")
    parser.add_argument("--samples", type=int, default=100, help="streams timed to their first values event")
    parser.add_argument("--streams", type=int, default=100, help="runs streamed at once")
    parser.add_argument("--repeat", type=int, default=3, help="rounds (each server in turn in each)")
    parser.add_argument("--reference-venv", default="/work/wt/refserver-venv", help="where langgraph-cli is")
    parser.add_argument("--reference-jobs", type=int, default=100, help="runs the reference runs at once")
    parser.add_argument("--only", choices=["actorgraph", "reference"], help="measure one server only")
    args = parser.parse_args()
    names = [name for name in ("actorgraph", "reference") if args.only in (None, name)]
    print(table(measure(names, args)))


if __name__ == "__main__":
    main()
