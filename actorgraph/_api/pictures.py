"""A compiled graph's pictures: Mermaid, Graphviz DOT and PNG, each vertex coloured by a thread's outcome."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import os
    from pathlib import Path

    from actorgraph._api.history import History
    from actorgraph._model.spec import GraphSpec

__all__ = ["Pictures"]


class Pictures:
    """The drawing methods of `CompiledGraph`: they read its spec and, given a thread, its statuses."""

    spec: GraphSpec
    _threads: History

    def draw_mermaid(self, thread_id: str | None = None) -> str:
        """The graph as a Mermaid flowchart; with `thread_id`, each vertex shows its last status."""
        from actorgraph.draw import to_mermaid  # noqa: PLC0415 - drawing loads with the first picture

        return to_mermaid(self.spec, self._threads.statuses(thread_id) if thread_id else None)

    def draw_dot(self, thread_id: str | None = None) -> str:
        """The graph in Graphviz DOT; with `thread_id`, each vertex shows its last status."""
        from actorgraph.draw import to_dot  # noqa: PLC0415 - drawing loads with the first picture

        return to_dot(self.spec, self._threads.statuses(thread_id) if thread_id else None)

    def draw_png(self, path: str | os.PathLike[str], thread_id: str | None = None) -> Path:
        """Render the graph to a PNG file with Graphviz's `dot` (which must be installed)."""
        from actorgraph.draw import render_png  # noqa: PLC0415 - drawing loads with the first picture

        return render_png(self.draw_dot(thread_id), path)
