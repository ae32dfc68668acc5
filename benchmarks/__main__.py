"""Run the benchmarks and print Markdown tables: `python -m benchmarks [--repeat N] [--only TEXT]`."""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import platform
import sys

from benchmarks import big_state, core, isolation, persistence, startup, streaming
from benchmarks.harness import Floor, Row, measure, table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per workload (median)")
    parser.add_argument("--only", default="", help="run only workloads whose name contains this")
    args = parser.parse_args(argv)
    have_langgraph = importlib.util.find_spec("langgraph") is not None
    if not have_langgraph:
        print("LangGraph is not installed (pip install -e '.[bench]'): its column shows n/a\n")
    print(f"Python {platform.python_version()} on {platform.machine()}, {_cpus()} CPUs\n")
    rows = []
    floor = Floor()
    for workload in core.WORKLOADS:
        if args.only and args.only not in workload.name:
            continue
        chosen = workload if have_langgraph else dataclasses.replace(workload, langgraph=None)
        rows.append(measure(chosen, args.repeat, floor))
        print(f"  measured: {workload.name}", file=sys.stderr)
    if rows:
        print(table(rows, "Core engine (median of %d runs)" % args.repeat, floor))
    if not args.only or "stream" in args.only:
        print()
        print(streaming_table(streaming.rows(args.repeat), args.repeat))
    if not args.only or "persist" in args.only:
        print()
        print(
            table(
                persistence.rows(args.repeat, have_langgraph),
                "Checkpointing (median of %d runs)" % args.repeat,
            )
        )
    if not args.only or "big" in args.only:
        print()
        print(big_state.report(min(args.repeat, 5), have_langgraph))
    if not args.only:
        print()
        print(startup.report(have_langgraph))
        print()
        print(isolation.report())
    return 0


def streaming_table(rows: list[Row], repeat: int) -> str:
    lines = [
        f"### Streaming overhead (median of {repeat} runs)",
        "",
        "| workload | streamed | invoke | overhead |",
        "| --- | ---: | ---: | ---: |",
    ]
    lines += [f"| {r.name} | {r.ours} | {r.theirs} | {r.ratio} |" for r in rows]
    return "\n".join(lines)


def _cpus() -> int:
    import os

    return os.cpu_count() or 1


if __name__ == "__main__":
    raise SystemExit(main())
