"""Routing: turning a vertex's new state into the messages of its outbox.

Pure: reads the graph spec, calls the user's routers, returns `Message`s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from actorgraph._engine.managed import managed_view
from actorgraph._model.errors import InvalidUpdateError, RoutingError
from actorgraph._model.records import END, START, Message, Node, Send
from actorgraph._model.spec import GraphSpec, RouterSpec

__all__ = ["route"]


def route(  # noqa: PLR0913 - every argument is a different part of the routing decision
    spec: GraphSpec,
    source: str,
    node: Node,
    *,
    step: int,
    task_id: str,
    node_id: str,
    goto: Any = (),
    ctx: Any = None,
    static: bool = True,
) -> tuple[Message, ...]:
    """The outbox of `source` after it produced `node`.

    Args:
        spec: the graph.
        source: the vertex (or START) that produced the state.
        node: the new state's lineage version.
        step: the superstep the messages are sent in.
        task_id: the sending task.
        node_id: the id prefix for the versions of `Send` states.
        goto: targets from `Command(goto=...)`.
        ctx: the task's `Context`, for routers that take it.
        static: False to send only to `goto`, ignoring the source's edges and
            routers (a run started with `Command(goto=...)`).

    Returns:
        The messages, in order: plain edges, joins, routers, goto; a state no way
        out sends (no `Send` in a router's list, say) goes to END, to count in the result.

    Raises:
        RoutingError: a router raised, returned None or named an unknown target, a
            goto left the vertex's destinations, or a `Send` gave a whole-state worker a partial state.
    """
    out: list[Message] = []
    targets: list[str | Send] = []
    if static:
        out.extend(Message(t, node, task_id, step=step) for t in spec.edges.get(source, ()))
        joins = spec.joins_from.get(source, ())
        out.extend(Message(j.target, node, task_id, step=step, join=j.id) for j in joins)
        targets.extend(_router_answers(spec, source, node.state, ctx))
    if goto:
        targets.extend(_goto_targets(spec, source, goto))
    for send in (t for t in targets if isinstance(t, Send)):
        _check_payload(spec, source, node.state, send)
    out.extend(_to_targets(node, targets, step, task_id, node_id))
    if not out:
        out.append(Message(END, node, task_id, step=step))
    return tuple(out)


def _to_targets(
    node: Node, targets: Sequence[str | Send], step: int, task_id: str, node_id: str
) -> list[Message]:
    """The messages to routers' and goto's targets; each `Send` makes a new version (`node_id>n`)."""
    out = []
    sends = 0
    for target in targets:
        if isinstance(target, Send):
            child = Node.child(f"{node_id}>{sends}", target.state, node)
            out.append(Message(target.vertex, child, task_id, send=True, step=step))
            sends += 1
        else:
            out.append(Message(target, node, task_id, step=step))
    return out


def _router_answers(spec: GraphSpec, source: str, state: Any, ctx: Any) -> list[str | Send]:
    """The targets the routers of `source` answer for `state` (its managed keys filled for them)."""
    routed = managed_view(spec, state, getattr(ctx, "remaining_steps", None))
    return [t for r in spec.routers.get(source, ()) for t in _router_targets(spec, r, _ask(r, routed, ctx))]


def _who(router: RouterSpec) -> str:
    return "the router of START" if router.source == START else f"the router of {router.source!r}"


def _ask(router: RouterSpec, state: Any, ctx: Any) -> Any:
    """The router's answer; whatever it raises becomes a `RoutingError` naming it (never retried)."""
    try:
        answer = router.fn(state, ctx) if router.takes_ctx else router.fn(state)
    except Exception as exc:
        msg = f"{_who(router)} raised {type(exc).__name__}: {exc}"
        raise RoutingError(msg) from exc
    if answer is None:
        msg = (
            f"{_who(router)} returned None; return END to end this branch, or a vertex name, "
            "a path_map key, a Send, or a list of them"
        )
        raise RoutingError(msg)
    return answer


def _as_list(answer: Any) -> Sequence[Any]:
    if isinstance(answer, (str, Send)):
        return (answer,)
    if isinstance(answer, (list, tuple)):
        return answer
    return (answer,)


def _router_targets(spec: GraphSpec, router: RouterSpec, answer: Any) -> list[str | Send]:
    out: list[str | Send] = []
    for item in _as_list(answer):
        if isinstance(item, Send):
            out.append(_checked_send(spec, item, _who(router)))
            continue
        if router.path_map is not None:
            try:
                target = router.path_map[item]
            except (KeyError, TypeError):
                keys = ", ".join(repr(k) for k in router.path_map)
                msg = (
                    f"{_who(router)} returned {item!r}, which is not a key "
                    f"of its path_map ({keys}); return one of those keys"
                )
                raise RoutingError(msg) from None
        else:
            target = item
        out.append(_checked_target(spec, target, _who(router)))
    return out


def _goto_targets(spec: GraphSpec, source: str, goto: Any) -> list[str | Send]:
    vertex = spec.vertices.get(source)
    allowed = vertex.destinations if vertex is not None else None
    out: list[str | Send] = []
    for item in _as_list(goto):
        name = item.vertex if isinstance(item, Send) else item
        if allowed is not None and name not in allowed:
            msg = (
                f"vertex {source!r} returned Command(goto={name!r}), but its destinations "
                f"are {list(allowed)}; add {name!r} to add_vertex(..., destinations=...)"
            )
            raise RoutingError(msg)
        if isinstance(item, Send):
            out.append(_checked_send(spec, item, f"Command(goto=...) of {source!r}"))
        else:
            out.append(_checked_target(spec, item, f"Command(goto=...) of {source!r}"))
    return out


def _checked_target(spec: GraphSpec, target: Any, who: str) -> str:
    if isinstance(target, str) and (target == END or target in spec.vertices):
        return target
    if target == START:
        msg = f"{who} routed to START; route to a vertex or END"
        raise RoutingError(msg)
    known = ", ".join(sorted(spec.vertices))
    msg = f"{who} returned {target!r}, which is not a vertex of the graph (vertices: {known}; or END)"
    raise RoutingError(msg)


def _check_payload(spec: GraphSpec, source: str, state: Any, send: Send) -> None:
    """A whole-state worker's payload must be a state: the worker's output replaces the state.

    Whether the worker returns whole states by default or was declared
    `returns="state"` (it may then delete keys on purpose, by what it returns):
    the keys a payload lacks were dropped by the sender, not by the worker, so
    the router refuses it before the worker runs. An update-returning worker
    takes any payload as its own input (its update lands on the state the
    `Send` was made from): it is not checked.

    Raises:
        RoutingError: naming the sender and the worker, and both ways to fix it.
    """
    worker = spec.vertices[send.vertex]
    if worker.returns != "state" or worker.flow is not None or worker.child is not None:
        return
    problem = _not_a_state(spec, state, send.state)
    if problem:
        sender = "START's router" if source == START else f"vertex {source!r}"
        msg = (
            f"{sender} sent Send({send.vertex!r}, ...) a payload that is not a whole state ({problem}); "
            f"vertex {send.vertex!r} returns whole states, so its output would replace the state and "
            f"lose the rest. Declare add_vertex({send.vertex!r}, ..., returns='update') to give it the "
            "payload as its own input and apply what it returns to the state (LangGraph's map-reduce), "
            "or send a whole state ({**state, ...})."
        )
        raise RoutingError(msg)


def _not_a_state(spec: GraphSpec, state: Any, payload: Any) -> str:
    """What keeps `payload` from being a whole state beside `state`, or ""."""
    if spec.schema is not None:
        try:
            spec.schema.check(payload, "the payload")
        except InvalidUpdateError as exc:
            return str(exc).removeprefix("the payload made a state that does not fit ")
        return ""
    if not isinstance(state, Mapping):
        return ""
    if not isinstance(payload, Mapping):
        return f"it is a {type(payload).__name__}, not a mapping like the state"
    missing = [k for k in state if k not in payload]
    listed = 10
    return f"it lacks the state's key(s) {missing[:listed]}" if missing else ""


def _checked_send(spec: GraphSpec, send: Send, who: str) -> Send:
    if send.vertex not in spec.vertices:
        known = ", ".join(sorted(spec.vertices))
        msg = f"{who} sent Send({send.vertex!r}, ...) to an unknown vertex (vertices: {known})"
        raise RoutingError(msg)
    return send
