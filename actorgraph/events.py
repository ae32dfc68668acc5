"""The records of what happens in a run, for listeners and `stream(mode="events")`.

Subscribe with `Graph.compile(listeners=[fn])` (every run) or
`invoke(..., listeners=[fn])` (one run). A listener is called from the
coordinator's and the vertices' threads, so it must be thread-safe and quick;
give it a `kinds` attribute (a set of event classes) to receive only those.
"""

from actorgraph._events import (
    Custom,
    Event,
    Interrupted,
    JoinWaiting,
    Listener,
    RetryScheduled,
    RunFinished,
    RunStarted,
    SuperstepCommitted,
    SuperstepStarted,
    TaskFinished,
    TaskStarted,
)

__all__ = [
    "Custom",
    "Event",
    "Interrupted",
    "JoinWaiting",
    "Listener",
    "RetryScheduled",
    "RunFinished",
    "RunStarted",
    "SuperstepCommitted",
    "SuperstepStarted",
    "TaskFinished",
    "TaskStarted",
]
