"""Building a run on its coordinator: read its thread, plan it with the engine, claim its answers, record it.

The facade (or a subgraph task's parent run) hands a `Launch` to a coordinator,
so the caller's thread never waits for a store. On the coordinator's thread,
`build_run` reads the thread's checkpoint (and the stored answers the engine
asks about), asks the engine for the run's plan (`plan_run`: pure), claims the
plan's new answers in the store (a compare-and-set: nothing runs with an answer
that lost), and makes the `Run` with its recorder. What it raises is the run's error.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import time
from typing import Any

from actorgraph._actors.live import claim_lost, note_claimed
from actorgraph._actors.messages import Launch, RunOrder
from actorgraph._actors.recorder import Recorder, encode_new_states
from actorgraph._actors.rewind import rewound
from actorgraph._actors.run import Run
from actorgraph._actors.setup import RunSetup
from actorgraph._engine.preparing import RunPlan, lookups, plan_run, plan_unrecorded
from actorgraph._engine.task import TaskEnv
from actorgraph._model.errors import ActorGraphError, AlreadyAnsweredError, ThreadNotFoundError
from actorgraph._model.records import UNSET, Interrupt
from actorgraph._model.runs import Claim, RunRequest
from actorgraph._model.spec import FACE_KEY, GraphSpec
from actorgraph.checkpoint._load import Loaded, answer_aad, claims_of, load
from actorgraph.checkpoint._protocol import AnswerRow, Checkpointer

__all__ = ["build_run", "default_answerer"]


def build_run(launch: Launch) -> Run:
    """The run `launch` asks for, ready to begin (reads and claims in the store; runs nothing).

    Raises:
        ActorGraphError: the input does not fit the thread, an answer lost its claim
            (`AlreadyAnsweredError`), or the store failed.
    """
    order, workers = launch.order, launch.workers
    request, store, prefix = order.request, order.store, f"{launch.run_id}/"
    if store is None or request.thread_id is None:
        if store is not None:
            msg = "this graph has a checkpointer, so a run needs a thread: pass thread_id=..."
            raise ActorGraphError(msg)
        given = order.fresh if order.fresh is not UNSET else order.input
        plan = plan_unrecorded(workers.spec, request, given, prefix)
        return Run(workers, _setup(launch, plan, _env(request, prefix), None), launch)
    thread_id = request.thread_id
    loaded, head = _read(store, thread_id, order)
    _label(store, thread_id, workers.spec, request, begun=loaded is None)
    earlier = _earlier(store, thread_id, *lookups(loaded, order.input))
    plan = plan_run(
        workers.spec,
        request,
        order.input,
        prefix,
        loaded,
        fresh=order.fresh,
        earlier=earlier,
        owner=order.owner,
    )
    if plan.claims and loaded is not None:
        _claim(store, request, loaded, plan.claims)
    recorder = Recorder(
        store,
        thread_id,
        request.durability,
        head=head,
        parent=loaded.checkpoint_id if loaded is not None else None,
        stored=loaded.stored if loaded is not None and plan.continues else (),
        source=plan.source,
        origin=loaded.origin if loaded is not None else None,
        owner=order.owner if order.owner is not None else (loaded.owner if loaded is not None else None),
    )
    env = _env(
        request,
        prefix,
        encode=lambda own, result: encode_new_states(store, thread_id, own, result),
        line=recorder.origin,  # names the run's questions
    )
    return Run(workers, _setup(launch, plan, env, recorder), launch)


def _env(request: RunRequest, prefix: str, **recorded: Any) -> TaskEnv:
    """The surroundings of the run's tasks (`recorded`: what a run with a checkpointer adds)."""
    return TaskEnv(
        node_prefix=prefix,
        thread_id=request.thread_id,
        context=request.context,
        nested=bool(request.namespace),
        store=request.store,
        cache=request.cache,
        live=request.live if "line" in recorded else None,  # an unrecorded question is never answered
        enclosing=request.enclosing,
        **recorded,
    )


def _read(store: Checkpointer, thread_id: str, order: RunOrder) -> tuple[Loaded | None, str | None]:
    """The checkpoint the run starts from (the head, the one replayed, or rewound to), and the thread's head.

    A stateful subgraph's new call starts from its state as of its parent's task (`_actors/rewind.py`).
    """
    request = order.request
    loaded = load(store, thread_id, request.checkpoint_id)
    if order.past is not None and loaded is not None and loaded.owner not in (None, order.owner):
        return rewound(store, loaded, order.past), loaded.checkpoint_id
    head = loaded.checkpoint_id if loaded is not None else None
    if request.checkpoint_id is not None:
        if loaded is None:
            msg = f"thread {thread_id!r} has no checkpoint {request.checkpoint_id!r}"
            raise ThreadNotFoundError(msg)
        current = store.get(thread_id)
        head = current.checkpoint_id if current is not None else None
    return loaded, head


def _label(store: Checkpointer, thread_id: str, spec: GraphSpec, request: RunRequest, *, begun: bool) -> None:
    """A thread an entrypoint's run begins says so in its labels, so readers without the graph show it so."""
    if begun and spec.face is not None and not request.namespace:  # a task call's: labelled by its caller
        store.set_metadata(thread_id, {FACE_KEY: spec.face.name})


def _earlier(store: Checkpointer, thread_id: str, ids: list[str], checkpoints: list[str]) -> dict[str, Claim]:
    """The stored answers the engine asked about: to `ids`, or at the first of `checkpoints` that has some."""
    rows: dict[str, AnswerRow] = {}
    if ids:
        rows = store.get_answers(thread_id, ids)
    for checkpoint_id in checkpoints:
        if rows:
            break
        rows = store.answers_at(thread_id, checkpoint_id)
    return claims_of(store, thread_id, rows.values())


def _claim(
    store: Checkpointer, request: RunRequest, loaded: Loaded, claims: tuple[tuple[Interrupt, Any], ...]
) -> None:
    """Claim the plan's answers in the store before anything runs with them (compare-and-set).

    Raises:
        AlreadyAnsweredError: another answer to one of the questions was claimed first.
        CheckpointError: the thread moved on since its questions were read.
    """
    thread_id, dumps, at = loaded.thread_id, store.serializer.dumps, time.time()
    rows = [
        AnswerRow(
            question.id,
            loaded.checkpoint_id,
            question.vertex,
            request.answered_by or default_answerer(),
            at,
            dumps(value, aad=answer_aad(thread_id, question.id)),
        )
        for question, value in claims
    ]
    ids = [row.interrupt_id for row in rows]
    note_claimed(ids)  # claimed here: a vertex waiting for them may go on
    try:
        won = store.claim_answers(thread_id, loaded.checkpoint_id, rows)
    except BaseException:
        claim_lost(ids)
        raise
    if won:
        claim_lost(ids)  # another answer won: the vertices waiting for these never go on
        first = won[0]
        raise AlreadyAnsweredError(
            thread_id, first.interrupt_id, first.vertex, first.answered_by, first.answered_at
        )


@functools.cache
def default_answerer() -> str:
    """`user@host (pid N)`: who answers when `answered_by=` is not given."""
    import getpass  # noqa: PLC0415 - asked once, on the first answer: a run that answers nothing needs it not
    import socket  # noqa: PLC0415

    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container)
        user = f"uid {os.getuid()}"
    return f"{user}@{socket.gethostname()} (pid {os.getpid()})"


def _setup(launch: Launch, plan: RunPlan, env: TaskEnv, recorder: Recorder | None) -> RunSetup:
    request = launch.order.request
    return RunSetup(
        run_id=launch.run_id,
        thread_id=request.thread_id,
        position=plan.position,
        env=dataclasses.replace(env, stop=plan.position.step + request.recursion_limit),  # remaining steps
        recursion_limit=request.recursion_limit,
        breakpoints=request.breakpoints,
        listeners=request.listeners,
        recorder=recorder,
        pending=plan.pending,
        answers=plan.answers,
        passed=plan.passed,
        record_start=plan.record_start,
        nested=bool(request.namespace),
        namespace=request.namespace,
    )
