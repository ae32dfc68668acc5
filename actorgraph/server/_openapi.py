"""The OpenAPI document (`/openapi.json`) and the docs page (`/docs`), made from the routes and their models.

The document lists every route with its request body's JSON schema (from the
pydantic models that validate it); the docs page is plain HTML made from the
same table (no script, no stylesheet from elsewhere: it works offline).
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import Any, Final

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

import actorgraph
from actorgraph.server._cron_models import CRON_BODIES
from actorgraph.server._models import (
    AssistantSearch,
    HistoryRequest,
    NamespaceSearch,
    RunCreate,
    StateCheckpoint,
    StateUpdate,
    StoreDelete,
    StorePut,
    StoreSearch,
    ThreadCount,
    ThreadCreate,
    ThreadPatch,
    ThreadSearch,
)

__all__ = ["docs_page", "openapi"]

_BODIES: Final[dict[tuple[str, str], type[BaseModel]]] = {
    ("POST", "/assistants/search"): AssistantSearch,
    ("POST", "/assistants/count"): AssistantSearch,
    ("POST", "/threads"): ThreadCreate,
    ("POST", "/threads/search"): ThreadSearch,
    ("POST", "/threads/count"): ThreadCount,
    ("PATCH", "/threads/{thread_id}"): ThreadPatch,
    ("POST", "/threads/{thread_id}/state"): StateUpdate,
    ("POST", "/threads/{thread_id}/state/checkpoint"): StateCheckpoint,
    ("POST", "/threads/{thread_id}/history"): HistoryRequest,
    ("POST", "/threads/{thread_id}/runs/stream"): RunCreate,
    ("POST", "/threads/{thread_id}/runs/wait"): RunCreate,
    ("POST", "/threads/{thread_id}/runs"): RunCreate,
    ("POST", "/runs/stream"): RunCreate,
    ("POST", "/runs/wait"): RunCreate,
    ("POST", "/runs"): RunCreate,
    ("PUT", "/store/items"): StorePut,
    ("DELETE", "/store/items"): StoreDelete,
    ("POST", "/store/items/search"): StoreSearch,
    ("POST", "/store/namespaces"): NamespaceSearch,
    **CRON_BODIES,
}
_STREAMS: Final = frozenset(p for (_, p) in _BODIES if p.endswith("/stream"))


def _summary(handler: Any) -> str:
    doc = (getattr(handler, "__doc__", None) or "").strip()
    return doc.splitlines()[0] if doc else getattr(handler, "__name__", "").replace("_", " ")


def openapi(routes: Iterable[tuple[str, str, Any]]) -> dict[str, Any]:
    """The OpenAPI 3.1 document of `routes` (method, path, handler)."""
    models = sorted(set(_BODIES.values()), key=lambda model: model.__name__)
    refs, schemas = models_json_schema(
        [(model, "validation") for model in models], ref_template="#/components/schemas/{model}"
    )
    paths: dict[str, dict[str, Any]] = {}
    for method, path, handler in routes:
        operation: dict[str, Any] = {"summary": _summary(handler), "responses": _responses(path)}
        names = [part[1:-1] for part in path.split("/") if part.startswith("{")]
        if names:
            operation["parameters"] = [
                {"name": n, "in": "path", "required": True, "schema": {"type": "string"}} for n in names
            ]
        model = _BODIES.get((method, path))
        if model is not None:
            schema = refs[(model, "validation")]
            operation["requestBody"] = {"required": True, "content": {"application/json": {"schema": schema}}}
        paths.setdefault(path, {})[method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {"title": "actorgraph server (the LangGraph Server API)", "version": actorgraph.__version__},
        "paths": paths,
        "components": {"schemas": schemas.get("$defs", {})},
    }


def _responses(path: str) -> dict[str, Any]:
    error = {
        "description": "refused",
        "content": {
            "application/json": {"schema": {"type": "object", "properties": {"detail": {"type": "string"}}}}
        },
    }
    ok: dict[str, Any] = {"description": "OK"}
    if path in _STREAMS:
        ok = {"description": "server-sent events", "content": {"text/event-stream": {}}}
    return {"200": ok, "404": error, "409": error, "422": error}


def docs_page(routes: Iterable[tuple[str, str, Any]]) -> str:
    """The docs page: every route, what it does, and where the OpenAPI document is."""
    rows = "".join(
        f"<tr><td>{html.escape(method)}</td><td><code>{html.escape(path)}</code></td>"
        f"<td>{html.escape(_summary(handler))}</td></tr>"
        for method, path, handler in routes
    )
    return (
        "<!doctype html><meta charset=utf-8><title>actorgraph server</title>"
        "<h1>actorgraph server</h1><p>The LangGraph Server API for the graphs it serves; "
        'the whole document: <a href="openapi.json">openapi.json</a>.</p>'
        f"<table><tr><th>method</th><th>path</th><th>what</th></tr>{rows}</table>"
    )
