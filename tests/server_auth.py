"""Auth objects for the API server's tests: users who own their threads, written once for either `Auth`.

`owners(Auth)` registers, on LangGraph's `langgraph_sdk.Auth` or actorgraph's
`actorgraph.server.Auth` (the same decorators), the handlers LangGraph's docs
give for "each user owns their threads": a bearer token names the user; every
resource gets an `owner` label on create and an owner filter on everything
else; the store is scoped by a first namespace label, the user's; the system
assistants are everyone's.
"""

from __future__ import annotations

from typing import Any

TOKENS = {"token-alice": "alice", "token-bob": "bob", "token-mallory": "mallory"}
"""Bearer token -> user."""


def bearer(user: str) -> dict[str, str]:
    """The headers a client of `user` sends."""
    token = next(t for t, u in TOKENS.items() if u == user)
    return {"Authorization": f"Bearer {token}"}


def owners(auth_class: Any) -> Any:
    """An `Auth` of `auth_class` whose users own their threads, runs and store items."""
    auth = auth_class()

    @auth.authenticate
    async def authenticate(authorization: str | None) -> dict[str, Any]:
        scheme, _, token = (authorization or "").partition(" ")
        if token == "token-boom":  # noqa: S105 - a test token
            msg = "the key server is down"
            raise RuntimeError(msg)
        if scheme.lower() != "bearer" or token not in TOKENS:
            raise auth_class.exceptions.HTTPException(status_code=401, detail="unknown token")
        return {"identity": TOKENS[token], "permissions": ["threads:write"]}

    @auth.on
    async def owner_only(ctx: Any, value: dict[str, Any]) -> dict[str, Any]:
        if ctx.user.identity == "mallory" and ctx.action == "delete":
            raise auth_class.exceptions.HTTPException(status_code=403, detail="mallory may not delete")
        if ctx.user.identity == "mallory" and ctx.action == "update":
            msg = "a bug in the handler"
            raise KeyError(msg)
        filters = {"owner": ctx.user.identity}
        value.setdefault("metadata", {}).update(filters)
        return filters

    @auth.on.store
    async def own_namespace(ctx: Any, value: dict[str, Any]) -> None:
        namespace = tuple(value.get("namespace") or ())
        value["namespace"] = (ctx.user.identity, *namespace)

    @auth.on.assistants
    async def assistants_are_everyones(ctx: Any, value: dict[str, Any]) -> bool:
        return True

    return auth


def deny_all(auth_class: Any) -> Any:
    """An `Auth` of `auth_class` that knows everyone and lets no one do anything."""
    auth = auth_class()

    @auth.authenticate
    async def authenticate(authorization: str | None) -> str:
        return "anyone"

    @auth.on
    async def nothing(ctx: Any, value: Any) -> bool:
        return False

    return auth
