"""The superstep algorithm: where a run stands, what runs next, and committing.

Pure functions over records: no threads, no clock, no I/O. The coordinator
calls them; the tests call them directly.

A run between supersteps is a `Position`: the messages delivered for the next
superstep (the inboxes), the states buffered at joins, the states that reached
END, and each vertex's private value. `plan` turns a position into tasks;
`commit` delivers a finished superstep's outboxes and gives the next position.

A deferred vertex (`add_vertex(..., defer=True)`) runs only when no other
vertex has a message: while one has, the deferred vertex's messages stay in the
inbox (`held`), carried over to the next position and checkpointed like any
message, so an aggregator after branches of uneven length runs once, at the end.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from actorgraph._engine.lineage import distinct, lowest_common_ancestors, merge_located
from actorgraph._engine.routing import route
from actorgraph._model.errors import ActorGraphError
from actorgraph._model.records import END, START, Message, Node, Position, SuperstepState, Task, task_order
from actorgraph._model.spec import GraphSpec, JoinSpec
from actorgraph.merge import Merge

__all__ = [
    "Position",
    "commit",
    "current_state",
    "deliver_all",
    "deliver_as",
    "final_state",
    "held",
    "initial",
    "next_vertices",
    "plan",
    "replace_state",
    "state_of",
    "status_of",
    "task_order",
    "waiting_joins",
]

_TRIM_EVERY = 32  # supersteps between attempts to forget lineage no merge can need


def initial(spec: GraphSpec, node: Node, *, goto: Any = ()) -> Position:
    """The position after the input is recorded (step 0): routed from START, or to `goto`.

    Raises:
        RoutingError: a router on START failed, or a target is unknown.
    """
    outbox = route(spec, START, node, step=0, task_id=START, node_id=node.id, goto=goto, static=not goto)
    return _deliver(spec, Position(0), outbox, step=0)


def _message_order(message: Message) -> tuple[int, tuple[str, int]]:
    return (message.step, task_order(message.sender) if message.sender != START else ("", -2))


def held(inbox: Sequence[Message], deferred: Collection[str]) -> tuple[Message, ...]:
    """The messages of `inbox` that wait: those of deferred vertices, while another vertex has one."""
    if not deferred:
        return ()
    waiting = tuple(m for m in inbox if m.target in deferred)
    return waiting if len(waiting) < len(inbox) else ()


def plan(pos: Position, deferred: Collection[str] = frozenset()) -> tuple[Task, ...]:
    """The tasks of superstep `pos.step + 1`, in task order.

    A vertex with plain messages runs once with all of them; every `Send`
    message is a task of its own (`vertex:index`, index in delivery order).
    The vertices in `deferred` (`GraphSpec.deferred`) run only when no other
    vertex has a message.
    """
    step = pos.step + 1
    inbox = pos.inbox
    if deferred and held(inbox, deferred):
        inbox = tuple(m for m in inbox if m.target not in deferred)
    if len(inbox) == 1:  # the common single-line case, without sorting
        m = inbox[0]
        task_id = f"{m.target}:0" if m.send else m.target
        return (Task(task_id, m.target, step, inbox, pos.values.get(m.target)),)
    plain: dict[str, list[Message]] = {}
    sends: dict[str, list[Message]] = {}
    for m in inbox:
        (sends if m.send else plain).setdefault(m.target, []).append(m)
    tasks = []
    for vertex in sorted(plain.keys() | sends.keys()):
        value = pos.values.get(vertex)
        inputs = plain.get(vertex)
        if inputs:
            if len(inputs) > 1:
                inputs.sort(key=_message_order)
            tasks.append(Task(vertex, vertex, step, tuple(inputs), value))
        for index, m in enumerate(sends.get(vertex, ())):
            tasks.append(Task(f"{vertex}:{index}", vertex, step, (m,), value))
    return tuple(tasks)


def next_vertices(spec: GraphSpec, pos: Position) -> tuple[str, ...]:
    """The vertices that run in the superstep after `pos`, by name (deferred ones wait their turn)."""
    waiting = {m.target for m in held(pos.inbox, spec.deferred)}
    return tuple(sorted({m.target for m in pos.inbox} - waiting))


def commit(spec: GraphSpec, pos: Position, superstep: SuperstepState) -> Position:
    """Deliver the outboxes of a superstep whose tasks all ended `ok`.

    Args:
        spec: the graph.
        pos: the position the superstep was planned from.
        superstep: every task's result, in task order.

    Returns:
        The position after `superstep.step`; the messages a deferred vertex was
        held back with come first in its inbox.
    """
    values = dict(pos.values)
    outbox: list[Message] = []
    for result in superstep.results.values():
        if result.status != "ok":
            msg = f"cannot commit superstep {superstep.step}: task {result.task_id!r} is {result.status}"
            raise ActorGraphError(msg)
        if result.value is not None or result.vertex in values:
            values[result.vertex] = result.value
        outbox.extend(result.outbox)
    base = Position(superstep.step, held(pos.inbox, spec.deferred), pos.joins, pos.finished, values)
    nxt = _deliver(spec, base, outbox, step=superstep.step)
    _trim(nxt)
    return nxt


def _deliver(spec: GraphSpec, pos: Position, outbox: Iterable[Message], *, step: int) -> Position:
    inbox: list[Message] = list(pos.inbox)
    finished = list(pos.finished)
    joins = {k: list(v) for k, v in pos.joins.items()}
    for m in outbox:
        if m.join:
            joins.setdefault(m.join, []).append(m)
        elif m.target == END:
            finished.append(m)
        else:
            inbox.append(m)
    for join in spec.joins:
        buffered = joins.get(join.id)
        if buffered and not _missing(join, buffered):
            inbox.extend(Message(m.target, m.node, m.sender, step=m.step) for m in buffered)
            del joins[join.id]
    return Position(
        step,
        tuple(inbox),
        {k: tuple(v) for k, v in joins.items() if v},
        tuple(finished),
        pos.values,
    )


def _missing(join: JoinSpec, buffered: Sequence[Message]) -> list[str]:
    delivered = {m.sender.partition(":")[0] for m in buffered}
    return [s for s in join.sources if s not in delivered]


def waiting_joins(spec: GraphSpec, pos: Position) -> list[tuple[JoinSpec, list[str]]]:
    """The joins holding states, with the sources they still wait for."""
    by_id = {j.id: j for j in spec.joins}
    return [(by_id[jid], _missing(by_id[jid], msgs)) for jid, msgs in pos.joins.items()]


def _trim(pos: Position) -> None:
    """Forget lineage that no future merge can need (keeps long runs small).

    Every future message descends from the live ones, so a version that is the
    single lowest common ancestor of everything live is the deepest base any
    later merge can ask for; its own history can go.
    """
    live = distinct(m.node for m in pos.messages())
    if not live:
        return
    if len(live) == 1:
        _cut(live[0])
    elif pos.step % _TRIM_EVERY == 0:
        bases = lowest_common_ancestors(live)
        if len(bases) == 1:
            _cut(bases[0])


def _cut(node: Node) -> None:
    if node.parents:
        object.__setattr__(node, "parents", ())  # frozen record; see Node's docstring


def replace_state(pos: Position, node: Node) -> Position:
    """`pos` with every live message carrying `node` instead (what `update_state` does).

    The targets stay: the vertices that were about to run still run, with the new state.
    """

    def swap(messages: Iterable[Message]) -> tuple[Message, ...]:
        return tuple(dataclasses.replace(m, node=node) for m in messages)

    return Position(
        pos.step,
        swap(pos.inbox),
        {k: swap(v) for k, v in pos.joins.items()},
        swap(pos.finished),
        pos.values,
    )


def deliver_as(spec: GraphSpec, pos: Position, vertex: str, node: Node) -> Position:
    """`pos` as if `vertex` had just produced `node` (what `update_state(as_vertex=...)` does).

    Messages waiting for `vertex` are consumed; its outbox is delivered.

    Raises:
        RoutingError: a router of `vertex` named an unknown target.
    """
    return deliver_all(spec, pos, [(vertex, node)])


def deliver_all(spec: GraphSpec, pos: Position, produced: Sequence[tuple[str, Node]]) -> Position:
    """`pos` as if each vertex had just produced its node, in one superstep (`bulk_update_state`).

    Messages waiting for any of the vertices are consumed; their outboxes are
    delivered together, so one vertex's message to another is not consumed.

    Raises:
        RoutingError: a router of one of the vertices named an unknown target.
    """
    vertices = {vertex for vertex, _ in produced}
    outbox = [
        message
        for vertex, node in produced
        for message in route(spec, vertex, node, step=pos.step, task_id=vertex, node_id=node.id)
    ]
    kept = Position(
        pos.step,
        tuple(m for m in pos.inbox if m.target not in vertices),
        pos.joins,
        pos.finished,
        pos.values,
    )
    delivered = _deliver(spec, kept, outbox, step=pos.step)
    return Position(pos.step, delivered.inbox, delivered.joins, delivered.finished, pos.values)


def status_of(pos: Position, superstep: SuperstepState | None, pauses: Sequence[Any] = ()) -> str:
    """A run's status at `pos` with `superstep` pending: error, interrupted, done or running.

    A subgraph's run whose superstep handed off to its parent (`Command(graph=PARENT)`) is done.
    """
    if superstep is not None:
        statuses = {r.status for r in superstep.results.values()}
        if "error" in statuses:
            return "error"
        if "interrupt" in statuses:
            return "interrupted"
        if any(r.handoff is not None for r in superstep.results.values()):
            return "done"
    if pauses:
        return "interrupted"
    return "done" if pos.done else "running"


def final_state(pos: Position, merge: Merge) -> Any:
    """The run's result: the merge of what reached END and what joins still hold."""
    messages = list(pos.finished)
    for buffered in pos.joins.values():
        messages.extend(buffered)
    if not messages:
        return None
    return merge_located([m.node for m in messages], [m.sender for m in messages], merge, pos.step)


def state_of(pos: Position, merge: Merge) -> Any:
    """The state a thread holds at `pos`: its result when the run is done, else its current state."""
    return final_state(pos, merge) if pos.done else current_state(pos, merge)


def current_state(pos: Position, merge: Merge) -> Any:
    """The run's state now: the merge of every live state (the final state when done).

    A `Send` state is its task's private input (it carries the per-item keys that
    only a reducer reconciles), so the state it was derived from stands for it.
    """
    if len(pos.inbox) == 1 and not pos.joins and not pos.finished and not pos.inbox[0].send:
        return pos.inbox[0].node.state  # a single line of vertices: the last output
    messages = pos.messages()
    if not messages:
        return None
    nodes = [m.node.parents[0] if m.send and m.node.parents else m.node for m in messages]
    return merge_located(nodes, [m.sender for m in messages], merge, pos.step)
