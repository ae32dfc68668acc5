"""The driver's side of a vertex on the Ray backend: a bounded pool of in-flight calls.

Same contract as the thread backend's `VertexPool`: at most `concurrency`
attempts of the vertex run at once (the rest wait in the pool's queue), a
timeout abandons an attempt (its late answer is ignored), and every outcome
reaches the coordinator as a `Done`. What differs is where the vertex function
runs: the pool merges the task's inputs here (`_task.prepare`), ships the call
to the least-loaded partition of the vertex's group, and finishes the task here
when the answer lands (`_task.finish`: routing, checks, the states serialized
for the checkpointer), on the backend's finisher thread. No thread waits on a
call: Ray calls back when the answer lands.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Protocol

import cloudpickle

from actorgraph._actors.attempt_spans import NO_SPAN, AttemptSpan, NoSpan, attempt_span
from actorgraph._actors.backend import Worker
from actorgraph._actors.bounded import BoundedPool
from actorgraph._actors.messages import Done, Order
from actorgraph._actors.pool import done_of, failed_result, report
from actorgraph._actors.timer import Timer
from actorgraph._build.builder import ASYNC_CONCURRENCY, DEFAULT_CONCURRENCY
from actorgraph._engine.caching import Lookup
from actorgraph._engine.call import Call
from actorgraph._engine.context import Context
from actorgraph._engine.task import Prepared, cached, finish, kept, prepare
from actorgraph._model.errors import (
    ActorGraphError,
    BackendError,
    RunCancelledError,
    SerializationError,
    VertexActorDiedError,
)
from actorgraph._model.records import ErrorInfo, VertexResult
from actorgraph._model.spec import GraphSpec, VertexSpec
from actorgraph.events import TaskStarted
from actorgraph.ray._finisher import Finisher
from actorgraph.ray._gate import Gate
from actorgraph.ray._groups import Group, Partition
from actorgraph.ray._partition import NEED_CODE, portable_error
from actorgraph.ray._states import StateCache
from actorgraph.ray._wire import dumps


class Host(Protocol):
    """What a pool needs of its backend (`RayBackend`)."""

    @property
    def ray(self) -> Any:
        """The `ray` module."""

    @property
    def finisher(self) -> Finisher:
        """Where landed answers are finished."""

    @property
    def states(self) -> StateCache:
        """Where input states are encoded."""

    @property
    def gate(self) -> Gate:
        """What every call into Ray passes."""

    def revive(self, group: Group, partition: Partition) -> bool:
        """Wait until a partition answers again (started anew if its node died)."""

    def unavailable(self, vertex: str) -> BackendError:
        """The error of an attempt of `vertex` that cannot be made or finished: Ray was let go."""


__all__ = ["Host", "RayPool"]


@dataclass(slots=True)
class _Flight:
    """An attempt sent to a partition."""

    order: Order
    prepared: Prepared
    partition: Partition
    ref: Any
    blob: bytes  # the pickled (code key, call, state): sent again with the code if the partition forgot it
    stored: Any  # the state's object reference when it is large, else None
    timer_handle: object = None
    lookup: Lookup | None = None  # where its outcome is kept in the node cache
    span: AttemptSpan | NoSpan = NO_SPAN  # the attempt's span, on the driver (its context goes with the call)
    call: Call | None = None  # the call sent, when the driver's ctx is made of the same (no failure)


class RayPool(BoundedPool):
    """The in-flight calls of one vertex: a slot is a call sent (or being sent) to a partition."""

    def __init__(  # noqa: PLR0913 - the backend, the vertex, and where it runs
        self,
        backend: Host,
        *,
        spec: GraphSpec,
        vertex: VertexSpec,
        timer: Callable[[], Timer],
        group: Group,
        code: Any,
    ) -> None:
        """Prepare the pool (nothing runs until a task is submitted)."""
        super().__init__(spec, vertex, timer)
        if vertex.concurrency == ASYNC_CONCURRENCY:  # no bound asked for: keep calls in flight bounded
            self.bound = DEFAULT_CONCURRENCY  # (each holds its pickled state in Ray's object store)
        self.backend = backend
        self.group = group
        self._key = f"{id(vertex):x}:{vertex.name}"
        self._code = [code]  # nested in a list: Ray passes the reference, not the value
        self._flights: dict[int, _Flight | None] = {}  # token -> flight (None: being sent)

    def _used(self) -> int:
        return len(self._flights)

    def _is_running(self, token: int) -> bool:
        return self._flights.get(token) is not None

    def submit(self, order: Order) -> None:
        """Send `order` to a partition, or queue it while `concurrency` attempts are in flight."""
        with self._lock:
            if not self._admit(order):
                return
            self._flights[order.token] = None
        self._send(order)

    def abandon(self, token: int) -> bool:
        """Give up on attempt `token` (it overran its timeout): forget it, try to cancel it."""
        with self._lock:
            if self._flights.get(token) is None:
                return False
            flight = self._flights.pop(token)
        assert flight is not None  # noqa: S101 - checked under the lock above
        self.group.release(flight.partition)
        flight.span.close()  # given up: no outcome
        if self.backend.gate.enter():
            try:
                with contextlib.suppress(Exception):  # best effort: a running threaded call may not stop
                    self.backend.ray.cancel(flight.ref)
            finally:
                self.backend.gate.leave()
        self._next()
        return True

    def stop(self) -> list[Worker]:
        """Take no more work; answers still in flight go to coordinators that are gone."""
        with self._lock:
            self._close()
        return []

    def lost(self) -> None:
        """The backend let Ray go (closed, or Ray shut down under it): fail what is in flight or waiting.

        Their answers will never land (Ray drops them on `ray.shutdown()`), so each
        attempt ends now with the backend's error, not retried: the run fails, and
        resumes on a new backend. Called once the gate is shut: no call is under way.
        """
        with self._lock:
            flights = [flight for flight in self._flights.values() if flight is not None]
            for flight in flights:
                del self._flights[flight.order.token]
            waiting = list(self._queue)
            self._queue.clear()
        for flight in flights:
            self.group.release(flight.partition)
            if flight.timer_handle is not None:
                self.timer().cancel(flight.timer_handle)
            flight.span.close()
        for order in [flight.order for flight in flights] + waiting:
            error = self.backend.unavailable(order.task.vertex)
            report(order, Done(order.run_id, order.token, failed_result(order, error)))

    def landed(self, token: int, answer: Any) -> None:
        """A call's answer arrived (on the finisher thread): send the next order, report this one.

        Args:
            token: the attempt.
            answer: what the partition returned, or the Ray error the call ended with.
        """
        with self._lock:
            flight = self._flights.get(token)
            if flight is None or self._resent_with_code(flight, answer):  # abandoned, or sent again
                return
            del self._flights[token]
        self.group.release(flight.partition)
        if flight.timer_handle is not None:
            self.timer().cancel(flight.timer_handle)
        self._next()
        order = flight.order
        try:
            result = self._outcome(flight, answer)
        except Exception as exc:  # noqa: BLE001 - a failing router or check is the task's error
            result = failed_result(order, exc)
        flight.span.outcome(result)
        flight.span.close()
        done = done_of(order, result)
        if _died(result):  # report once the partition answers again, so a retry finds it up
            recovered = self.group.recover(flight.partition, self.backend.revive)
            recovered.add_done_callback(lambda _: report(order, done))
        else:
            report(order, done)

    def _next(self) -> None:
        """Send the next queued order, if a slot is free."""
        with self._lock:
            order = self._next_queued()
            if order is None:
                return
            self._flights[order.token] = None
        self._send(order)

    def _send(self, order: Order) -> None:
        """Prepare the attempt here and call its vertex on a partition (the slot is reserved)."""
        result = self._start(order)
        if result is not None:  # it ended before it left: cancelled, a failed merge, an unpicklable state
            with self._lock:
                self._flights.pop(order.token, None)
            report(order, Done(order.run_id, order.token, result))
            self._next()

    def _start(self, order: Order) -> VertexResult | None:
        if order.cancel.is_set():
            return failed_result(order, RunCancelledError("the run was cancelled"))
        task = order.task
        prepared = prepare(self.spec, task, order.attempt, order.env)
        if isinstance(prepared, VertexResult):
            return prepared
        lookup, reused = None, None
        if order.env.cache is not None and self.vertex.cache is not None:  # else no ctx is made for it
            ctx = _ctx(order, prepared, None)
            lookup, reused = cached(self.spec, prepared, ctx, prepared.given(self.spec), order.failure)
        if reused is not None:  # the node cache had its outcome: nothing leaves the driver
            return reused
        span = attempt_span(order, current=False)  # current in the worker while the vertex runs there
        gate = self.backend.gate
        if not gate.enter():  # the backend let Ray go: no call may be made
            span.close()
            return failed_result(order, self.backend.unavailable(task.vertex))
        try:
            state = self.backend.states.encode(prepared.node_in, task.vertex, prepared.given(self.spec))
            failure = portable_error(order.failure) if order.failure is not None else None
            stored = None if isinstance(state, bytes) else state  # a large state: an object reference
            inline = state if stored is None else None
            call = prepared.call(failure)
            blob = _pickled((self._key, call, inline, span.carrier()), task.vertex)
        except SerializationError as exc:
            span.close()
            return failed_result(order, exc)
        finally:
            gate.leave()
        if order.env.listen is not None:
            order.env.listen(
                TaskStarted(order.run_id, order.env.thread_id, task.step, task.id, task.vertex, order.attempt)
            )
        sent = _Flight(order, prepared, self.group.pick(), None, blob, stored, lookup=lookup, span=span)
        sent.call = call if failure is None else None  # the routers' ctx is made of it when the answer lands
        return self._dispatch(sent)

    def _dispatch(self, flight: _Flight) -> VertexResult | None:
        """Call `flight`'s vertex on the least-loaded partition of its group, unless Ray was let go."""
        gate, order, partition = self.backend.gate, flight.order, flight.partition
        if not gate.enter():
            self.group.release(partition)
            flight.span.close()
            return failed_result(order, self.backend.unavailable(order.task.vertex))
        try:
            known = self._key in partition.known
            flight.ref = self._call(partition, flight.blob, flight.stored, with_code=not known)
            if self.vertex.timeout is not None:
                flight.timer_handle = self._arm(order)
            with self._lock:
                self._flights[order.token] = flight
            self._watch(flight)
        finally:
            gate.leave()
        return None

    def _watch(self, flight: _Flight) -> None:
        """Have the finisher told when `flight`'s answer lands.

        Ray's own callback, not its `future()`: the same callback without a
        `concurrent.futures.Future` made and resolved per call. The callback holds
        the reference until it runs, as `future()` does.
        """
        finisher, token, ref = self.backend.finisher, flight.order.token, flight.ref
        on_completed = getattr(ref, "_on_completed", None)
        if on_completed is not None:
            on_completed(lambda answer, _ref=ref: finisher.tell((self, token, answer)))
        else:  # pragma: no cover - a Ray without it
            ref.future().add_done_callback(lambda done: finisher.tell((self, token, _answer_of(done))))

    def _resent_with_code(self, flight: _Flight, answer: Any) -> bool:
        """Send `flight` again with its vertex's code if its partition had forgotten it (it restarted)."""
        if isinstance(answer, BaseException) or answer != NEED_CODE:
            if not isinstance(answer, BaseException):
                flight.partition.known.add(self._key)
            return False
        flight.partition.known.discard(self._key)
        if not self.backend.gate.enter():  # Ray was let go: `_outcome` reports the backend's error
            return False
        try:
            flight.ref = self._call(flight.partition, flight.blob, flight.stored, with_code=True)
            self._watch(flight)
        finally:
            self.backend.gate.leave()
        return True

    def _call(self, partition: Partition, blob: bytes, stored: Any, *, with_code: bool) -> Any:
        """Call the partition with as few arguments as it needs (each costs Ray tens of microseconds)."""
        run = partition.actor.run
        if with_code:
            return run.remote(blob, stored, self._code)
        return run.remote(blob) if stored is None else run.remote(blob, stored)

    def _outcome(self, flight: _Flight, answer: Any) -> VertexResult:
        """The task's result from the partition's answer (or from how the call failed)."""
        order, prepared = flight.order, flight.prepared
        if isinstance(answer, bytes) and answer == NEED_CODE:  # not sent again: the backend let Ray go
            return _error(order, prepared, self.backend.unavailable(order.task.vertex), retryable=False)
        exceptions = self.backend.ray.exceptions
        try:
            called = cloudpickle.loads(_value(answer))
        except exceptions.RayTaskError as exc:  # the partition could not run the call at all
            cause = exc.cause if isinstance(exc.cause, BaseException) else exc
            hint = (
                " (the worker could not import the vertex's code: make its module importable on every "
                "node, e.g. RayBackend(init={'runtime_env': {'working_dir': '.'}}))"
                if isinstance(cause, (ImportError, AttributeError))
                else ""
            )
            what = f"{type(cause).__name__}: {cause}"
            msg = f"vertex {order.task.vertex!r} could not run in its Ray worker: {what}{hint}"
            return _error(order, prepared, ActorGraphError(msg), retryable=False)
        except exceptions.RayError as exc:  # the partition died, or its node did
            msg = (
                f"the Ray partition running vertex {order.task.vertex!r} died or became unreachable "
                f"({type(exc).__name__}); it is restarted, and the task is retried by the vertex's policy"
            )
            died = VertexActorDiedError(msg)
            died.__cause__ = exc
            return _error(order, prepared, died, retryable=True)
        ctx = _ctx(order, prepared, flight.call)
        for payload in called.emitted:  # the custom events the vertex emitted, in order
            ctx.emit(payload)
        return kept(prepared, flight.lookup, called, finish(self.spec, prepared, called, ctx))


def _ctx(order: Order, prepared: Prepared, call: Call | None) -> Context[Any]:
    """The `ctx` of the attempt on the driver (routers and the node cache read it), of `call` if given."""
    env = order.env
    emit = functools.partial(env.emit, order.task) if env.emit is not None else None
    return (call or prepared.call(order.failure)).context_for(emit)


def _value(answer: Any) -> Any:
    """The partition's answer, or the error its call ended with raised."""
    if isinstance(answer, BaseException):
        raise answer
    return answer


def _answer_of(done: Future[Any]) -> Any:
    """What a finished Ray future holds: its result, or its exception."""
    error = done.exception()
    return error if error is not None else done.result()


def _died(result: VertexResult) -> bool:
    error = result.error
    return error is not None and isinstance(error.exception, VertexActorDiedError)


def _error(order: Order, prepared: Prepared, exc: Exception, *, retryable: bool) -> VertexResult:
    at = prepared.at
    error = ErrorInfo.from_exception(exc, retryable=retryable)
    return VertexResult.failure(order.task, order.attempt, error, at.started, at.env.now())


def _pickled(value: Any, vertex: str) -> bytes:
    try:
        blob = dumps(value)
    except Exception as exc:
        msg = (
            f"the call of vertex {vertex!r} cannot be pickled for its Ray worker ({type(exc).__name__}: "
            f"{exc}); the run's context= and the vertex's value must be picklable on the Ray backend"
        )
        raise SerializationError(msg) from exc
    return blob
