"""The graph's picture for a thread: SVG from Graphviz's `dot`, or Mermaid text without it."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from actorgraph import CompiledGraph
from actorgraph.draw import render_with_dot

__all__ = ["has_dot", "svg"]


def has_dot() -> bool:
    """True when Graphviz's `dot` is on PATH (else the page shows the Mermaid text)."""
    return shutil.which("dot") is not None


def svg(compiled: CompiledGraph[Any], thread_id: str) -> bytes:
    """The graph as SVG, each vertex coloured by its last status in the thread.

    Raises:
        ActorGraphError: `dot` is missing or fails.
    """
    with tempfile.TemporaryDirectory(prefix="actorgraph-web-") as folder:  # the server's own file
        target = render_with_dot(compiled.draw_dot(thread_id), Path(folder) / "graph.svg", "svg", timeout=20)
        return target.read_bytes()
