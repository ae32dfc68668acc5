"""The request bodies the API takes, as pydantic models: every field typed and bounded.

They follow what `langgraph-sdk` sends (where LangGraph's OpenAPI document and
the client disagree, the client wins). Fields the server has nothing to do with
(`feedback_keys`, `langsmith_tracer`, ...) are accepted and ignored,
so that a newer client still works; anything of the wrong type or out of range
is refused with 422, naming the field. The OpenAPI document is made from them.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from actorgraph.server._webhooks import URL_LONGEST

__all__ = [
    "ID",
    "STREAM_MODES",
    "AssistantSearch",
    "CommandBody",
    "HistoryRequest",
    "NamespaceSearch",
    "RunCreate",
    "StateCheckpoint",
    "StateUpdate",
    "StoreDelete",
    "StorePut",
    "StoreSearch",
    "ThreadCount",
    "ThreadCreate",
    "ThreadPatch",
    "ThreadSearch",
    "without_nul",
]

ID_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$"
"""Thread and run ids: UUIDs as the clients make them, or names such as `notes-1` (no `|`, no spaces)."""

ID = Annotated[str, StringConstraints(pattern=ID_PATTERN)]
Name = Annotated[str, StringConstraints(min_length=1, max_length=200)]
Label = Annotated[str, StringConstraints(min_length=1, max_length=200)]
Namespace = Annotated[list[Label], Field(max_length=20)]
Limit = Annotated[int, Field(ge=1, le=1000)]
Offset = Annotated[int, Field(ge=0, le=1_000_000)]
Vertices = Literal["*"] | Annotated[list[Name], Field(max_length=200)]


def without_nul(value: dict[str, Any]) -> dict[str, Any]:
    """Stored metadata is JSON that PostgreSQL's `jsonb` reads (auth filters query it): no NUL character."""
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str) and "\x00" in item:
            msg = "holds a NUL character (\\u0000), which the store cannot search; leave it out"
            raise ValueError(msg)
        if isinstance(item, dict):
            stack.extend([*item.keys(), *item.values()])
        elif isinstance(item, list):
            stack.extend(item)
    return value


Metadata = Annotated[dict[str, Any], AfterValidator(without_nul)]
"""The metadata of a thread or a run, as stored (JSON objects with no NUL character)."""

STREAM_MODES: Final = (
    "values",
    "updates",
    "messages-tuple",
    "messages",
    "custom",
    "debug",
    "events",
    "tasks",
    "checkpoints",
)
StreamMode = Literal[
    "values", "updates", "messages-tuple", "messages", "custom", "debug", "events", "tasks", "checkpoints"
]


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class CheckpointRef(_Body):
    """A checkpoint as the clients name it: `{"checkpoint_id": ...}` (and the thread, the namespace)."""

    checkpoint_id: Name | None = None
    checkpoint_ns: Annotated[str, StringConstraints(max_length=500)] | None = None
    thread_id: ID | None = None


class CommandBody(_Body):
    """`command`: answers (`resume`: a value, or `{interrupt_id: value}`), an `update`, a `goto`."""

    resume: Any = None
    update: Any = None
    goto: Name | Annotated[list[Name], Field(max_length=100)] | None = None


class RunCreate(_Body):
    """A run: `POST /threads/{id}/runs/stream`, `/runs/wait`, `/runs`, and their stateless forms."""

    assistant_id: Name
    input: Any = None
    command: CommandBody | None = None
    stream_mode: StreamMode | Annotated[list[StreamMode], Field(max_length=len(STREAM_MODES))] = "values"
    stream_subgraphs: bool = False
    stream_resumable: bool = False
    metadata: Metadata | None = None
    config: dict[str, Any] | None = None
    context: Any = None
    checkpoint: CheckpointRef | None = None
    checkpoint_id: Name | None = None
    checkpoint_during: bool | None = None
    interrupt_before: Vertices | None = None
    interrupt_after: Vertices | None = None
    multitask_strategy: Literal["reject", "enqueue", "interrupt", "rollback"] = "enqueue"
    if_not_exists: Literal["create", "reject"] = "reject"
    on_disconnect: Literal["cancel", "continue"] = "continue"
    on_completion: Literal["delete", "keep"] = "delete"
    after_seconds: Annotated[float, Field(ge=0, le=86400)] | None = None
    durability: Literal["sync", "async", "exit"] | None = None
    webhook: Annotated[str, StringConstraints(min_length=1, max_length=URL_LONGEST)] | None = None

    def modes(self) -> tuple[str, ...]:
        """The stream modes asked for, each once, in order."""
        given = [self.stream_mode] if isinstance(self.stream_mode, str) else self.stream_mode
        return tuple(dict.fromkeys(given)) or ("values",)


class ThreadCreate(_Body):
    """`POST /threads`: an id (or one is made), metadata, what to do when it exists, first supersteps."""

    thread_id: ID | None = None
    metadata: Metadata | None = None
    if_exists: Literal["raise", "do_nothing"] = "raise"
    supersteps: Annotated[list[dict[str, Any]], Field(max_length=100)] | None = None
    ttl: Any = None


class ThreadPatch(_Body):
    """`PATCH /threads/{id}`: metadata merged into the thread's."""

    metadata: Metadata = Field(default_factory=dict)
    ttl: Any = None


Status = Literal["idle", "busy", "interrupted", "error"]


class ThreadSearch(_Body):
    """`POST /threads/search`."""

    metadata: dict[str, Any] | None = None
    values: dict[str, Any] | None = None
    ids: Annotated[list[ID], Field(max_length=1000)] | None = None
    status: Status | None = None
    limit: Limit = 10
    offset: Offset = 0
    sort_by: Literal["thread_id", "status", "created_at", "updated_at"] = "created_at"
    sort_order: Literal["asc", "desc"] = "desc"
    select: Any = None
    extract: Any = None


class ThreadCount(_Body):
    """`POST /threads/count`."""

    metadata: dict[str, Any] | None = None
    values: dict[str, Any] | None = None
    status: Status | None = None


class StateUpdate(_Body):
    """`POST /threads/{id}/state`: an update, applied as if `as_node` had returned it."""

    values: Any = None
    as_node: Name | None = None
    checkpoint: CheckpointRef | None = None
    checkpoint_id: Name | None = None


class StateCheckpoint(_Body):
    """`POST /threads/{id}/state/checkpoint`: the state at a checkpoint."""

    checkpoint: CheckpointRef
    subgraphs: bool = False


class HistoryRequest(_Body):
    """`POST /threads/{id}/history`: newest first, at most `limit`, older than `before`."""

    limit: Limit = 10
    before: Name | CheckpointRef | None = None
    metadata: dict[str, Any] | None = None
    checkpoint: CheckpointRef | None = None


class AssistantSearch(_Body):
    """`POST /assistants/search` and `/assistants/count`."""

    metadata: dict[str, Any] | None = None
    graph_id: Name | None = None
    name: Name | None = None
    limit: Limit = 10
    offset: Offset = 0
    sort_by: Any = None
    sort_order: Any = None
    select: Any = None


class StorePut(_Body):
    """`PUT /store/items`."""

    namespace: Namespace
    key: Label
    value: dict[str, Any]
    index: Any = None
    ttl: Annotated[float, Field(gt=0)] | None = None


class StoreDelete(_Body):
    """`DELETE /store/items`."""

    namespace: Namespace
    key: Label


class StoreSearch(_Body):
    """`POST /store/items/search`."""

    namespace_prefix: Namespace = Field(default_factory=list)
    filter: dict[str, Any] | None = None
    limit: Limit = 10
    offset: Offset = 0
    query: Annotated[str, StringConstraints(max_length=10_000)] | None = None
    refresh_ttl: bool | None = None


class NamespaceSearch(_Body):
    """`POST /store/namespaces`."""

    prefix: Namespace | None = None
    suffix: Namespace | None = None
    max_depth: Annotated[int, Field(ge=1, le=100)] | None = None
    limit: Limit = 100
    offset: Offset = 0
