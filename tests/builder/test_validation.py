"""Every malformed graph gets an error that names what is wrong."""

from __future__ import annotations

from typing import Any

import pytest

import actorgraph as ag


def ident(state: Any) -> Any:
    return state


def base(*names: str) -> ag.Graph:
    g: ag.Graph = ag.Graph()
    for name in names:
        g.add_vertex(name, ident)
    return g


def test_unknown_vertex_in_an_edge() -> None:
    g = base("a")
    g.add_edge(ag.START, "a")
    g.add_edge("a", "nope")
    with pytest.raises(ag.GraphValidationError, match="unknown vertex 'nope'"):
        g.compile()


def test_unknown_source_of_an_edge() -> None:
    g = base("a")
    g.add_edge(ag.START, "a")
    g.add_edge("a", ag.END)
    g.add_edge("ghost", "a")
    with pytest.raises(ag.GraphValidationError, match="unknown vertex 'ghost'"):
        g.compile()


def test_duplicate_vertex_name() -> None:
    g = base("a")
    with pytest.raises(ag.GraphValidationError, match="'a' was added twice"):
        g.add_vertex("a", ident)


@pytest.mark.parametrize("name", [ag.START, ag.END, "a:b", "", 3])
def test_reserved_or_invalid_names(name: Any) -> None:
    with pytest.raises(ag.GraphValidationError):
        base().add_vertex(name, ident)


def test_not_callable() -> None:
    with pytest.raises(ag.GraphValidationError, match="'a': fn must be callable"):
        base().add_vertex("a", "not a function")  # type: ignore[arg-type]


def test_function_without_a_state_argument() -> None:
    g = base()
    g.add_vertex("a", lambda: None)
    g.add_edge(ag.START, "a")
    g.add_edge("a", ag.END)
    with pytest.raises(ag.GraphValidationError, match="vertex 'a' takes no positional argument"):
        g.compile()


def test_no_edge_from_start() -> None:
    g = base("a")
    g.add_edge("a", ag.END)
    with pytest.raises(ag.GraphValidationError, match="no edge leaves START"):
        g.compile()


def test_a_vertex_with_no_way_out() -> None:
    g = base("a", "b")
    g.add_edge(ag.START, "a")
    g.add_edge("a", "b")
    with pytest.raises(ag.GraphValidationError, match=r"'b' has no way out.*add_edge\('b', END\)"):
        g.compile()


def test_an_unreachable_vertex_is_an_error() -> None:
    g = base("a", "lost")
    g.add_edge(ag.START, "a")
    g.add_edge("a", ag.END)
    g.add_edge("lost", ag.END)
    with pytest.raises(ag.GraphValidationError, match="'lost' is unreachable"):
        g.compile()


def test_unreachable_is_only_a_warning_when_an_open_router_could_reach_it() -> None:
    g = base("a", "maybe")
    g.add_edge(ag.START, "a")
    g.add_conditional_edges("a", lambda s: "maybe")
    g.add_edge("maybe", ag.END)
    with pytest.warns(ag.GraphValidationWarning, match="'maybe'"):
        g.compile().close()


def test_destinations_make_a_vertex_reachable_and_must_be_known() -> None:
    g = base("b")
    g.add_vertex("a", lambda s: ag.Command(goto="b"), destinations=["b"])
    g.add_edge(ag.START, "a")
    g.add_edge("b", ag.END)
    g.compile().close()
    bad = base()
    bad.add_vertex("a", ident, destinations=["zzz"])
    bad.add_edge(ag.START, "a")
    with pytest.raises(ag.GraphValidationError, match=r"destinations of 'a'.*'zzz'"):
        bad.compile()


def test_path_map_targets_must_exist() -> None:
    g = base("a")
    g.add_edge(ag.START, "a")
    g.add_conditional_edges("a", lambda s: "x", {"x": "missing"})
    with pytest.raises(ag.GraphValidationError, match=r"path_map entry 'x'.*'missing'"):
        g.compile()


@pytest.mark.parametrize(
    ("src", "dst", "message"),
    [
        ("a", ag.START, "into START"),
        (ag.END, "a", "leave END"),
        (["a", "a"], "a", "twice"),
        ([ag.START, "a"], "a", "cannot be join sources"),
        (["a"], ag.END, "join into a vertex"),
    ],
)
def test_bad_edges(src: Any, dst: str, message: str) -> None:
    with pytest.raises(ag.GraphValidationError, match=message):
        base("a").add_edge(src, dst)


def test_duplicate_edge() -> None:
    g = base("a")
    g.add_edge(ag.START, "a")
    with pytest.raises(ag.GraphValidationError, match="added twice"):
        g.add_edge(ag.START, "a")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"timeout": 0}, "timeout"),
        ({"timeout": "1"}, "timeout"),
        ({"concurrency": 0}, "concurrency"),
        ({"retry": 3}, "RetryPolicy"),
        ({"on_error": 5}, "on_error"),
    ],
)
def test_bad_vertex_options(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ag.GraphValidationError, match=message):
        base().add_vertex("a", ident, **kwargs)


def test_empty_graph() -> None:
    with pytest.raises(ag.GraphValidationError, match="no vertices"):
        ag.Graph().compile()


def test_bad_merge_and_retry_policy_values() -> None:
    with pytest.raises(ag.GraphValidationError, match="merge"):
        ag.Graph(merge=5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_attempts"):
        ag.RetryPolicy(max_attempts=0)
