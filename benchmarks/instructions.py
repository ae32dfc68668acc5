"""Instructions per unit of each core workload, counted by valgrind: `python -m benchmarks.instructions`.

Wall time on a shared 2-core machine moves several-fold between runs; the
instruction count of the same code on the same input barely moves. Each
workload runs in a fresh interpreter under callgrind twice, with one and with
three timed runs after a warm-up, and the difference is divided by two runs:
start-up, imports, compilation and the warm-up cancel out.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from actorgraph._actors.dispatcher import shared_dispatcher
from actorgraph._api.stream import Mailbox
from benchmarks import core

__all__ = ["count", "main"]

_WORKLOADS = {w.name: w for w in core.WORKLOADS if w.per in ("time", "rate")}


def _streamed(make: Callable[[], core.Runner], mode: str) -> Callable[[], Callable[[], object]]:
    """A workload's graph run with `stream(mode=...)`, every item taken, instead of invoke."""

    def build() -> Callable[[], object]:
        runner = make()

        def drain() -> None:
            for _ in runner.app.stream(runner.state, mode=mode):
                pass

        drain.close = runner.close  # type: ignore[attr-defined]
        return drain

    return build


for _mode in ("values", "updates"):  # what watching a run costs, in instructions rather than noisy time
    _name = f"chain of {core.CHAIN} vertices, stream(mode={_mode!r})"
    _WORKLOADS[_name] = dataclasses.replace(
        _WORKLOADS[f"chain of {core.CHAIN} vertices"], name=_name, actorgraph=_streamed(core.ag_chain, _mode)
    )
_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


# How much slower a run is under callgrind: a 100-vertex chain took 4.8 s there against
# 10-37 ms natively on a loaded machine (about 4 ms on a quiet one), so 100x is the low end.
CALLGRIND_SLOWDOWN = 100


def _child(name: str, runs: int) -> None:
    # The dispatcher's watcher wakes on wall time (every 2 ms while actors are handed
    # on); under callgrind that is every 20 us or less of the program's own work, at
    # least 100 times its real rate, and its instructions would swamp the count.
    dispatcher = shared_dispatcher()
    dispatcher.blocked_after *= CALLGRIND_SLOWDOWN
    # A stream's consumer, while items flow, wakes every `Mailbox.BATCH` of wall time
    # to take them: stretched alike, or its wake-ups would be counted 100 times over.
    Mailbox.BATCH *= CALLGRIND_SLOWDOWN  # type: ignore[misc]
    workload = _WORKLOADS[name]
    run = workload.actorgraph()
    run()  # warm-up: actors started, code paths compiled
    for _ in range(runs):
        run()
    close = getattr(run, "close", None)
    if close is not None:
        close()


def count(name: str, runs: int) -> int:
    """Instructions of a fresh interpreter running workload `name` once plus `runs` times."""
    valgrind = shutil.which("valgrind") or "valgrind"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        done = subprocess.run(
            [
                valgrind,
                "--tool=callgrind",
                f"--callgrind-out-file={out}",
                sys.executable,
                "-m",
                "benchmarks.instructions",
                "--child",
                name,
                str(runs),
            ],
            capture_output=True,
            text=True,
            check=True,
            timeout=1800,
        )
    found = _COLLECTED.search(done.stderr)
    if found is None:
        msg = f"callgrind printed no instruction count:\n{done.stderr[-2000:]}"
        raise RuntimeError(msg)
    return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", default="", help="only workloads whose name contains this")
    parser.add_argument("--child", nargs=2, metavar=("NAME", "RUNS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child[0], int(args.child[1]))
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)")
        return 1
    print("| workload | instructions per unit |\n| --- | ---: |")
    for name, workload in _WORKLOADS.items():
        if args.only and args.only not in name:
            continue
        per_run = (count(name, 3) - count(name, 1)) / 2
        print(f"| {name} | {per_run / workload.units:,.0f} per {workload.unit} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
