"""Reading a request with bounds: its body, its JSON, its ids; every refusal a 4xx `{"detail": ...}`.

A body is read up to `Limits.body` bytes (413 past it, before the rest is
read), parsed as JSON (400 if it is not), walked once to bound its depth and the
size of its lists and objects (400), and only then validated by its model
(422, naming each field that is wrong). Nothing reaches a graph or a store
before all of that passed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import orjson
from pydantic import BaseModel, ValidationError
from starlette.requests import Request

from actorgraph.server._models import ID_PATTERN

__all__ = ["ApiError", "Limits", "check_id", "json_body", "query_int"]

M = TypeVar("M", bound=BaseModel)
_ID: Final = re.compile(ID_PATTERN)
_SHOWN: Final = 80


class ApiError(Exception):
    """A request the server refuses or cannot serve: answered with `status` and `{"detail": detail}`."""

    def __init__(self, status: int, detail: str) -> None:
        """Say how to answer: the HTTP status and what was wrong, for the client."""
        super().__init__(detail)
        self.status = status
        self.detail = detail


@dataclass(frozen=True, slots=True)
class Limits:
    """The bounds on what a request may hold.

    Attributes:
        body: bytes of a request body.
        depth: levels of nesting in its JSON.
        items: entries in any one JSON list or object.
    """

    body: int = 10 * 1024 * 1024
    depth: int = 64
    items: int = 100_000


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def check_id(value: str, what: str) -> str:
    """A thread or run id from a path, checked.

    Raises:
        ApiError: 422 when it is not one (letters, digits, `._:@-`, at most 128).
    """
    if _ID.fullmatch(value) is None:
        msg = f"{what} {_shown(value)} is not an id: give a UUID or up to 128 letters, digits and ._:@-"
        raise ApiError(422, msg)
    return value


async def _bounded(request: Request, limits: Limits) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limits.body:
        raise ApiError(413, f"the request body is larger than {limits.body} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limits.body:
            raise ApiError(413, f"the request body is larger than {limits.body} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _check_shape(value: Any, limits: Limits) -> None:
    """Refuse JSON nested deeper than `limits.depth`, or with a list or object larger than `limits.items`."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > limits.depth:
                raise ApiError(400, f"the JSON body is nested deeper than {limits.depth} levels")
            if len(item) > limits.items:
                raise ApiError(400, f"the JSON body has a list or object of more than {limits.items} entries")
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))


async def json_body(request: Request, model: type[M], limits: Limits, *, empty: bool = True) -> M:
    """The request's JSON body, bounded and validated by `model` (an empty body is `{}` when `empty`).

    Raises:
        ApiError: 413 too large, 400 not JSON or too deep, 422 not what `model` takes (naming the fields).
    """
    data = await _bounded(request, limits)
    if not data.strip():
        if not empty:
            raise ApiError(422, "the request needs a JSON body")
        data = b"{}"
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ApiError(400, f"the request body is not JSON: {exc}") from None
    _check_shape(value, limits)
    return validated(model, value)


def validated(model: type[M], value: Any) -> M:
    """`value` validated by `model`.

    Raises:
        ApiError: 422 naming every field that is wrong and why.
    """
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise ApiError(422, validation_detail(exc)) from None


def validation_detail(exc: ValidationError) -> str:
    """Pydantic's errors as one line per field: `stream_mode: Input should be 'values', ...`."""
    parts = []
    for error in exc.errors(include_url=False)[:10]:
        where = ".".join(str(p) for p in error["loc"]) or "body"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


def query_int(request: Request, name: str, default: int, low: int, high: int) -> int:
    """An integer query parameter within [low, high].

    Raises:
        ApiError: 422 naming the parameter.
    """
    given = request.query_params.get(name)
    if given is None:
        return default
    try:
        value = int(given)
    except ValueError:
        raise ApiError(422, f"{name}: {_shown(given)} is not an integer") from None
    if not low <= value <= high:
        raise ApiError(422, f"{name}: {value} is not between {low} and {high}")
    return value
