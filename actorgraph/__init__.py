"""actorgraph: stateful graph workflows that survive failure.

Every vertex is a pykka actor; a coordinator actor runs Pregel supersteps,
merges whole states without losing updates, and records each task's outcome.
"""

# `import actorgraph` loads what building a graph needs; the engine loads with
# the first `compile()`, and the names below `_LAZY` with their first use
# (tests/api/test_slim_install.py holds what the import leaves out).
from typing import TYPE_CHECKING, Any

from actorgraph._api.graph import Graph
from actorgraph._build.options import VertexOptions
from actorgraph._engine.context import Context, StreamWriter, get_stream_writer, interrupt
from actorgraph._model.errors import (
    ActorGraphError,
    AlreadyAnsweredError,
    BackendError,
    CheckpointError,
    ConfigError,
    ConfigFileError,
    GraphValidationError,
    InvalidUpdateError,
    MergeConflictError,
    MissingDependencyError,
    RecordedError,
    RecursionLimitError,
    ResumeError,
    RoutingError,
    RunCancelledError,
    RunTimeoutError,
    SerializationError,
    StoreError,
    ThreadNotFoundError,
    VertexActorDiedError,
    VertexError,
    VertexTimeoutError,
)
from actorgraph._model.managed import IsLastStep, RemainingSteps
from actorgraph._model.policy import CachePolicy, RetryPolicy
from actorgraph._model.records import (
    END,
    PARENT,
    START,
    Command,
    ErrorInfo,
    Interrupt,
    Send,
    SuperstepState,
    VertexResult,
)
from actorgraph._model.results import RunResult, Snapshot
from actorgraph._model.warnings import CacheWarning, GraphValidationWarning, StuckVertexWarning

if TYPE_CHECKING:
    from actorgraph._actors.handle import RunHandle
    from actorgraph._api.compiled import CompiledGraph
    from actorgraph._api.files import load, load_string
    from actorgraph._api.request import RunKeywords
    from actorgraph.cache import MemoryCache, SqliteCache

__all__ = [
    "END",
    "PARENT",
    "START",
    "ActorGraphError",
    "AlreadyAnsweredError",
    "BackendError",
    "CachePolicy",
    "CacheWarning",
    "CheckpointError",
    "Command",
    "CompiledGraph",
    "ConfigError",
    "ConfigFileError",
    "Context",
    "ErrorInfo",
    "Graph",
    "GraphValidationError",
    "GraphValidationWarning",
    "Interrupt",
    "InvalidUpdateError",
    "IsLastStep",
    "MemoryCache",
    "MergeConflictError",
    "MissingDependencyError",
    "RecordedError",
    "RecursionLimitError",
    "RemainingSteps",
    "ResumeError",
    "RetryPolicy",
    "RoutingError",
    "RunCancelledError",
    "RunHandle",
    "RunKeywords",
    "RunResult",
    "RunTimeoutError",
    "Send",
    "SerializationError",
    "Snapshot",
    "SqliteCache",
    "StoreError",
    "StreamWriter",
    "StuckVertexWarning",
    "SuperstepState",
    "ThreadNotFoundError",
    "VertexActorDiedError",
    "VertexError",
    "VertexOptions",
    "VertexResult",
    "VertexTimeoutError",
    "get_stream_writer",
    "interrupt",
    "load",
    "load_string",
]

__version__ = "0.1.0"

# where each name loaded on first use lives (a submodule: loaded itself, as `import actorgraph` once did)
_LAZY = {
    "CompiledGraph": "actorgraph._api.compiled",
    "MemoryCache": "actorgraph.cache",
    "RunHandle": "actorgraph._actors.handle",
    "RunKeywords": "actorgraph._api.request",
    "SqliteCache": "actorgraph.cache",
    "load": "actorgraph._api.files",
    "load_string": "actorgraph._api.files",
    "cache": "",
    "checkpoint": "",
    "draw": "",
    "events": "",
    "merge": "",
}


def __getattr__(name: str) -> Any:
    """A name of `_LAZY`, imported on its first use and kept."""
    module = _LAZY.get(name)
    if module is None:
        msg = f"module 'actorgraph' has no attribute {name!r}"
        raise AttributeError(msg)
    from importlib import import_module  # noqa: PLC0415 - only a lazy name's first use needs it

    value = import_module(f"actorgraph.{name}") if not module else getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """Every name, the lazy ones too (before their first use)."""
    return sorted({*globals(), *_LAZY})
