"""Which calls of a stateful subgraph lie in a task's past (`_engine/rewind.py`), on any shape of history.

The parent's history is a tree of checkpoints: runs continue a line (its
supersteps committed one by one, or several at once when nothing is written
between), a new input or a fork begins a line from any checkpoint. A call
made in superstep `s` of line `L` is in a task's past when that superstep
committed on the chain of checkpoints the task's run continues, or is an
earlier superstep of the task's own line: the property compares `PastLines`,
which reads back one line at a time, with that definition walked in full.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from actorgraph._engine.rewind import LineRow, Past, PastLines, line_hash, place


@dataclass(frozen=True)
class Row:
    id: str
    parent: str | None
    origin: str
    step: int


def test_place_reads_a_subgraph_tasks_name_and_an_invocations() -> None:
    line = line_hash("000018ec-1")
    assert place(f"agent@3~{line}") == (3, line)
    assert place(f"work:2@12~{line}#4") == (12, line)
    assert place(f"a@b@7~{line}") == (7, line)  # a vertex name may hold '@'
    for other in ("agent", f"agent@x~{line}", "agent@3~short", f"agent@3~{line}#", "agent~memory"):
        assert place(other) is None


def test_a_task_own_earlier_invocations_and_checkpoints_without_owner_are_past() -> None:
    lines = PastLines(Past("t", "o1", 1, None, task="chat@1~abcd1234"), lambda _: None)
    assert lines.holds("chat@1~abcd1234#0")
    assert lines.holds(None)  # a checkpoint written before owners were recorded
    assert not lines.holds(f"chat@1~{line_hash('o1')}#0")  # the same superstep, another task


@dataclass(frozen=True)
class Drawn:
    """A parent's history and a task in it: its run's line, where it writes after, its superstep."""

    rows: dict[str, Row]
    line: str
    parent: str
    step: int
    starts: dict[str, int]  # line hash -> the superstep of its first checkpoint (its calls come after)


@st.composite
def histories(draw: st.DrawFn) -> Drawn:
    """A tree of checkpoints: a line goes on from its newest checkpoint, a line begins from any."""
    rows: dict[str, Row] = {}
    tips: dict[str, str] = {}  # line -> its newest checkpoint
    for n in range(draw(st.integers(1, 14))):
        cid = f"c{n:02d}"
        base = rows[draw(st.sampled_from(sorted(rows)))] if rows else None
        if base is not None and tips[base.origin] == base.id and draw(st.booleans()):
            row = Row(cid, base.id, base.origin, base.step + draw(st.integers(1, 3)))  # 3: "exit" writes less
        else:  # a new input restarts the supersteps; a fork keeps them
            step = base.step if base is not None and draw(st.booleans()) else 0
            row = Row(cid, base.id if base is not None else None, cid, step)
        rows[cid] = row
        tips[row.origin] = cid
    starts = {line_hash(r.origin): r.step for r in rows.values() if r.origin == r.id}
    at = rows[draw(st.sampled_from(sorted(rows)))]
    if tips[at.origin] == at.id and draw(st.booleans()):  # the task's run goes on with at's line
        return Drawn(rows, at.origin, at.id, at.step + draw(st.integers(1, 3)), starts)
    start = at.step if draw(st.booleans()) else 0  # its run began a line from `at`, and wrote nothing yet
    starts[line_hash("new")] = start
    return Drawn(rows, "new", at.id, start + draw(st.integers(1, 3)), starts)


def past_in_full(drawn: Drawn) -> set[tuple[str, int]]:
    """Every (line, superstep) committed on the chain before the task, and its own line's earlier ones."""
    past = {(line_hash(drawn.line), s) for s in range(1, drawn.step)}
    node: Row | None = drawn.rows[drawn.parent]
    while node is not None:
        before = drawn.rows[node.parent] if node.parent is not None else None
        if before is not None and node.origin != node.id:  # not a line's first: it committed supersteps
            past |= {(line_hash(node.origin), s) for s in range(before.step + 1, node.step + 1)}
        node = before
    return past


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(histories())
def test_past_lines_hold_exactly_the_calls_committed_before_the_task(drawn: Drawn) -> None:
    def read(checkpoint_id: str) -> LineRow | None:
        row = drawn.rows.get(checkpoint_id)
        return (row.parent, row.origin, row.step) if row is not None else None

    lines = PastLines(Past("t", drawn.line, drawn.step, drawn.parent), read)
    expected = past_in_full(drawn)
    for name, start in drawn.starts.items():
        for s in range(start + 1, drawn.step + 40):  # a line's calls come after its first checkpoint
            assert lines.holds(f"v@{s}~{name}") == ((name, s) in expected), (name, s)
