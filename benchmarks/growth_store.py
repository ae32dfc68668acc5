"""How the stores grow: `python -m benchmarks.growth_store [--quick] [--repeat N] [--stores sqlite,postgres]`.

Two tables, each on SQLite (a file, WAL) and PostgreSQL (a throwaway server
started as the tests start theirs, `tests/pg_server.py`):

- **threads in one store** (10, 10,000, 1,000,000): `threads(status="interrupted")`
  (10 answers among them all), the first page of every thread (`threads(limit=200)`),
  the web inbox's first page (`/` and `/?status=done`), the threads counted by
  status (`thread_counts()`) and the `/runs` page, `actorgraph threads` as a
  new process (its default `--limit`, and `--status interrupted`), and
  `get_state` of one thread; `threads()` unbounded too, which is what the
  inbox read before it read a page. The store is built fast: the waiting
  threads and one finished thread are made by running a real graph (the
  store's own write path), and the rest are copies of the finished thread's
  rows (every table) made by one `INSERT ... SELECT` per table, each under a
  new thread id and an older `updated_at`.
- **long threads** (10, 1,000, 100,000 supersteps, a loop of one vertex, run by
  the engine with the default durability): `get_state`, `get_history(limit=10)`
  (the first page), `get_history()` whole, and the thread's picture
  (`draw_mermaid(thread)`, coloured from the newest checkpoints).

Each figure is the median of `--repeat` runs after one warm-up, with the range;
a figure whose single run takes seconds (a whole history of 100,000 checkpoints)
is one run. The growth column is the exponent k of `time ~ n^k` between the last
two rows: near 0 constant, near 1 linear.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import io
import math
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import actorgraph as ag
from actorgraph.checkpoint import Checkpointer, PostgresCheckpointer, SqliteCheckpointer
from actorgraph.checkpoint._store import thread_counts

__all__ = ["Figure", "growth", "history_rows", "main", "markdown", "rows", "thread_rows"]

WAITING = 10  # interrupted threads in a store (fewer in a store of fewer than 100)
LONG = 10.0  # seconds: a figure whose first run takes longer is measured once
TABLES = ("threads", "checkpoints", "writes", "blobs", "answers", "metadata")


@dataclass(frozen=True, slots=True)
class Figure:
    """One measured figure: which table and store, the size, what was timed, and its times in ms."""

    table: str
    store: str
    size: int
    what: str
    median_ms: float
    low_ms: float
    high_ms: float
    runs: int


def _timed(run: Callable[[], object], repeat: int) -> tuple[float, float, float, int]:
    """Median, lowest and highest ms of `run()` over `repeat` runs after a warm-up (one run if slow)."""
    start = time.perf_counter()
    run()
    first = time.perf_counter() - start
    if first > LONG:
        return first * 1000, first * 1000, first * 1000, 1
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), min(times), max(times), repeat


# -- the stores --------------------------------------------------------------------------------------


@dataclass
class _Place:
    """Where one store lives: how to open it, and what the command line is given to find it."""

    kind: str
    target: str
    cli: list[str]

    def open(self) -> SqliteCheckpointer | PostgresCheckpointer:
        """A new checkpointer on the store."""
        if self.kind == "sqlite":
            return SqliteCheckpointer(self.target)
        return PostgresCheckpointer(self.target)

    @contextmanager
    def connect(self) -> Iterator[Any]:
        """A connection to the store's database, as its administrator would open one (not actorgraph's)."""
        if self.kind == "sqlite":
            conn: Any = sqlite3.connect(self.target, isolation_level=None)
        else:
            import psycopg

            conn = psycopg.connect(self.target, autocommit=True)
        try:
            yield conn
        finally:
            conn.close()

    def execute(self, statements: list[str]) -> None:
        """Run statements on the store's database, each in a transaction of its own."""
        with self.connect() as conn:
            for sql in statements:
                conn.execute(sql)

    def columns(self, table: str) -> list[str]:
        """The columns of one of the store's tables, in order."""
        with self.connect() as conn:
            cursor = conn.execute(f"SELECT * FROM actorgraph_{table} LIMIT 0")  # noqa: S608
            return [d[0] for d in cursor.description]


@contextmanager
def _places(kind: str) -> Iterator[Callable[[str], _Place]]:
    """Makes empty stores of one kind: a file each (SQLite) or a database each on one server."""
    with tempfile.TemporaryDirectory(prefix="growth-store-") as tmp:
        if kind == "sqlite":
            yield lambda name: _Place(
                kind, str(Path(tmp) / f"{name}.db"), ["--db", str(Path(tmp) / f"{name}.db")]
            )
            return
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        servers = importlib.import_module("pg_server")  # the tests' throwaway server

        with servers.PostgresServer() as server:

            def make(name: str) -> _Place:
                _Place(kind, server.dsn(), []).execute([f"CREATE DATABASE {name}"])
                return _Place(kind, server.dsn(name), ["--dsn", server.dsn(name)])

            yield make


def _series(kind: str, count: int) -> tuple[str, str]:
    """A FROM item of `count` rows numbered `n.i` from 0, and the text of a copy's thread id."""
    if kind == "sqlite":
        numbers = f"WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < {count})"  # noqa: S608
        return f"({numbers} SELECT i FROM s) AS n", "'bulk-' || printf('%07d', n.i)"  # noqa: S608
    return f"generate_series(0, {count - 1}) AS n(i)", "'bulk-' || lpad(n.i::text, 7, '0')"


def _copies(place: _Place, template: str, count: int) -> list[str]:
    """The statements that copy every row of thread `template` `count` times, each copy older."""
    if count <= 0:
        return []
    numbers, thread_id = _series(place.kind, count)
    columns = {"threads": "head, status, t.updated_at - 1 - n.i * 0.5"}
    statements = []
    for table in TABLES:
        rest = columns.get(table) or ", ".join(c for c in place.columns(table) if c != "thread_id")
        statements.append(
            f"INSERT INTO actorgraph_{table} SELECT {thread_id}, {rest} FROM {numbers}"  # noqa: S608
            f" CROSS JOIN (SELECT * FROM actorgraph_{table} WHERE thread_id = '{template}') AS t"
        )
    return [*statements, "ANALYZE"]


def _approval() -> ag.Graph[Any]:
    """The graph whose threads fill the store: a draft, then a question, then done."""
    g: ag.Graph[Any] = ag.Graph()
    g.add_vertex("draft", lambda s: {**s, "draft": f"draft of {s['topic']}"})
    g.add_vertex(
        "review", lambda s: {**s, "approved": ag.interrupt({"question": "Publish?", "draft": s["draft"]})}
    )
    g.add_edge(ag.START, "draft").add_edge("draft", "review").add_edge("review", ag.END)
    return g


def _fill(place: _Place, app: ag.CompiledGraph[Any], count: int) -> int:
    """Put `count` threads in the store; return how many of them wait for an answer."""
    waiting = min(WAITING, max(1, count // 10))
    app.invoke({"topic": "template"}, thread_id="template")
    app.invoke(ag.Command(resume=True), thread_id="template")
    place.execute(_copies(place, "template", count - waiting - 1))
    for n in range(waiting):  # the newest threads: they wait
        app.invoke({"topic": f"topic {n}"}, thread_id=f"waiting-{n}")
    return waiting


# -- threads in one store ----------------------------------------------------------------------------


def _cli(place: _Place, *args: str) -> Callable[[], object]:
    """`actorgraph threads ARGS` on the store, as a new process (its start-up included)."""
    argv = [sys.executable, "-m", "actorgraph.cli", "threads", *place.cli, *args]
    env = os.environ | {"NO_COLOR": "1"}
    quiet = subprocess.DEVNULL  # "there are more" goes to stderr
    return lambda: subprocess.run(argv, check=True, env=env, stdout=quiet, stderr=quiet)


def _cli_inside(place: _Place, *args: str) -> Callable[[], object]:
    """`actorgraph threads ARGS` on the store, called in this process: the command's own work."""
    from actorgraph.cli import main as command

    def run() -> None:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = command(["threads", *place.cli, *args])
        if code != 0:
            raise RuntimeError(f"actorgraph threads {' '.join(args)} exited with {code}")

    return run


def _thread_figures(
    place: _Place, app: ag.CompiledGraph[Any], store: Checkpointer
) -> dict[str, Callable[[], object]]:
    """What is timed in a store full of threads, by the name of its row."""
    from starlette.testclient import TestClient

    from actorgraph.web import app as web

    client = TestClient(web(app), base_url="http://127.0.0.1")
    return {
        'threads(status="interrupted")': lambda: store.threads(status="interrupted"),
        "threads(limit=200): the first page": lambda: store.threads(limit=200),
        "threads(): every thread (the inbox's read before)": store.threads,
        "web inbox `/` (the waiting threads)": lambda: client.get("/").raise_for_status(),
        "web inbox `/?status=done` (200 of them)": lambda: client.get("/?status=done").raise_for_status(),
        "thread_counts(): threads by status": lambda: thread_counts(store),
        "web `/runs` (counts, a page of failures)": lambda: client.get("/runs").raise_for_status(),
        "`actorgraph threads` (in this process, --limit 100)": _cli_inside(place),
        "`actorgraph threads` (new process, --limit 100)": _cli(place),
        "`actorgraph threads --status interrupted`": _cli(place, "--status", "interrupted"),
        "get_state of one thread": lambda: app.get_state("waiting-0"),
    }


def thread_rows(sizes: list[int], kinds: list[str], repeat: int) -> list[Figure]:
    """Time the listing, the inbox, the command and `get_state` in stores of `sizes` threads."""
    figures = []
    for kind in kinds:
        with _places(kind) as make:
            for size in sizes:
                place = make(f"threads_{size}")
                started = time.perf_counter()
                with place.open() as store, _approval().compile(checkpointer=store) as app:
                    _fill(place, app, size)
                    built = (time.perf_counter() - started) * 1000
                    figures.append(
                        Figure("threads", kind, size, "building the store (once)", built, built, built, 1)
                    )
                    for what, run in _thread_figures(place, app, store).items():
                        figures.append(Figure("threads", kind, size, what, *_timed(run, repeat)))
                print(f"  measured: {kind}, {size:,} threads", file=sys.stderr)
    return figures


# -- long threads ------------------------------------------------------------------------------------


def _loop(steps: int) -> ag.Graph[Any]:
    g: ag.Graph[Any] = ag.Graph()
    g.add_vertex("inc", lambda s: {"n": s["n"] + 1})
    g.add_edge(ag.START, "inc")
    g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < steps else ag.END)
    return g


def _history_figures(app: ag.CompiledGraph[Any], thread: str) -> dict[str, Callable[[], object]]:
    """What is timed on a long thread, by the name of its row."""
    return {
        "get_state": lambda: app.get_state(thread),
        "get_history(limit=10): the first page": lambda: app.get_history(thread, limit=10),
        "get_history(): every checkpoint": lambda: app.get_history(thread),
        "the graph picture (`draw_mermaid(thread)`)": lambda: app.draw_mermaid(thread),
    }


def history_rows(steps: list[int], kinds: list[str], repeat: int) -> list[Figure]:
    """Time `get_state` and `get_history` (first page, whole) on threads of `steps` supersteps."""
    figures = []
    for kind in kinds:
        with _places(kind) as make:
            place = make("long")
            for size in steps:
                thread = f"long-{size}"
                with place.open() as store, _loop(size).compile(checkpointer=store) as app:
                    started = time.perf_counter()
                    app.invoke({"n": 0}, thread_id=thread, recursion_limit=size + 10)
                    ran = (time.perf_counter() - started) * 1000
                    figures.append(
                        Figure("long", kind, size, "running it (once; durability sync)", ran, ran, ran, 1)
                    )
                    for what, run in _history_figures(app, thread).items():
                        figures.append(Figure("long", kind, size, what, *_timed(run, repeat)))
                print(f"  measured: {kind}, {size:,} supersteps", file=sys.stderr)
    return figures


# -- the tables ----------------------------------------------------------------------------------------


def rows(
    *, quick: bool = False, repeat: int = 3, kinds: tuple[str, ...] = ("sqlite", "postgres")
) -> list[Figure]:
    """Every figure of both tables (small sizes when `quick`), for printing or plotting."""
    threads = [10, 1_000] if quick else [10, 10_000, 1_000_000]
    steps = [10, 1_000] if quick else [10, 1_000, 100_000]
    return thread_rows(threads, list(kinds), repeat) + history_rows(steps, list(kinds), repeat)


def growth(figures: list[Figure]) -> str:
    """How the figures (one row: one table, store and what, several sizes) grow: a class and k of n^k."""
    ordered = sorted(figures, key=lambda f: f.size)
    if len(ordered) < 2:
        return ""
    a, b = ordered[-2], ordered[-1]
    k = math.log(max(b.median_ms, 1e-6) / max(a.median_ms, 1e-6)) / math.log(b.size / a.size)
    if k < 0.1:
        name = "constant"
    elif k < 0.3:
        name = "logarithmic"
    elif 0.8 <= k <= 1.2:
        name = "linear"
    else:
        name = "worse than linear" if k > 1.2 else "sublinear"
    return f"{name} (k = {k:.2f})"


def _cell(f: Figure) -> str:
    if f.runs == 1:
        return f"{f.median_ms:,.1f} (1 run)"
    return f"{f.median_ms:,.2f} ({f.low_ms:,.2f}-{f.high_ms:,.2f})"


def markdown(figures: list[Figure]) -> str:
    """The figures as Markdown tables, one per table and store: a row per timed thing, a column per size."""
    out = []
    titles = {"threads": "Threads in one store", "long": "Long threads (supersteps in one thread)"}
    for table, title in titles.items():
        for kind in dict.fromkeys(f.store for f in figures if f.table == table):
            mine = [f for f in figures if f.table == table and f.store == kind]
            sizes = sorted({f.size for f in mine})
            out += [f"### {title}: {'SQLite' if kind == 'sqlite' else 'PostgreSQL'}", ""]
            out.append("| ms: median (range) | " + " | ".join(f"{s:,}" for s in sizes) + " | growth |")
            out.append("| --- |" + " ---: |" * len(sizes) + " --- |")
            for what in dict.fromkeys(f.what for f in mine):
                row = {f.size: f for f in mine if f.what == what}
                cells = " | ".join(_cell(row[s]) if s in row else "" for s in sizes)
                out.append(f"| {what} | {cells} | {growth(list(row.values()))} |")
            out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Print the tables of how the stores grow."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per figure (median)")
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test of the script)")
    parser.add_argument("--stores", default="sqlite,postgres", help="which stores, comma-separated")
    args = parser.parse_args(argv)
    kinds = tuple(k for k in args.stores.split(",") if k)
    print(markdown(rows(quick=args.quick, repeat=args.repeat, kinds=kinds)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
