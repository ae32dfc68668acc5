"""The routes of the server itself (`/ok`, `/info`), of its assistants, and of the memory store."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

import actorgraph
from actorgraph._model.errors import ConfigError
from actorgraph.server._body import ApiError, json_body
from actorgraph.server._context import Json, server_of
from actorgraph.server._models import AssistantSearch, NamespaceSearch, StoreDelete, StorePut, StoreSearch

__all__ = ["ROUTES"]


async def ok(_request: Request) -> Response:
    return Json({"ok": True})


async def info(_request: Request) -> Response:
    return Json(
        {
            "version": actorgraph.__version__,
            "server": "actorgraph",
            "flags": {"assistants": True, "crons": True, "langsmith": False},
        }
    )


def _matches(assistant: dict[str, Any], body: AssistantSearch) -> bool:
    if body.graph_id is not None and assistant["graph_id"] != body.graph_id:
        return False
    if body.name is not None and body.name not in assistant["name"]:
        return False
    metadata = body.metadata or {}
    return all(assistant["metadata"].get(k) == v for k, v in metadata.items())


async def _found(request: Request) -> tuple[list[dict[str, Any]], AssistantSearch]:
    server = server_of(request)
    body = await json_body(request, AssistantSearch, server.limits)
    return [a for s in server.graphs if _matches(a := s.assistant(), body)], body


async def search(request: Request) -> Response:
    found, body = await _found(request)
    return Json(found[body.offset : body.offset + body.limit])


async def count(request: Request) -> Response:
    found, _ = await _found(request)
    return Json(len(found))


async def get(request: Request) -> Response:
    return Json(server_of(request).assistant(request.path_params["assistant_id"]).assistant())


async def graph(request: Request) -> Response:
    return Json(server_of(request).assistant(request.path_params["assistant_id"]).graph_json())


async def schemas(request: Request) -> Response:
    served = server_of(request).assistant(request.path_params["assistant_id"])
    return Json(await run_in_threadpool(served.schemas))


async def subgraphs(request: Request) -> Response:
    server_of(request).assistant(request.path_params["assistant_id"])
    return Json({})


# -- the memory store -------------------------------------------------------------------------------


def _item(item: Any) -> dict[str, Any]:
    shown = {
        "namespace": list(item.namespace),
        "key": item.key,
        "value": item.value,
        "created_at": item.created_at.isoformat(),
        "updated_at": item.updated_at.isoformat(),
    }
    if hasattr(item, "score"):
        shown["score"] = item.score
    return shown


async def _in_store(call: Any, *args: Any, **kwargs: Any) -> Any:
    """A store call; a refused argument (a label with ".", a filter it cannot read) is 422."""
    try:
        return await run_in_threadpool(call, *args, **kwargs)
    except ConfigError as exc:
        raise ApiError(422, str(exc)) from None


async def put_item(request: Request) -> Response:
    server = server_of(request)
    body = await json_body(request, StorePut, server.limits)
    await _in_store(server.store.put, tuple(body.namespace), body.key, body.value, ttl=body.ttl)
    return Response(status_code=204)


async def get_item(request: Request) -> Response:
    server = server_of(request)
    key, namespace = request.query_params.get("key"), request.query_params.get("namespace", "")
    if not key:
        raise ApiError(422, "key: give the item's key (?key=...&namespace=a.b)")
    labels = tuple(namespace.split(".")) if namespace else ()
    if not labels:
        raise ApiError(422, "namespace: give the item's namespace, its labels joined by '.' (?namespace=a.b)")
    found = await _in_store(server.store.get, labels, key)
    return Json(None if found is None else _item(found))


async def delete_item(request: Request) -> Response:
    server = server_of(request)
    body = await json_body(request, StoreDelete, server.limits)
    await _in_store(server.store.delete, tuple(body.namespace), body.key)
    return Response(status_code=204)


async def search_items(request: Request) -> Response:
    server = server_of(request)
    body = await json_body(request, StoreSearch, server.limits)
    found = await _in_store(
        server.store.search,
        tuple(body.namespace_prefix),
        query=body.query,
        filter=body.filter,
        limit=body.limit,
        offset=body.offset,
    )
    return Json({"items": [_item(i) for i in found]})


async def namespaces(request: Request) -> Response:
    server = server_of(request)
    body = await json_body(request, NamespaceSearch, server.limits)
    found = await _in_store(
        server.store.list_namespaces,
        prefix=tuple(body.prefix) if body.prefix else None,
        suffix=tuple(body.suffix) if body.suffix else None,
        max_depth=body.max_depth,
        limit=body.limit,
        offset=body.offset,
    )
    return Json({"namespaces": [list(n) for n in found]})


ROUTES: list[tuple[str, str, Any]] = [
    ("GET", "/ok", ok),
    ("GET", "/info", info),
    ("POST", "/assistants/search", search),
    ("POST", "/assistants/count", count),
    ("GET", "/assistants/{assistant_id}", get),
    ("GET", "/assistants/{assistant_id}/graph", graph),
    ("GET", "/assistants/{assistant_id}/schemas", schemas),
    ("GET", "/assistants/{assistant_id}/subgraphs", subgraphs),
    ("PUT", "/store/items", put_item),
    ("GET", "/store/items", get_item),
    ("DELETE", "/store/items", delete_item),
    ("POST", "/store/items/search", search_items),
    ("POST", "/store/namespaces", namespaces),
]
