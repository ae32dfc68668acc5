"""The routes of the server itself (`/ok`, `/info`), of its assistants, and of the memory store."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

import actorgraph
from actorgraph._model.errors import ConfigError
from actorgraph.server._access import Access, allowed
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
    value = {
        "graph_id": body.graph_id,
        "metadata": body.metadata or {},
        "limit": body.limit,
        "offset": body.offset,
    }
    where = (await allowed(request, "assistants", "search", value)).where
    found = [a for s in server.graphs if _matches(a := s.assistant(), body)]
    return [a for a in found if where is None or where.matches(a["metadata"])], body


async def search(request: Request) -> Response:
    found, body = await _found(request)
    return Json(found[body.offset : body.offset + body.limit])


async def count(request: Request) -> Response:
    found, _ = await _found(request)
    return Json(len(found))


async def _assistant(request: Request) -> Any:
    """The served graph of the path's assistant, if the request's user may read it (404 when not)."""
    assistant_id = request.path_params["assistant_id"]
    access = await allowed(request, "assistants", "read", {"assistant_id": assistant_id})
    return server_of(request).assistant(assistant_id, access)


async def get(request: Request) -> Response:
    return Json((await _assistant(request)).assistant())


async def graph(request: Request) -> Response:
    return Json((await _assistant(request)).graph_json())


async def schemas(request: Request) -> Response:
    served = await _assistant(request)
    return Json(await run_in_threadpool(served.schemas))


async def subgraphs(request: Request) -> Response:
    await _assistant(request)
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


async def _store(request: Request, action: str, value: dict[str, Any]) -> Access:
    """What the request's user may do on the store: `@auth.on.store` handlers may rewrite `namespace`."""
    return await allowed(request, "store", action, value)


async def put_item(request: Request) -> Response:
    server = server_of(request)
    body = await json_body(request, StorePut, server.limits)
    value = {"namespace": tuple(body.namespace), "key": body.key, "value": body.value, "index": body.index}
    access = await _store(request, "put", {**value, "ttl": body.ttl})
    await _in_store(server.store.put, access.namespace() or (), body.key, body.value, ttl=body.ttl)
    return Response(status_code=204)


async def get_item(request: Request) -> Response:
    server = server_of(request)
    key, namespace = request.query_params.get("key"), request.query_params.get("namespace", "")
    if not key:
        raise ApiError(422, "key: give the item's key (?key=...&namespace=a.b)")
    labels = tuple(namespace.split(".")) if namespace else ()
    if not labels:
        raise ApiError(422, "namespace: give the item's namespace, its labels joined by '.' (?namespace=a.b)")
    access = await _store(request, "get", {"namespace": labels, "key": key})
    found = await _in_store(server.store.get, access.namespace() or (), key)
    return Json(None if found is None else _item(found))


async def delete_item(request: Request) -> Response:
    server = server_of(request)
    body = await json_body(request, StoreDelete, server.limits)
    access = await _store(request, "delete", {"namespace": tuple(body.namespace), "key": body.key})
    await _in_store(server.store.delete, access.namespace() or (), body.key)
    return Response(status_code=204)


async def search_items(request: Request) -> Response:
    server = server_of(request)
    body = await json_body(request, StoreSearch, server.limits)
    value = {"namespace": tuple(body.namespace_prefix), "filter": body.filter, "limit": body.limit}
    access = await _store(request, "search", {**value, "offset": body.offset, "query": body.query})
    wanted = access.items(body.filter)
    if wanted is None:
        return Json({"items": []})
    found = await _in_store(
        server.store.search,
        access.namespace() or (),
        query=body.query,
        filter=wanted or None,
        limit=body.limit,
        offset=body.offset,
    )
    return Json({"items": [_item(i) for i in found]})


async def namespaces(request: Request) -> Response:
    server = server_of(request)
    body = await json_body(request, NamespaceSearch, server.limits)
    value = {"namespace": tuple(body.prefix) if body.prefix else None, "max_depth": body.max_depth}
    value |= {
        "suffix": tuple(body.suffix) if body.suffix else None,
        "limit": body.limit,
        "offset": body.offset,
    }
    access = await _store(request, "list_namespaces", value)
    found = await _in_store(
        server.store.list_namespaces,
        prefix=access.namespace(),
        suffix=access.namespace("suffix"),
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
