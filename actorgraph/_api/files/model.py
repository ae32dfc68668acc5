"""The graph file format as pydantic models: what `actorgraph schema` prints, and what files must match."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["EdgeFile", "GraphFile", "RetryFile", "SendFile", "StateKey", "VertexFile"]

Reducer = Literal["append", "add", "union", "merge_dicts", "replace"]
TypeName = Literal["str", "int", "float", "bool", "list", "dict", "any"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class RetryFile(_Strict):
    """A retry policy: `retry: {max_attempts: 3, initial_interval: 0.5, retry_on: [ConnectionError]}`."""

    max_attempts: int = Field(3, ge=1, description="attempts in all, the first included")
    initial_interval: float = Field(0.5, ge=0, description="seconds before the second attempt")
    backoff_factor: float = Field(2.0, ge=1, description="each further wait is this many times longer")
    max_interval: float = Field(128.0, ge=0, description="the longest wait, in seconds")
    jitter: bool = Field(default=True, description="add up to 25% random extra to each wait")
    retry_on: list[str] | None = Field(
        None,
        description="exception classes by import path (`builtins.ConnectionError`, or just "
        "`ConnectionError`); default: transient errors (connection errors, timeouts, 5xx)",
    )


class StateKey(_Strict):
    """A state key's type and reducer: `drafts: {type: list, reducer: append}`."""

    type: TypeName = Field("any", description="the value's type")
    reducer: Reducer | None = Field(None, description="how concurrent writes merge (default: three-way)")


class VertexFile(_Strict):
    """A vertex: its function by import path, and its options."""

    id: str = Field(description="the vertex's unique name")
    fn: str = Field(description="`package.module:function` (or a `Graph`/`CompiledGraph`: a subgraph)")
    description: str | None = Field(None, description="free text, for readers of the file")
    inputs: list[str] | dict[str, str] | None = Field(
        None, description="the only keys it is given: a list, or `{name: flow.KEY | global.KEY}`"
    )
    outputs: list[str] | dict[str, str] | None = Field(
        None, description="the only keys it may write: a list, or `{returned_key: KEY}` to rename"
    )
    retry: RetryFile | list[RetryFile] | None = Field(
        None, description="retry policy (or policies, first match)"
    )
    timeout: float | None = Field(None, gt=0, description="seconds a task may run before it is retried")
    concurrency: int | None = Field(
        None, ge=1, description="the most tasks of this vertex at once (default 32)"
    )
    on_error: str | None = Field(None, description="`module:handler(state, error)` run after the retries")
    returns: Literal["state", "update"] | None = Field(None, description="what the function returns")
    destinations: list[str] | None = Field(None, description="where `Command(goto=...)` may route")
    resources: dict[str, float] | None = Field(None, description="for the Ray backend: `{num_cpus: 1}`")
    defer: bool | None = Field(
        None, description="run only when no other vertex has work (an aggregator after uneven branches)"
    )


class SendFile(_Strict):
    """A fan-out: one task of `to` per item of the list `each`, its state the source's plus `as: item`."""

    to: str = Field(description="the vertex each item is sent to")
    each: str = Field(description="an expression giving a list, e.g. `flow.documents`")
    as_: str = Field(alias="as", description="the state key that holds the item in each task")


class EdgeFile(_Strict):
    """An edge: `{source, target}`, a join (`source` a list), a condition, or a send."""

    source: str | list[str] = Field(description="a vertex, `__start__`, or a list of vertices (a join)")
    target: str | None = Field(None, description="the next vertex, or `__end__`")
    condition: str | None = Field(
        None, description="an expression over `flow.` and `global.` whose value picks the next vertex"
    )
    mappings: dict[Any, str] | None = Field(None, description="the condition's value -> the next vertex")
    send: SendFile | None = Field(None, description="a fan-out with Send")

    @model_validator(mode="after")
    def _one_kind(self) -> EdgeFile:
        kinds = [k for k in ("target", "condition", "send") if getattr(self, k) is not None]
        if len(kinds) != 1:
            msg = "an edge has exactly one of target, condition or send" + (
                f" (this one has {', '.join(kinds)})" if kinds else ""
            )
            raise ValueError(msg)
        if self.mappings is not None and self.condition is None:
            raise ValueError("mappings belong to an edge with a condition")
        if isinstance(self.source, list) and self.target is None:
            raise ValueError("a join (a list of sources) needs a target")
        return self


class GraphFile(_Strict):
    """A graph file (YAML): vertices, edges and what they share."""

    name: str | None = Field(None, description="the graph's name (logs, pictures)")
    description: str | None = Field(None, description="free text, for readers of the file")
    state: dict[str, TypeName | StateKey] | None = Field(
        None, description="the state's keys: a type, or `{type, reducer}`; checked on every update"
    )
    global_: dict[str, Any] = Field(
        default_factory=dict, alias="global", description="read-only constants, read as `global.KEY`"
    )
    returns: Literal["state", "update"] | None = Field(None, description="what vertices return by default")
    retry: RetryFile | list[RetryFile] | None = Field(None, description="the default retry policy")
    vertices: list[VertexFile] = Field(min_length=1, description="the vertices")
    edges: list[EdgeFile] = Field(min_length=1, description="the edges")
    interrupt_before: list[str] | None = Field(None, description="pause before these vertices")
    interrupt_after: list[str] | None = Field(None, description="pause after these vertices' supersteps")
