"""The merge rule of `add_messages`: each branch's change exactly once, the same in any process."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import actorgraph as ag
from actorgraph.merge import MISSING
from actorgraph.messages import MessagesState, RemoveMessage, add_messages, message

# -- scenarios: a base conversation and branches that append, replace and delete ------------------


def scenario(rnd: random.Random) -> tuple[list[dict], list[list[dict]], dict[str, Any]]:
    """A base, the branches' conversations, and what each branch did (to check the merge against)."""
    base = [
        message(
            rnd.choice(["user", "assistant"]), f"base{i}", **({"id": f"b{i}"} if rnd.random() < 0.7 else {})
        )
        for i in range(rnd.randint(0, 5))
    ]
    branches, did = [], {"added": [], "replaced": {}, "deleted": set()}
    for b in range(rnd.randint(1, 4)):
        mine = []
        for i, m in enumerate(base):
            roll = rnd.random()
            if roll < 0.15:
                did["deleted"].add(i)
            elif roll < 0.3:
                mine.append(
                    {**m, "content": f"branch{b} replaced {i}", "id": m.get("id")} if "id" in m else None
                )
                if mine[-1] is None:  # a message without id cannot be replaced (it has no name): keep it
                    mine[-1] = m
                else:
                    did["replaced"][i] = f"branch{b} replaced {i}"
            else:
                mine.append(m)
        for j in range(rnd.randint(0, 3)):
            content = f"branch{b} added {j}"
            extra = {"id": f"n{b}.{j}"} if rnd.random() < 0.5 else {}
            mine.append(message("assistant", content, **extra))
            did["added"].append(content)
        branches.append(mine)
    return base, branches, did


def check(base: list[dict], branches: list[list[dict]], did: dict[str, Any]) -> list[dict]:
    merged = add_messages.merge(base, branches)
    said = [m["content"] for m in merged]
    assert len({m["id"] for m in merged}) == len(merged), "ids are unique"
    assert all(isinstance(m["id"], str) for m in merged)
    added = [c for c in said if "added" in c]
    assert added == did["added"], "every branch's additions, once each, in task order"
    expected_base = [
        did["replaced"].get(i, m["content"]) for i, m in enumerate(base) if i not in did["deleted"]
    ]
    assert said[: len(expected_base)] == expected_base, "replacements kept, deletions kept, order kept"
    assert len(said) == len(expected_base) + len(added)
    return merged


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=2**32))
def test_every_branch_change_is_counted_exactly_once(seed: int) -> None:
    base, branches, did = scenario(random.Random(seed))
    merged = check(base, branches, did)
    assert add_messages.merge(base, branches) == merged, "the same merge gives the same ids"


_CHILD = textwrap.dedent(
    """
    import json, random, sys
    sys.path.insert(0, {tests!r})
    from messages.test_messages_merge import scenario
    from actorgraph.messages import add_messages
    out = []
    for seed in range(60):
        base, branches, _ = scenario(random.Random(seed))
        out.append(add_messages.merge(base, branches))
    print(json.dumps(out))
    """
)


@pytest.mark.slow
def test_the_merge_gives_the_same_ids_in_another_process() -> None:
    tests = str(__import__("pathlib").Path(__file__).resolve().parent.parent)
    here = []
    for seed in range(60):
        base, branches, _ = scenario(random.Random(seed))
        here.append(add_messages.merge(base, branches))
    env = {**__import__("os").environ, "PYTHONHASHSEED": "12345"}
    child = subprocess.run(
        [sys.executable, "-c", _CHILD.format(tests=tests)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    assert json.loads(child.stdout) == here


def test_a_message_without_id_kept_by_every_branch_is_not_doubled() -> None:
    base = [{"role": "user", "content": "hi"}]
    merged = add_messages.merge(
        base, [[*base, message("assistant", "a")], [*base, message("assistant", "b")]]
    )
    assert [m["content"] for m in merged] == ["hi", "a", "b"]


def test_a_message_added_by_two_branches_with_one_id_is_kept_once() -> None:
    shared = message("assistant", "same", id="s")
    assert add_messages.merge([], [[shared], [shared]]) == [shared]


def test_a_branch_that_deleted_the_key_deleted_its_messages() -> None:
    base = [message("user", "a", id="1")]
    assert add_messages.merge(base, [MISSING, [*base, message("user", "b", id="2")]]) == [
        message("user", "b", id="2")
    ]
    assert add_messages.merge(base, [MISSING]) is MISSING


def test_a_deletion_wins_over_a_replacement() -> None:
    base = [message("user", "a", id="1"), message("user", "b", id="2")]
    replaced = [message("user", "A", id="1"), base[1]]
    assert add_messages.merge(base, [replaced, [base[1]]]) == [base[1]]


# -- in a graph: branches of one superstep, each returning an update ------------------------------


def test_parallel_vertices_append_replace_and_remove(compile_graph) -> None:
    g: ag.Graph = ag.Graph(state=MessagesState, returns="update")
    g.add_vertex("ask", lambda s: {"messages": [message("user", "q", id="q")]})
    g.add_vertex("append", lambda s: {"messages": [("assistant", "one"), ("assistant", "two")]})
    g.add_vertex("replace", lambda s: {"messages": message("user", "Q!", id="q")})
    g.add_vertex("remove", lambda s: {"messages": RemoveMessage("old")})
    g.add_vertex("also", lambda s: {"messages": "three"})
    g.add_edge(ag.START, "ask")
    for name in ("append", "replace", "remove", "also"):
        g.add_edge("ask", name)
        g.add_edge(name, ag.END)
    state = compile_graph(g).invoke({"messages": [message("system", "old one", id="old")]}).state
    assert [(m["role"], m["content"]) for m in state["messages"]] == [
        ("user", "Q!"),
        ("user", "three"),  # task order: vertices by name, "also" before "append"
        ("assistant", "one"),
        ("assistant", "two"),
    ]


def test_whole_state_branches_that_append_messages_without_ids(compile_graph) -> None:
    g: ag.Graph = ag.Graph(state=MessagesState)
    for name in ("a", "b"):
        g.add_vertex(
            name, lambda s, n=name: {"messages": [*s["messages"], {"role": "assistant", "content": n}]}
        )
        g.add_edge(ag.START, name)
        g.add_edge(name, ag.END)
    first = compile_graph(g).invoke({"messages": [message("user", "hi", id="u")]}).state
    again = compile_graph(g).invoke({"messages": [message("user", "hi", id="u")]}).state
    assert [m["content"] for m in first["messages"]] == ["hi", "a", "b"]
    assert first == again, "ids given by the merge are derived, not random"
