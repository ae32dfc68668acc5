"""The warnings actorgraph gives: something ran, or compiled, but looks unintended or went wrong on the side.

Beside the error tree (`errors.py`): a warning never stops a run; each
docstring says who warns and when.
"""

from __future__ import annotations

__all__ = ["CacheWarning", "GraphValidationWarning", "StuckVertexWarning"]


class GraphValidationWarning(UserWarning):
    """Warned by `compile()` when a graph compiles but something in it looks unintended."""


class CacheWarning(RuntimeWarning):
    """Warned by a node cache (`MemoryCache`, `SqliteCache`) that finds an entry it cannot use.

    The entry is damaged, or was written with another serializer or key: it
    counts as a miss, so the vertex runs and its outcome replaces the entry.
    """


class StuckVertexWarning(RuntimeWarning):
    """Warned by `CompiledGraph.close()` when vertex actors are still running tasks it has to wait for."""
