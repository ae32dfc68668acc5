"""Thread hand-offs per unit of each core workload: `python -m benchmarks.handoffs`.

Wall time on a shared machine moves several-fold with the speed of thread
wake-ups; the number of wake-ups does not. Every time a thread blocks (on a
queue, a future, or the GIL) Linux counts a voluntary context switch, so the
switches of the whole process per unit of work, halved, are the round trips a
workload needs, in the same unit as the physical floor: one `SimpleQueue`
ping-pong between two threads is two switches. (Linux only: it reads
/proc/self/task/*/status.)
"""

from __future__ import annotations

import queue
import threading
from pathlib import Path

from benchmarks import core

__all__ = ["main", "switches"]


def switches() -> int:
    """Voluntary context switches of every thread of this process so far."""
    total = 0
    for task in Path("/proc/self/task").iterdir():
        try:
            lines = (task / "status").read_text().splitlines()
        except FileNotFoundError:  # the thread ended meanwhile
            continue
        total += sum(int(line.split()[1]) for line in lines if line.startswith("voluntary_ctxt"))
    return total


def ping_pong_switches(rounds: int = 2000) -> float:
    """Switches per `SimpleQueue` round trip between two threads (2.0: the unit)."""
    there: queue.SimpleQueue[int | None] = queue.SimpleQueue()
    back: queue.SimpleQueue[int] = queue.SimpleQueue()

    def echo() -> None:
        while (item := there.get()) is not None:
            back.put(item)

    thread = threading.Thread(target=echo)
    thread.start()
    before = switches()
    for i in range(rounds):
        there.put(i)
        back.get()
    counted = switches() - before
    there.put(None)
    thread.join()
    return counted / rounds


def main() -> int:
    unit = ping_pong_switches()
    print(f"one ping-pong: {unit:.2f} switches\n")
    print("| workload | ping-pongs per unit |\n| --- | ---: |")
    for workload in core.WORKLOADS:
        if workload.per not in ("time", "rate"):
            continue
        run = workload.actorgraph()
        run()
        run()
        before = switches()
        run()
        per_unit = (switches() - before) / workload.units / unit
        getattr(run, "close", lambda: None)()
        print(f"| {workload.name} | {per_unit:.2f} per {workload.unit} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
