"""The Ray backend: vertex work in Ray worker processes, on one machine or a cluster.

    from actorgraph.ray import RayBackend

    with RayBackend() as backend:  # starts (or joins) a local Ray
        app = graph.compile(checkpointer=saver, backend=backend)
        app.invoke(state, thread_id="t1")

Needs `pip install "actorgraph[ray]"`. Importing this module does not import
Ray; the first `compile(backend=...)` joins or starts it.
"""

from __future__ import annotations

from actorgraph.ray._backend import RayBackend
from actorgraph.ray._connect import sandbox_defaults

sandbox_defaults()

__all__ = ["RayBackend"]
