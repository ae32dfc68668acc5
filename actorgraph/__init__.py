"""actorgraph: stateful graph workflows that survive failure.

Every vertex is a pykka actor; a coordinator actor runs Pregel supersteps,
merges whole states without losing updates, and records each task's outcome.
"""

from actorgraph._actors.handle import RunHandle
from actorgraph._api.compiled import CompiledGraph
from actorgraph._api.files import load, load_string
from actorgraph._api.graph import Graph
from actorgraph._api.request import RunKeywords
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
