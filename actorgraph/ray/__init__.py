"""The Ray backend: vertex work in Ray worker processes, on one machine or a cluster.

    from actorgraph.ray import RayBackend

    with RayBackend() as backend:  # starts (or joins) a local Ray
        app = graph.compile(checkpointer=saver, backend=backend)
        app.invoke(state, thread_id="t1")

Needs `pip install "actorgraph[ray]"`. Importing this module does not import
Ray; the first `compile(backend=...)` joins or starts it.

Layer (docs/design.md): a backend above the facade. May import the facade and every layer
below it; never a front end (`actorgraph.cli`, `actorgraph.web`).
"""

from __future__ import annotations

from actorgraph.ray._backend import RayBackend
from actorgraph.ray._connect import sandbox_defaults

sandbox_defaults()

__all__ = ["RayBackend"]
