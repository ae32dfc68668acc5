"""A process that collects garbage inside actorgraph's locks: `collect_child.py locks|sections`.

Leftovers are graphs (and `@task`s, and streams) dropped in a reference cycle, so
only a collection frees them, and their finalizers run wherever it happens. A
finalizer that takes a lock, or calls into the runtime, deadlocks when the
collection happens inside that lock on the same thread: the parent sees this
process hang and fails on its timeout instead.

- `locks`: for each lock of the package (every module-level lock, and every lock
  of a graph's runtime: a leftover's own and an open graph's), make leftovers,
  hold the lock, `gc.collect()`, and wait for the leftovers to be closed (their
  runtimes closed, the run of a stream left at its first item cancelled). Prints a line `{"holding": name}`
  before each collection, and last `{"rounds": [names], "unclosed": [names]}`.
- `sections`: every lock actorgraph makes collects garbage each time it is taken
  (the module-level ones are wrapped, the rest are made by a wrapped `threading`),
  while an entrypoint whose `@task`s are defined inside a function (each one a
  leftover once the function returns) asks questions answered live, as
  `live.adopt` takes them over holding its lock. Prints `{"answered": n, "live": m}`.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import os
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from typing import Any

import actorgraph as ag
import actorgraph.func
from actorgraph._actors import live, reaper
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.events import RunFinished

_LOCK_TYPES = (type(threading.Lock()), type(threading.RLock()))
_TASKS: list[Any] = []  # the task the open entrypoint calls
_GATES: list[threading.Event] = []  # where the open graph's vertex waits
Path = tuple[Any, ...]  # attribute names and keys from a runtime to one of its locks


def _say(report: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()


def _module_locks() -> dict[str, Any]:
    """Every lock held in a module-level name of actorgraph, by `module.name`."""
    found: dict[str, Any] = {}
    for module_name, module in list(sys.modules.items()):
        if module_name.startswith("actorgraph") and isinstance(module, types.ModuleType):
            for name, value in vars(module).items():
                if isinstance(value, _LOCK_TYPES):
                    found[f"{module_name}.{name}"] = value
    return found


def _lock_paths(obj: Any, path: Path = (), depth: int = 4) -> Iterator[Path]:
    """The paths to every lock reachable from `obj` through actorgraph objects, dicts and lists."""
    if isinstance(obj, _LOCK_TYPES):
        yield path
        return
    if depth == 0:
        return
    if isinstance(obj, dict):
        children: list[tuple[Any, Any]] = list(obj.items())
    elif isinstance(obj, list):
        children = list(enumerate(obj))
    elif type(obj).__module__.startswith("actorgraph"):
        names = list(getattr(obj, "__dict__", {})) + [
            s for k in type(obj).__mro__ for s in getattr(k, "__slots__", ()) if hasattr(obj, s)
        ]
        children = [(name, getattr(obj, name)) for name in dict.fromkeys(names)]
    else:
        return
    for key, child in children:
        yield from _lock_paths(child, (*path, key), depth - 1)


def _at(obj: Any, path: Path) -> Any:
    for step in path:
        obj = obj[step] if isinstance(obj, dict | list) else getattr(obj, step)
    return obj


def _named(label: str, path: Path) -> str:
    return f"{label}:{'.'.join(map(str, path))}"


def _in(root: str, path: Path, made: Leftovers) -> Any:
    """The lock at `path` from a leftover's runtime (`root`: "graph" or "task")."""
    return _at(getattr(made, root), path)


def _line(name: str, fn: Callable[[Any], Any]) -> ag.Graph:
    g: ag.Graph = ag.Graph(name=name)
    g.add_vertex("v", fn)
    g.add_edge(ag.START, "v")
    g.add_edge("v", ag.END)
    return g


class Leftovers:
    """A graph, a task's graph and a stream's run, each left to the garbage collector."""

    def __init__(self, open_app: Any, flow: Any) -> None:
        app = _line("leftover", lambda s: {**s, "seen": True}).compile()
        app.invoke({"n": 1})  # its actors and coordinator exist now
        app.cycle = app  # type: ignore[attr-defined] - only a collection frees it
        self.graph = app._runtime

        @actorgraph.func.task
        def double(x: int) -> int:
            return 2 * x

        _TASKS[:] = [double]
        assert flow.invoke(21, thread_id=f"t{id(self)}").state == 42
        _TASKS.clear()
        self.task = double.graph()._runtime
        double.cycle = double  # type: ignore[attr-defined]

        self.ended: list[str] = []  # how the stream's run ended (its listener hears it)
        self.gate = threading.Event()
        _GATES[:] = [self.gate]
        stream = open_app.stream({"gate": True}, mode="values", listeners=[self._heard])
        next(stream)  # its vertex waits at the gate meanwhile
        holder: list[Any] = [stream]
        holder.append(holder)  # the stream, suspended at its first item, in a cycle
        del app, double, stream, holder

    def _heard(self, event: Any) -> None:
        if isinstance(event, RunFinished):
            self.ended.append(event.status)

    def unclosed(self, deadline: float) -> list[str]:
        """What is still open (or going) at `deadline` (the reaper closes the rest meanwhile)."""
        left: list[str] = []
        while time.monotonic() < deadline:
            left = [name for name, rt in (("graph", self.graph), ("task", self.task)) if not rt.closed]
            left += [] if self.ended == ["cancelled"] else [f"stream run: {self.ended}"]
            if not left:
                break
            time.sleep(0.01)
        self.gate.set()
        return left


def _open_graph() -> Any:
    def wait(state: dict[str, Any]) -> dict[str, Any]:
        if state.get("gate"):
            _GATES[0].wait(60)
        return state

    app = _line("open", wait).compile()
    app.invoke({"n": 1})
    return app


def _flow() -> Any:
    @actorgraph.func.entrypoint()
    def flow(x: int) -> int:
        return int(_TASKS[0](x).result())

    return flow


def holding_locks() -> int:
    """Collect inside every lock in turn; report what was closed afterwards."""
    gc.disable()  # collections happen only where this process makes them
    open_app, flow = _open_graph(), _flow()
    sample = Leftovers(open_app, flow)
    cases: list[tuple[str, Callable[[Leftovers], Any]]] = [
        (name, lambda _, lock=lock: lock) for name, lock in _module_locks().items()
    ]
    for label, root in (("leftover", "graph"), ("task", "task")):
        cases += [
            (_named(label, p), functools.partial(_in, root, p)) for p in _lock_paths(getattr(sample, root))
        ]
    cases += [
        (_named("open", p), lambda _, p=p: _at(open_app._runtime, p)) for p in _lock_paths(open_app._runtime)
    ]
    gc.collect()
    unclosed = [f"the sample: {what}" for what in sample.unclosed(time.monotonic() + 20)]
    rounds: list[str] = []
    for name, pick in cases:
        made = Leftovers(open_app, flow)
        lock = pick(made)
        _say({"holding": name})
        with lock:
            gc.collect()
        rounds.append(name)
        unclosed += [f"{name}: {what}" for what in made.unclosed(time.monotonic() + 20)]
    flow.close()
    open_app.close()
    _say({"rounds": rounds, "unclosed": unclosed})
    return 0


# -- sections: a collection inside every locked section ---------------------------------------

_STOCK: list[Any] = []  # leftovers still held: each locked section drops one, then collects
_ARMED: list[bool] = []  # not empty: locked sections collect


def _stock_up(count: int) -> None:
    """Fill the stock with graphs and tasks (compiled, in reference cycles) up to `count`."""
    while len(_STOCK) < count:
        app = _line("stock", lambda s: s).compile()
        app.cycle = app  # type: ignore[attr-defined]

        @actorgraph.func.task
        def echo(x: int) -> int:
            return x

        echo.graph()
        echo.cycle = echo  # type: ignore[attr-defined]
        _STOCK.extend((app, echo))


class CollectingLock:
    """A lock that drops a leftover and collects it each time it is taken (a collection may, anywhere)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        got = self._inner.acquire(blocking, timeout)
        if (
            got and _ARMED and threading.current_thread().name != reaper.THREAD_NAME
        ):  # its closes would eat the stock
            with contextlib.suppress(IndexError):
                _STOCK.pop()
                gc.collect()
        return bool(got)

    def release(self) -> None:
        self._inner.release()

    def locked(self) -> bool:
        return bool(self._inner.locked())

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _collecting_threading() -> None:
    """Make every lock actorgraph takes a `CollectingLock`, from now on and those it made."""
    shim = types.ModuleType("threading")
    shim.__dict__.update(threading.__dict__)
    shim.Lock = lambda: CollectingLock(threading.Lock())  # type: ignore[attr-defined]
    shim.RLock = lambda: CollectingLock(threading.RLock())  # type: ignore[attr-defined]
    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith("actorgraph") or not isinstance(module, types.ModuleType):
            continue
        if getattr(module, "threading", None) is threading:
            module.threading = shim  # type: ignore[attr-defined]
        for name, value in list(vars(module).items()):
            if isinstance(value, _LOCK_TYPES):
                setattr(module, name, CollectingLock(value))


def _answered_live(thread: str) -> int:
    """Run an entrypoint and its task defined here (a leftover once this returns) through two questions.

    Returns:
        How many vertices waited live for the first answer.
    """

    @actorgraph.func.task
    def check(x: int) -> int:
        return x + int(ag.interrupt({"check": x}))

    check.cycle = check  # type: ignore[attr-defined]

    @actorgraph.func.entrypoint(checkpointer=MemoryCheckpointer())
    def flow(x: int) -> int:
        return int(check(x * int(ag.interrupt("factor?"))).result())

    with flow:
        waited = live.waiting()
        assert flow.invoke(2, thread_id=thread).status == "interrupted"
        waiting = live.waiting() - waited
        assert flow.invoke(ag.Command(resume=10), thread_id=thread).status == "interrupted"
        assert flow.invoke(ag.Command(resume=1), thread_id=thread).state == 21
    return waiting


def sections(rounds: int = 2) -> int:
    """An entrypoint with a task defined inside a function, answered live, with collections everywhere.

    Another entrypoint stays open meanwhile, so the tasks' graphs are not closed
    with the round's entrypoint: they are left to the collector, as in a program.
    """
    gc.disable()
    keeper = _flow()  # open throughout
    _collecting_threading()
    answered = live_ones = 0
    for n in range(rounds):
        _ARMED.clear()
        _stock_up(300)  # more than the locks a round takes, on every thread
        _ARMED.append(True)
        live_ones += _answered_live(f"s{n}")
        answered += 1
    _ARMED.clear()
    keeper.close()
    _say({"answered": answered, "live": live_ones})
    return 0


def _with_the_tests_actors() -> None:
    """Compile every graph with `$ACTORGRAPH_TEST_ACTORS`'s actors, as the test process does (conftest)."""
    actors = os.environ.get("ACTORGRAPH_TEST_ACTORS")
    if not actors:
        return
    original = ag.Graph.compile

    def compile_with(self: ag.Graph, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("actors", actors)
        return original(self, *args, **kwargs)

    ag.Graph.compile = compile_with  # type: ignore[method-assign]


if __name__ == "__main__":
    _with_the_tests_actors()
    sys.exit(holding_locks() if sys.argv[1] == "locks" else sections())
