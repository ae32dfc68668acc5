"""The Ray backend beside the thread backend and LangGraph: `python -m benchmarks.ray_backend [--repeat N]`.

- CPU-bound fan-out: 64 tasks of ~50 ms of pure-Python work (calibrated here),
  sent with `Send` to one vertex; LangGraph runs them on its thread pool.
- Scaling: the same fan-out on 1 and on 2 partitions (the machine's CPUs).
- Per-task overhead on trivial work: a 200-step loop of one vertex, in
  microseconds per task, with this run's thread ping-pong for reference.
- Start-up: `RayBackend().start()` (starting a local Ray), the first compile
  and invoke, and `close()` (stopping Ray): reported, not hidden.

`--overhead` prints the per-task table alone, with the task on Ray and the bare
Ray call measured in alternation and their ratio, then where a task's time goes
beyond the bare call: the same call with one argument, that call's answer taken
by a callback on another thread (as the backend takes its answers) rather than a
blocking `ray.get`, and the task itself, each with the driver's CPU time and its
voluntary context switches (thread hand-offs) per unit, in alternation too.
"""

from __future__ import annotations

import argparse
import operator
import os
import queue
import resource
import statistics
import time
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

import actorgraph as ag
from actorgraph.merge import append, by_key
from actorgraph.ray import RayBackend
from benchmarks.harness import ping_pong
from benchmarks.ray_echo import Echo

__all__ = ["main", "report"]

TASKS = 64
TASK_SECONDS = 0.05
LOOP = 200


def spin(rounds: int) -> int:
    """Pure-Python CPU work that holds the GIL."""
    total = 0
    for i in range(rounds):
        total += i * i % 7
    return total


def calibrate(seconds: float = TASK_SECONDS) -> int:
    """The rounds of `spin` that take `seconds` on one core of this machine, now."""
    rounds = 100_000
    start = time.perf_counter()
    spin(rounds)
    return max(1, int(rounds * seconds / (time.perf_counter() - start)))


def fan_out(rounds: int) -> ag.Graph:
    g: ag.Graph = ag.Graph(merge=by_key({"done": append}), name="cpu-fan-out")
    g.add_vertex("split", lambda s: s)
    g.add_vertex(
        "work", lambda s: {"done": [spin(rounds) and s["item"]]}, concurrency=TASKS, returns="update"
    )
    g.add_edge(ag.START, "split")
    g.add_conditional_edges("split", lambda s: [ag.Send("work", {"item": i}) for i in range(TASKS)], ["work"])
    g.add_edge("work", ag.END)
    return g


def loop() -> ag.Graph:
    g: ag.Graph = ag.Graph(name="loop")
    g.add_vertex("tick", lambda s: {"n": s["n"] + 1})
    g.add_edge(ag.START, "tick")
    g.add_conditional_edges("tick", lambda s: "tick" if s["n"] < LOOP else ag.END)
    return g


class _Done(TypedDict):
    done: Annotated[list[int], operator.add]


def lg_fan_out(rounds: int) -> Callable[[], object]:
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Send

    g = StateGraph(_Done)
    g.add_node("split", lambda s: {})
    g.add_node("work", lambda s: {"done": [spin(rounds) and s["item"]]})
    g.add_edge(START, "split")
    g.add_conditional_edges("split", lambda s: [Send("work", {"item": i}) for i in range(TASKS)])
    g.add_edge("work", END)
    app = g.compile()
    return lambda: app.invoke({"done": []})


def lg_loop() -> Callable[[], object]:
    from langgraph.graph import END, START, StateGraph

    class N(TypedDict):
        n: int

    g = StateGraph(N)
    g.add_node("tick", lambda s: {"n": s["n"] + 1})
    g.add_edge(START, "tick")
    g.add_conditional_edges("tick", lambda s: "tick" if s["n"] < LOOP else END)
    app = g.compile()
    return lambda: app.invoke({"n": 0}, {"recursion_limit": LOOP + 10})


def raw_ray_call(backend: RayBackend, calls: int = 500) -> float:
    """Seconds of one bare call to a partition actor and back: the Ray backend's floor."""
    ray = backend.ray
    actor = next(iter(backend.partition_actors()))
    ray.get(actor.where.remote())
    start = time.perf_counter()
    for _ in range(calls):
        ray.get(actor.where.remote())
    return (time.perf_counter() - start) / calls


def task_against_call(backend: RayBackend, repeat: int) -> tuple[float, float, float]:
    """Seconds per trivial task on Ray, per bare Ray call, and the median of their ratios.

    Measured in alternation (a 200-step loop, then 200 bare calls, `repeat` times),
    so the machine's mood weighs on both alike.
    """
    tasks, calls, ratios = [], [], []
    with loop().compile(backend=backend) as on_ray:
        on_ray.invoke({"n": LOOP - 1})  # the partitions learn the code
        for _ in range(repeat):
            start = time.perf_counter()
            on_ray.invoke({"n": 0}, recursion_limit=LOOP + 10)
            tasks.append((time.perf_counter() - start) / LOOP)
            calls.append(raw_ray_call(backend, LOOP))
            ratios.append(tasks[-1] / calls[-1])
    return statistics.median(tasks), statistics.median(calls), statistics.median(ratios)


def _costs(run: Callable[[], object], units: int) -> tuple[float, float, float]:
    """Wall seconds, driver CPU seconds and voluntary context switches per unit of `run()`."""
    switches = resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw
    cpu, wall = time.process_time(), time.perf_counter()
    run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    switches = resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw - switches
    return wall / units, cpu / units, switches / units


def _bare_runs(ray: Any, echo: Any) -> dict[str, Callable[[], object]]:
    """A bare call, one with an argument, and one answered by callback: `LOOP` of each."""
    landed: queue.SimpleQueue[Any] = queue.SimpleQueue()
    blob = bytes(200)  # about a trivial task's pickled call

    def bare() -> None:
        for _ in range(LOOP):
            ray.get(echo.ping.remote())

    def with_argument() -> None:
        for _ in range(LOOP):
            ray.get(echo.back.remote(blob))

    def by_callback() -> None:
        for _ in range(LOOP):
            ref = echo.back.remote(blob)
            ref._on_completed(landed.put)  # noqa: SLF001 - what the backend's pools use
            landed.get()

    return {
        "a bare Ray call, no argument": bare,
        "the call with one argument (200 bytes)": with_argument,
        "... its answer taken on another thread, by callback": by_callback,
    }


def breakdown(backend: RayBackend, repeat: int) -> list[str]:
    """Rows of where a task's time goes beyond a bare Ray call, measured in alternation (`--overhead`)."""
    ray = backend.ray
    echo = ray.remote(Echo).options(num_cpus=0, max_concurrency=128).remote()
    runs = _bare_runs(ray, echo)
    samples: dict[str, list[tuple[float, float, float]]] = {name: [] for name in [*runs, "actorgraph, Ray"]}
    with loop().compile(backend=backend) as on_ray:
        runs["actorgraph, Ray"] = lambda: on_ray.invoke({"n": 0}, recursion_limit=LOOP + 10)
        for run in runs.values():
            run()  # warm up
        for _ in range(repeat):
            for name, run in runs.items():
                samples[name].append(_costs(run, LOOP))
    ray.kill(echo)
    rows = ["| unit | wall | driver CPU | voluntary context switches |", "|---|---:|---:|---:|"]
    for name, got in samples.items():
        wall, cpu, switches = (statistics.median(s[i] for s in got) for i in range(3))
        rows.append(f"| {name} | {wall * 1e6:.0f} us | {cpu * 1e6:.0f} us | {switches:.1f} |")
    return rows


def timed(run: Callable[[], object], repeat: int) -> float:
    run()  # warm up (partitions learn the vertex code)
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def report(repeat: int) -> str:
    """Measure everything and return the Markdown tables (threads and LangGraph before Ray starts)."""
    rounds = calibrate()
    floor = ping_pong()
    with fan_out(rounds).compile() as threads:
        thread_s = timed(lambda: threads.invoke({"done": []}), repeat)
    with loop().compile() as threads:
        thread_t = timed(lambda: threads.invoke({"n": 0}, recursion_limit=LOOP + 10), repeat) / LOOP
    try:
        lg_s: float | None = timed(lg_fan_out(rounds), repeat)
        lg_t: float | None = timed(lg_loop(), repeat) / LOOP
    except ImportError:
        lg_s = lg_t = None
    start = time.perf_counter()
    backend = RayBackend().start()
    started = time.perf_counter() - start
    try:
        first = time.perf_counter()
        with loop().compile(backend=backend) as app:
            app.invoke({"n": LOOP - 1})
        first_run = time.perf_counter() - first
        with fan_out(rounds).compile(backend=backend) as on_ray:
            ray_s = timed(lambda: on_ray.invoke({"done": []}), repeat)
        with RayBackend(partitions=1) as one, fan_out(rounds).compile(backend=one) as single:
            one_s = timed(lambda: single.invoke({"done": []}), repeat)
        ray_t, ray_call, ratio = task_against_call(backend, max(repeat, 5))
    finally:
        stop = time.perf_counter()
        backend.close()
        stopped = time.perf_counter() - stop
    cpus = os.cpu_count() or 1
    lg = f"{lg_s:.2f} s" if lg_s is not None else "n/a"
    lines = [
        (
            f"### CPU-bound fan-out: {TASKS} tasks x {TASK_SECONDS * 1000:.0f} ms of pure Python, "
            f"{cpus} CPUs (median of {repeat})"
        ),
        "",
        "| backend | wall time | speed-up over threads |",
        "|---|---:|---:|",
        f"| threads (one process, one GIL) | {thread_s:.2f} s | 1.00x |",
        f"| Ray, 1 partition | {one_s:.2f} s | {thread_s / one_s:.2f}x |",
        f"| Ray, {cpus} partitions (default) | {ray_s:.2f} s | {thread_s / ray_s:.2f}x |",
        f"| LangGraph (thread pool) | {lg} | " + (f"{thread_s / lg_s:.2f}x |" if lg_s else "n/a |"),
        "",
        f"### Per-task overhead on trivial work: a {LOOP}-step loop (median of {repeat})",
        "",
        "| backend | per task | vs thread ping-pong |",
        "|---|---:|---:|",
        f"| thread ping-pong (this run's floor) | {floor * 1e6:.1f} us | 1.0x |",
        f"| actorgraph, threads | {thread_t * 1e6:.1f} us | {thread_t / floor:.1f}x |",
        (
            f"| a bare Ray actor call, `ray.get(actor.method.remote())` | {ray_call * 1e6:.1f} us | "
            f"{ray_call / floor:.1f}x |"
        ),
        f"| actorgraph, Ray | {ray_t * 1e6:.1f} us | {ray_t / floor:.1f}x |",
        f"| actorgraph, Ray / the bare Ray call (median of per-round ratios) | {ratio:.2f}x | |",
    ]
    if lg_t is not None:
        lines.append(f"| LangGraph | {lg_t * 1e6:.1f} us | {lg_t / floor:.1f}x |")
    lines += [
        "",
        "### Start-up cost of the Ray backend",
        "",
        "| step | seconds |",
        "|---|---:|",
        f"| `RayBackend().start()` (starts a local Ray) | {started:.2f} |",
        f"| first compile + invoke (partitions start, learn the code) | {first_run:.2f} |",
        f"| `close()` (stops Ray) | {stopped:.2f} |",
    ]
    return "\n".join(lines)


def overhead(repeat: int) -> str:
    """The per-task table alone (`--overhead`): ping-pong, threads, a bare Ray call, a task on Ray."""
    floor = ping_pong()
    with loop().compile() as threads:
        thread_t = timed(lambda: threads.invoke({"n": 0}, recursion_limit=LOOP + 10), repeat) / LOOP
    with RayBackend() as backend:
        ray_t, ray_call, ratio = task_against_call(backend.start(), max(repeat, 5))
        parts = breakdown(backend, max(repeat, 5))
    return "\n".join(
        [
            f"### Per-task overhead on trivial work: a {LOOP}-step loop (median of {max(repeat, 5)})",
            "",
            "| backend | per task | vs thread ping-pong |",
            "|---|---:|---:|",
            f"| thread ping-pong (this run's floor) | {floor * 1e6:.1f} us | 1.0x |",
            f"| actorgraph, threads | {thread_t * 1e6:.1f} us | {thread_t / floor:.1f}x |",
            f"| a bare Ray actor call | {ray_call * 1e6:.1f} us | {ray_call / floor:.1f}x |",
            f"| actorgraph, Ray | {ray_t * 1e6:.1f} us | {ray_t / floor:.1f}x |",
            f"| actorgraph, Ray / the bare Ray call (median of per-round ratios) | {ratio:.2f}x | |",
            "",
            f"### Where a task's time goes beyond the bare call (per unit, median of {max(repeat, 5)})",
            "",
            *parts,
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per workload (median)")
    parser.add_argument("--overhead", action="store_true", help="the per-task table alone")
    args = parser.parse_args(argv)
    print(overhead(args.repeat) if args.overhead else report(args.repeat))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
