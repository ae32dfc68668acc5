"""actorgraph: stateful graph workflows that survive failure.

Every vertex is a pykka actor; a coordinator actor runs Pregel supersteps,
merges whole states without losing updates, and records each task's outcome.
"""

from actorgraph._compiled import CompiledGraph
from actorgraph._context import Context, interrupt
from actorgraph._errors import (
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
    VertexActorDiedError,
    VertexError,
    VertexTimeoutError,
)
from actorgraph._files import load, load_string
from actorgraph._graph import Graph
from actorgraph._handle import RunHandle
from actorgraph._options import VertexOptions
from actorgraph._policy import RetryPolicy
from actorgraph._request import RunKeywords
from actorgraph._results import RunResult, Snapshot
from actorgraph._resume import ThreadNotFoundError
from actorgraph._runtime import StuckVertexWarning
from actorgraph._types import (
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
from actorgraph._validate import GraphValidationWarning

__all__ = [
    "END",
    "PARENT",
    "START",
    "ActorGraphError",
    "AlreadyAnsweredError",
    "BackendError",
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
    "MergeConflictError",
    "MissingDependencyError",
    "RecordedError",
    "RecursionLimitError",
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
    "StuckVertexWarning",
    "SuperstepState",
    "ThreadNotFoundError",
    "VertexActorDiedError",
    "VertexError",
    "VertexOptions",
    "VertexResult",
    "VertexTimeoutError",
    "interrupt",
    "load",
    "load_string",
]

__version__ = "0.1.0"
