"""What a run of the API runs: its input (or `Command`) and the facade's run keywords, from its request.

The run itself is a row of the run queue (`_queued.py`), run by a `Runner`
(`_runner.py`) in whichever process takes it.
"""

from __future__ import annotations

import uuid
from typing import Any, Final

from actorgraph import Command
from actorgraph.server._body import ApiError
from actorgraph.server._graphs import Served
from actorgraph.server._models import RunCreate

__all__ = ["new_id", "run_input", "run_keywords"]

_DURABILITY: Final = {"sync": "sync", "async": "step", "exit": "exit"}


def new_id() -> str:
    """A new UUID for a thread or a run (time-ordered enough for logs: version 4 is enough for ids)."""
    return str(uuid.uuid4())


def run_input(body: RunCreate) -> Any:
    """The run's input: the body's `input`, or its `command` as a `Command` (answers, an update, a goto).

    Raises:
        ApiError: 422 when both are given.
    """
    command = body.command
    if command is None:
        return body.input  # an entrypoint's graph takes it as its function's argument (its face)
    if body.input is not None:
        raise ApiError(422, "input and command: give one of them (command resumes or steers the thread)")
    fields = command.model_fields_set
    options: dict[str, Any] = {}
    if "resume" in fields:
        options["resume"] = command.resume
    if command.update is not None:
        options["update"] = command.update
    if command.goto is not None:
        options["goto"] = command.goto
    return Command(**options)


def run_keywords(served: Served, body: RunCreate, thread_id: str) -> dict[str, Any]:
    """The facade's run keywords for the request's options.

    Raises:
        ApiError: 422 for a breakpoint that names no vertex, or a recursion limit that is not one.
    """
    config = body.config or {}
    configurable = config.get("configurable") if isinstance(config.get("configurable"), dict) else None
    keywords: dict[str, Any] = {
        "thread_id": thread_id,
        "answered_by": f"actorgraph server (thread {thread_id})",
    }
    context = body.context if body.context is not None else configurable
    if context is not None:
        keywords["context"] = context
    limit = config.get("recursion_limit")
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ApiError(422, f"config.recursion_limit: {limit!r:.40} is not a positive integer")
        keywords["recursion_limit"] = limit
    checkpoint_id = body.checkpoint_id or (body.checkpoint.checkpoint_id if body.checkpoint else None)
    if checkpoint_id is not None:
        keywords["checkpoint_id"] = checkpoint_id
    if body.durability is not None:
        keywords["durability"] = _DURABILITY[body.durability]
    for name in ("interrupt_before", "interrupt_after"):
        value = getattr(body, name)
        if value is not None:
            keywords[name] = _breakpoints(served, name, value)
    if body.input is not None:
        keywords["discard_pending"] = (
            True  # new input on a paused or failed thread starts over, as LangGraph's
        )
    return keywords


def _breakpoints(served: Served, name: str, value: Any) -> Any:
    if value == "*":
        return "*"
    unknown = [v for v in value if v != "*" and "/" not in v and v not in served.app.spec.vertices]
    if unknown:
        vertices = ", ".join(served.app.spec.vertices)
        raise ApiError(
            422, f"{name}: {', '.join(map(repr, unknown))} not vertices of graph {served.name!r} ({vertices})"
        )
    return list(value)
