"""The shape of stored records, checked before anything is built from them.

A record that decodes (valid msgpack, right key) but lacks a field or holds a
value of the wrong type is damaged or forged; it is refused here with
`SerializationError` naming the thread, the checkpoint and the first field
that is wrong, instead of surfacing later as a bare `KeyError` or `TypeError`.
Checking only looks at values: nothing is imported or called.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from actorgraph._model.errors import CheckpointError, SerializationError

__all__ = ["check_checkpoint", "check_write", "damaged", "format_of"]

Check = Callable[[Any, str], "str | None"]
"""`check(value, path)` is None when `value` has the shape, else what is wrong (naming `path`)."""

_STATUSES = ("ok", "error", "interrupt")


def _kind(value: object) -> str:
    return type(value).__name__


def _of(*types: type, what: str) -> Check:
    def check(value: Any, path: str) -> str | None:
        return None if type(value) in types else f"{path} should be {what}, found {_kind(value)}"

    return check


_STR = _of(str, what="a string")
_INT = _of(int, what="an integer")
_BOOL = _of(bool, what="a boolean")
_NUMBER = _of(int, float, what="a number")
_DICT = _of(dict, what="a mapping")


def _any(value: Any, path: str) -> str | None:  # noqa: ARG001 - every value fits
    return None


def _optional(check: Check) -> Check:
    return lambda value, path: None if value is None else check(value, path)


def _list_of(item: Check) -> Check:
    def check(value: Any, path: str) -> str | None:
        if type(value) is not list:
            return f"{path} should be a list, found {_kind(value)}"
        return next((p for i, v in enumerate(value) if (p := item(v, f"{path}[{i}]"))), None)

    return check


def _row(*items: Check) -> Check:
    """A list of exactly these items."""

    def check(value: Any, path: str) -> str | None:
        if type(value) is not list or len(value) != len(items):
            size = f"{len(value)} items" if type(value) is list else _kind(value)
            return f"{path} should be a list of {len(items)} items, found {size}"
        return next(
            (p for i, (c, v) in enumerate(zip(items, value, strict=True)) if (p := c(v, f"{path}[{i}]"))),
            None,
        )

    return check


def _names_to(item: Check) -> Check:
    def check(value: Any, path: str) -> str | None:
        if type(value) is not dict:
            return f"{path} should be a mapping, found {_kind(value)}"
        for key, v in value.items():
            problem = _STR(key, f"a key of {path}") or item(v, f"{path}[{key!r}]")
            if problem:
                return problem
        return None

    return check


def _fields(required: Mapping[str, Check], optional: Mapping[str, Check] | None = None) -> Check:
    def check(value: Any, path: str) -> str | None:
        if type(value) is not dict:
            return f"{path} should be a mapping, found {_kind(value)}"
        for name, field in required.items():
            if name not in value:
                return f"{path} has no {name!r}"
            problem = field(value[name], f"{path}[{name!r}]")
            if problem:
                return problem
        for name, field in (optional or {}).items():
            if name in value and (problem := field(value[name], f"{path}[{name!r}]")):
                return problem
        return None

    return check


def _status(value: Any, path: str) -> str | None:
    return None if value in _STATUSES and type(value) is str else f"{path} should be one of {_STATUSES}"


def _node_entry(value: Any, path: str) -> str | None:
    if type(value) is list and len(value) == 3 and value[2] == 1:  # noqa: PLR2004 - stored whole (format 1)
        value = value[:2]
    return _row(_list_of(_STR), _INT)(value, path)


_MESSAGE = _row(_STR, _STR, _STR, _BOOL, _INT, _STR)
_INTERRUPT = _optional(_row(_STR, _STR, _any, _STR, _STR))
_ERROR = _optional(_row(_STR, _STR, _STR, _BOOL))
_NODES = _names_to(_node_entry)
_POSITION = _fields(
    {
        "step": _INT,
        "inbox": _list_of(_MESSAGE),
        "joins": _names_to(_list_of(_MESSAGE)),
        "finished": _list_of(_MESSAGE),
        "values": _DICT,
    }
)
_CHECKPOINT = _fields(
    {"position": _POSITION, "nodes": _NODES},
    {"pauses": _list_of(_INTERRUPT), "origin": _STR, "owner": _STR},
)
_RESULT = _fields(
    {
        "task_id": _STR,
        "vertex": _STR,
        "status": _status,
        "node": _optional(_STR),
        "outbox": _list_of(_MESSAGE),
        "error": _ERROR,
        "interrupt": _INTERRUPT,
        "attempts": _INT,
        "inputs": _list_of(_MESSAGE),
        "value": _any,
        "resumes": _list_of(_any),
        "started_at": _NUMBER,
        "finished_at": _NUMBER,
    },
    {
        "handler": _BOOL,
        "nested": _list_of(_INTERRUPT),
        "handoff": _row(_any, _list_of(_STR)),
        "answers": _DICT,
        "cached": _BOOL,
    },
)
_WRITE = _fields({"result": _RESULT, "nodes": _NODES})


def damaged(what: str, problem: str) -> SerializationError:
    """The error of a stored record with the wrong shape."""
    return SerializationError(
        f"{what} is damaged: {problem}. It was not written by this actorgraph or was altered; "
        f"restore the store from a good copy, or resume from an older checkpoint"
    )


def format_of(record: Any, what: str, newest: int) -> int:
    """The format number of a decoded record, checked.

    Raises:
        SerializationError: the record is not a mapping with an integer format.
        CheckpointError: the format is newer than `newest` (written by a newer actorgraph).
    """
    if type(record) is not dict:
        raise damaged(what, f"it should be a mapping, found {_kind(record)}")
    found = record.get("format")
    if type(found) is not int or found < 1:
        raise damaged(what, f"its 'format' should be a positive integer, found {found!r}")
    if found > newest:
        raise CheckpointError(
            f"{what} is in format {found}, written by a newer actorgraph (this one reads format "
            f"{newest} at most); upgrade actorgraph to read it"
        )
    return found


def _references(record: Mapping[str, Any], messages: list[Any], what: str) -> None:
    known = record["nodes"]
    for m in messages:
        if m[1] not in known:
            raise damaged(what, f"a message refers to state version {m[1]!r}, which its lineage lacks")
    for entry in known.values():
        for parent in entry[0]:
            if parent not in known:
                raise damaged(what, f"its lineage refers to version {parent!r}, which it lacks")


def check_checkpoint(record: Mapping[str, Any], what: str) -> None:
    """Refuse a checkpoint record of the wrong shape (`what` names it in the error)."""
    problem = _CHECKPOINT(record, "the record")
    if problem:
        raise damaged(what, problem)
    pos = record["position"]
    joined = [m for ms in pos["joins"].values() for m in ms]
    _references(record, [*pos["inbox"], *joined, *pos["finished"]], what)


def check_write(record: Mapping[str, Any], what: str) -> None:
    """Refuse a task result record of the wrong shape (`what` names it in the error)."""
    problem = _WRITE(record, "the record")
    if problem:
        raise damaged(what, problem)
    result = record["result"]
    node = result["node"]
    if node is not None and node not in record["nodes"]:
        raise damaged(what, f"its result refers to state version {node!r}, which its lineage lacks")
    _references(record, [*result["outbox"], *result["inputs"]], what)
