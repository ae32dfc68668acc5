"""Checks of the options a graph and its vertices are given, each where it is given."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from actorgraph._errors import GraphValidationError
from actorgraph._policy import RetryPolicy
from actorgraph._types import END, START

__all__ = ["check_name", "policies_of", "resources_of"]


def check_name(name: Any) -> None:
    """Refuse a vertex name that is empty, reserved, or holds a character the engine uses."""
    if not isinstance(name, str) or not name:
        msg = f"a vertex name must be a non-empty string, got {name!r}"
        raise GraphValidationError(msg)
    if name in (START, END):
        msg = f"{name!r} is reserved (START / END); choose another vertex name"
        raise GraphValidationError(msg)
    for mark, use in ((":", "task ids"), ("|", "subgraph namespaces"), ("/", "paths into subgraphs")):
        if mark in name:
            msg = f"vertex name {name!r} contains {mark!r}, which {use} use; choose another name"
            raise GraphValidationError(msg)


def resources_of(name: str, resources: Any) -> dict[str, float] | None:
    """`add_vertex(resources=)` checked: names to non-negative amounts."""
    if resources is None:
        return None
    if not isinstance(resources, Mapping):
        msg = f"vertex {name!r}: resources must be a mapping such as {{'num_cpus': 1}}, got {resources!r}"
        raise GraphValidationError(msg)
    checked: dict[str, float] = {}
    for key, amount in resources.items():
        if not isinstance(key, str) or not key:
            msg = f"vertex {name!r}: resource names must be non-empty strings, got {key!r}"
            raise GraphValidationError(msg)
        if isinstance(amount, bool) or not isinstance(amount, (int, float)) or not amount >= 0:
            msg = f"vertex {name!r}: resource {key!r} must be a number >= 0, got {amount!r}"
            raise GraphValidationError(msg)
        checked[key] = float(amount)
    return checked


def policies_of(retry: RetryPolicy | Sequence[RetryPolicy] | None, what: str) -> tuple[RetryPolicy, ...]:
    """`retry=` as a tuple of policies (none for None)."""
    if retry is None:
        return ()
    if isinstance(retry, RetryPolicy):
        policies: tuple[Any, ...] = (retry,)
    elif isinstance(retry, (list, tuple)):
        policies = tuple(retry)
    else:
        policies = (retry,)
    if not all(isinstance(p, RetryPolicy) for p in policies):
        msg = f"{what} must be a RetryPolicy or a list of them, got {retry!r}"
        raise GraphValidationError(msg)
    return policies
