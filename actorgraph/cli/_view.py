"""The view of a run as it goes: a live table on a terminal, one line per event elsewhere.

Both are event listeners (`actorgraph.events`), called from the run's threads.
"""

from __future__ import annotations

import threading
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Final

from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from actorgraph._api.text import duration, error_text, preview, question
from actorgraph.cli._console import cell
from actorgraph.events import (
    Event,
    RetryScheduled,
    RunStarted,
    SuperstepCommitted,
    SuperstepStarted,
    TaskFinished,
    TaskStarted,
)

__all__ = ["View", "view_on"]

_STYLES: Final = {
    "waiting": "dim",
    "running": "yellow",
    "retrying": "yellow",
    "ok": "green",
    "error": "bold red",
    "interrupted": "magenta",
    "kept": "dim green",
}
_ROWS: Final = 20  # the newest tasks shown in the live table
_OUTCOMES: Final = {"ok": "ok", "error": "error", "interrupt": "interrupted"}
_NOTE: Final = 300  # characters of an error shown in a line or a cell (`show` has it whole)


def _short(text: str) -> str:
    """`text`, cut to a line's worth."""
    cut = preview(text, _NOTE)
    return f"{cut.text}..." if cut.cut else cut.text


def _path(namespace: str) -> str:
    """`research/` for a subgraph run `research@2~1a2b3c4d` (nested ones joined by `|`)."""
    if not namespace:
        return ""
    return "".join(f"{part.rpartition('@')[0].split(':')[0]}/" for part in namespace.split("|"))


@dataclass(slots=True)
class _Task:
    """One task as the view shows it."""

    step: int
    label: str
    status: str = "waiting"
    attempt: int = 0
    started: float | None = None
    ended: float | None = None
    note: str = ""

    def elapsed(self) -> str:
        if self.started is None:
            return ""
        return duration((self.ended or time.monotonic()) - self.started)


class View:
    """A listener that keeps every task's progress; prints a line per event unless live."""

    def __init__(self, console: Console, *, live: bool) -> None:
        self._console = console
        self._live = live
        self._lock = threading.Lock()
        self._tasks: dict[tuple[str, int, str], _Task] = {}
        self._step = 0
        self._from: dict[str, int] = {}  # the superstep each run (by namespace) started after
        self._thread = ""
        self._began = time.monotonic()

    def __call__(self, event: Event) -> None:
        with self._lock:
            line = self._apply(event)
            if line and not self._live:
                self._console.print(cell(line), soft_wrap=True, highlight=False)

    def _task(self, event: Event, task_id: str) -> _Task:
        key = (event.namespace, event.step, task_id)
        task = self._tasks.get(key)
        if task is None:
            task = self._tasks[key] = _Task(event.step, f"{_path(event.namespace)}{task_id}")
        return task

    def _apply(self, event: Event) -> str:
        match event:
            case RunStarted():
                self._thread = event.thread_id or self._thread
                self._from[event.namespace] = event.step
                return "" if event.namespace else f"run {event.run_id} from superstep {event.step}"
            case SuperstepStarted(tasks=tasks):
                if not event.namespace:
                    self._step = event.step
                labels = [self._task(event, task_id).label for task_id in tasks]
                return f"superstep {event.step}: {', '.join(labels)}"
            case TaskStarted():
                return self._started(event)
            case TaskFinished(final=True):
                return self._finished(event)
            case RetryScheduled():
                return self._retrying(event)
            case SuperstepCommitted() if event.step > self._from.get(event.namespace, -1):
                for (namespace, step, _), task in self._tasks.items():
                    if namespace == event.namespace and step == event.step and task.status == "waiting":
                        task.status = "kept"  # its outcome was recorded before this run
                return f"superstep {event.step} committed"
        return ""

    def _started(self, event: TaskStarted) -> str:
        task = self._task(event, event.task_id)
        task.status, task.attempt, task.note = "running", event.attempt, ""
        if task.started is None:
            task.started = time.monotonic()
        return f"  {task.label}: running (attempt {event.attempt})"

    def _finished(self, event: TaskFinished) -> str:
        result = event.result
        task = self._task(event, result.task_id)
        task.status, task.attempt, task.ended = _OUTCOMES[result.status], result.attempts, time.monotonic()
        match result.status:
            case "error":
                task.note = _short(error_text(result.error))
            case "interrupt":
                task.note = question(result.interrupt.value, short=True) if result.interrupt else ""
            case _:
                task.note = ""
        note = f": {task.note}" if task.note else ""
        took = f", {task.elapsed()}" if task.started is not None else ""
        return f"  {task.label}: {task.status} (attempt {result.attempts}{took}){note}"

    def _retrying(self, event: RetryScheduled) -> str:
        task = self._task(event, event.task_id)
        failed, delay = _short(error_text(event.error)), duration(event.delay)
        task.status, task.note = "retrying", f"{failed}; next in {delay}"
        return f"  {task.label}: attempt {event.attempt} failed ({failed}); retrying in {delay}"

    def table(self) -> Table:
        """The live table: the newest tasks, with the superstep, status, attempt and elapsed time."""
        with self._lock:
            tasks = list(self._tasks.values())[-_ROWS:]
            took = duration(time.monotonic() - self._began)
            title = f"thread {self._thread} · superstep {self._step} · {took}"
        table = Table(title=cell(title), title_justify="left", expand=False)
        for column in ("step", "vertex", "status", "attempt", "elapsed", "note"):
            table.add_column(column, overflow="fold")
        for task in tasks:
            table.add_row(
                str(task.step),
                cell(task.label),
                Text(task.status, style=_STYLES[task.status]),
                str(task.attempt or ""),
                task.elapsed(),
                cell(task.note),
            )
        return table

    def shown(self) -> AbstractContextManager[object]:
        """While the run goes: the live table on a terminal (it stays on screen afterwards)."""
        if not self._live:
            return nullcontext()
        return Live(console=self._console, get_renderable=self.table, refresh_per_second=8)


def view_on(console: Console) -> View:
    """The view for `console`: live on a terminal, a line per event otherwise."""
    return View(console, live=console.is_terminal)
