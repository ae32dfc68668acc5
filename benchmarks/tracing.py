"""What tracing costs a run: `python -m benchmarks.tracing [--repeat N]`.

Two core workloads (1,000 supersteps of one vertex; 2,000 invokes of a
3-vertex chain), each compiled twice, with `tracing=False` and with the
default, timed alternately (median of N) in four settings of the process:

- OpenTelemetry never imported (what a program that does not use it sees);
- `opentelemetry.trace` imported, no SDK (the API's proxy provider);
- an SDK whose span processor drops every span (the cost of making spans);
- an SDK exporting to memory (the cost of keeping them, as a test does).

Each row prints the ratio of the default to `tracing=False` in that setting.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable
from typing import Protocol

import actorgraph as ag

LOOP = 1000
INVOKES = 2000


def loop(*, tracing: bool) -> Callable[[], object]:
    g: ag.Graph = ag.Graph()
    g.add_vertex("inc", lambda s: {"n": s["n"] + 1})
    g.add_edge(ag.START, "inc")
    g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < LOOP else ag.END)
    app = g.compile(tracing=tracing)
    run = lambda: app.invoke({"n": 0}, recursion_limit=LOOP + 10)
    run.app = app  # type: ignore[attr-defined]
    return run


def invokes(*, tracing: bool) -> Callable[[], object]:
    g: ag.Graph = ag.Graph()
    for name in ("a", "b", "c"):
        g.add_vertex(name, lambda s: {"n": s["n"] + 1})
    g.add_edge(ag.START, "a").add_edge("a", "b").add_edge("b", "c").add_edge("c", ag.END)
    app = g.compile(tracing=tracing)

    def run() -> None:
        for _ in range(INVOKES):
            app.invoke({"n": 0})

    run.app = app  # type: ignore[attr-defined]
    return run


class Build(Protocol):
    def __call__(self, *, tracing: bool) -> Callable[[], object]: ...


def _timed(run: Callable[[], object]) -> float:
    gc.collect()
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def compare(build: Build, repeat: int) -> tuple[float, float]:
    """Median seconds of the default (traced when an SDK records) and of `tracing=False`, interleaved."""
    traced, untraced = build(tracing=True), build(tracing=False)
    try:
        traced(), untraced()  # warm: actors started, code paths loaded
        on, off = [], []
        for i in range(repeat):  # alternate which goes first: neither gains from the other's warmth
            if i % 2:
                on.append(_timed(traced))
                off.append(_timed(untraced))
            else:
                off.append(_timed(untraced))
                on.append(_timed(traced))
        return statistics.median(on), statistics.median(off)
    finally:
        traced.app.close()  # type: ignore[attr-defined]
        untraced.app.close()  # type: ignore[attr-defined]


def _sdk(exporting: bool) -> None:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.util._once import Once

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()) if exporting else SpanProcessor())
    trace._TRACER_PROVIDER_SET_ONCE = Once()  # noqa: SLF001 - set anew for the next setting
    trace.set_tracer_provider(provider)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=21)
    args = parser.parse_args(argv)
    workloads: list[tuple[str, Build]] = [
        (f"loop: 1 vertex x {LOOP} supersteps", loop),
        (f"{INVOKES} invokes of a 3-vertex chain", invokes),
    ]
    settings: list[tuple[str, Callable[[], None]]] = [
        ("OpenTelemetry not imported", lambda: None),
        ("API imported, no SDK", lambda: __import__("opentelemetry.trace")),
        ("SDK, spans dropped", lambda: _sdk(exporting=False)),
        ("SDK, spans kept in memory", lambda: _sdk(exporting=True)),
    ]
    print("| setting | workload | default (s) | tracing=False (s) | ratio |\n|---|---|---|---|---|")
    for label, setup in settings:
        setup()
        for name, build in workloads:
            on, off = compare(build, args.repeat)
            print(f"| {label} | {name} | {on:.3f} | {off:.3f} | {on / off:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
