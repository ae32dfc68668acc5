"""The Ray tests' backend: the session's (ACTORGRAPH_TEST_BACKEND=ray), else one per module."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import actorgraph as ag
from actorgraph.ray import RayBackend  # sets Ray's sandbox settings before Ray is imported


@pytest.fixture(scope="module")
def backend(test_backend: Any) -> Iterator[RayBackend]:
    """The session's Ray backend (ACTORGRAPH_TEST_BACKEND=ray), else one for this module."""
    if test_backend is not None:
        yield test_backend
        return
    made = RayBackend(num_cpus=2).start()
    graph = ag.Graph()
    graph.add_vertex("a", lambda s: s).add_edge(ag.START, "a").add_edge("a", ag.END)
    with graph.compile(backend=made) as app:  # Ray's driver threads start here, not in a test
        for _ in range(4):
            app.invoke({})
    yield made
    made.close()
