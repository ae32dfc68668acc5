"""Stored records that decode but have the wrong shape are refused with an error naming the thread and
checkpoint, never a bare KeyError, TypeError or IndexError; nothing in them is imported or called."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import actorgraph as ag
from actorgraph.checkpoint import MsgpackSerializer, SqliteCheckpointer
from actorgraph.checkpoint._codec import aad, blob_aad
from actorgraph.checkpoint._load import write_aad

SERIALIZER = MsgpackSerializer()


def ask(state: dict[str, Any]) -> dict[str, Any]:
    return {**state, "answer": ag.interrupt("proceed?")}


def graph() -> ag.Graph:
    g: ag.Graph = ag.Graph()
    g.add_vertex("prep", lambda s: {**s, "n": s["n"] + 1})
    g.add_vertex("ask", ask)
    g.add_edge(ag.START, "prep")
    g.add_edge("prep", "ask")
    g.add_edge("ask", ag.END)
    return g


class Thread:
    """A thread paused on an interrupt (a write) after an `interrupt_after` pause (a checkpoint's pauses)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.store = SqliteCheckpointer(path, serializer=SERIALIZER)
        self.app = graph().compile(checkpointer=self.store, interrupt_after=["prep"])
        self.app.invoke({"n": 0}, thread_id="t")
        self.app.invoke(None, thread_id="t")
        snap = self.app.get_state("t")
        assert snap.interrupts and snap.superstep.results["ask"].status == "interrupt"
        self.checkpoint = snap.checkpoint_id

    def edit_checkpoint(self, change: Callable[[dict[str, Any]], Any], checkpoint: str | None = None) -> None:
        cid = checkpoint or self.checkpoint
        with sqlite3.connect(self.path) as raw:
            (data,) = raw.execute(
                "SELECT data FROM actorgraph_checkpoints WHERE checkpoint_id = ?", (cid,)
            ).fetchone()
            record = SERIALIZER.loads(data, aad=aad("t", cid))
            new = SERIALIZER.dumps(change(record), aad=aad("t", cid))
            raw.execute("UPDATE actorgraph_checkpoints SET data = ? WHERE checkpoint_id = ?", (new, cid))

    def edit_write(self, change: Callable[[dict[str, Any]], Any]) -> None:
        where = write_aad("t", self.checkpoint, "ask")
        with sqlite3.connect(self.path) as raw:
            (data,) = raw.execute(
                "SELECT data FROM actorgraph_writes WHERE checkpoint_id = ? AND task_id = 'ask'",
                (self.checkpoint,),
            ).fetchone()
            new = SERIALIZER.dumps(change(SERIALIZER.loads(data, aad=where)), aad=where)
            raw.execute(
                "UPDATE actorgraph_writes SET data = ? WHERE checkpoint_id = ? AND task_id = 'ask'",
                (new, self.checkpoint),
            )

    def refused(self, match: str, error: type[Exception] = ag.SerializationError) -> str:
        with pytest.raises(error, match=match) as info:
            self.app.get_state("t")
        message = str(info.value)
        assert "'t'" in message and self.checkpoint in message, message
        return message


@pytest.fixture
def thread(tmp_path: Path) -> Iterator[Thread]:
    made = Thread(tmp_path / "cp.db")
    yield made
    made.app.close()
    made.store.close()


def changed(record: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """`record` with the item at `path` set to `value` (deleted when `value` is DELETE)."""
    target = record
    for key in path[:-1]:
        target = target[key]
    if value is DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return record


DELETE = object()


# -- checkpoint records -----------------------------------------------------------------------


def test_a_record_of_only_a_format_is_refused(thread: Thread) -> None:
    thread.edit_checkpoint(lambda r: {"format": 1})
    thread.refused("has no 'position'")


def test_a_record_without_nodes_is_refused(thread: Thread) -> None:
    thread.edit_checkpoint(lambda r: changed(r, ("nodes",), DELETE))
    thread.refused("has no 'nodes'")


def test_a_format_written_as_text_is_refused(thread: Thread) -> None:
    thread.edit_checkpoint(lambda r: changed(r, ("format",), "1"))
    thread.refused("'format' should be a positive integer, found '1'")


def test_a_record_without_a_format_is_refused(thread: Thread) -> None:
    thread.edit_checkpoint(lambda r: changed(r, ("format",), DELETE))
    thread.refused("'format' should be a positive integer, found None")


def test_a_newer_format_is_refused_as_newer(thread: Thread) -> None:
    thread.edit_checkpoint(lambda r: changed(r, ("format",), 99))
    message = thread.refused("newer actorgraph", ag.CheckpointError)
    assert "upgrade actorgraph" in message


def test_a_record_that_is_not_a_mapping_is_refused(thread: Thread) -> None:
    thread.edit_checkpoint(lambda r: [r["format"], r["position"]])
    thread.refused("should be a mapping, found list")


def test_nodes_as_a_list_is_refused(thread: Thread) -> None:
    thread.edit_checkpoint(lambda r: changed(r, ("nodes",), [1]))
    thread.refused(r"\['nodes'\] should be a mapping, found list")


def test_a_lineage_entry_of_the_wrong_shape_is_refused(thread: Thread) -> None:
    thread.edit_checkpoint(lambda r: {**r, "nodes": dict.fromkeys(r["nodes"], "parents")})
    thread.refused("should be a list of 2 items, found str")


def test_a_lineage_naming_a_missing_parent_is_refused(thread: Thread) -> None:
    thread.edit_checkpoint(lambda r: {**r, "nodes": {k: [["ghost"], 1] for k in r["nodes"]}})
    thread.refused("version 'ghost', which it lacks")


def test_a_step_that_is_not_an_integer_is_refused(thread: Thread) -> None:
    thread.edit_checkpoint(lambda r: changed(r, ("position", "step"), "1"))
    thread.refused(r"\['step'\] should be an integer, found str")


def test_a_message_of_the_wrong_length_is_refused(thread: Thread) -> None:
    thread.edit_checkpoint(lambda r: changed(r, ("position", "inbox", 0), r["position"]["inbox"][0][:3]))
    thread.refused(r"\['inbox'\]\[0\] should be a list of 6 items, found 3 items")


def test_a_message_naming_a_missing_version_is_refused(thread: Thread) -> None:
    thread.edit_checkpoint(lambda r: changed(r, ("position", "inbox", 0, 1), "ghost"))
    thread.refused("refers to state version 'ghost'")


def test_a_message_flag_of_the_wrong_type_is_refused(thread: Thread) -> None:
    thread.edit_checkpoint(lambda r: changed(r, ("position", "inbox", 0, 3), "yes"))
    thread.refused(r"\[3\] should be a boolean, found str")


def test_joins_that_are_not_a_mapping_are_refused(thread: Thread) -> None:
    thread.edit_checkpoint(lambda r: changed(r, ("position", "joins"), [["ask"]]))
    thread.refused(r"\['joins'\] should be a mapping, found list")


def test_a_pause_of_the_wrong_length_is_refused(thread: Thread) -> None:
    first = thread.app.get_history("t")[-2].checkpoint_id  # after prep: paused by interrupt_after
    thread.edit_checkpoint(lambda r: changed(r, ("pauses",), [["id", "prep"]]), checkpoint=first)
    with pytest.raises(ag.SerializationError, match="should be a list of 5 items, found 2 items") as info:
        thread.app.get_state("t", checkpoint_id=first)
    assert first in str(info.value)


def test_a_manifest_of_the_wrong_shape_is_refused(thread: Thread) -> None:
    with sqlite3.connect(thread.path) as raw:
        ids = [b for (b,) in raw.execute("SELECT blob_id FROM actorgraph_blobs")]
        for blob_id in ids:
            forged = SERIALIZER.dumps(["map", ["n"], [1]], aad=blob_aad("t", blob_id))
            raw.execute("UPDATE actorgraph_blobs SET data = ? WHERE blob_id = ?", (forged, blob_id))
    thread.refused("its manifest is not a list of keys and part references")


def test_a_chunk_that_is_not_a_list_is_refused(thread: Thread) -> None:
    inline = SERIALIZER.dumps({"not": "a list"}, aad=aad("t", "part"))
    with sqlite3.connect(thread.path) as raw:
        for (blob_id,) in raw.execute("SELECT blob_id FROM actorgraph_blobs").fetchall():
            forged = SERIALIZER.dumps(["one", [inline]], aad=blob_aad("t", blob_id))
            raw.execute("UPDATE actorgraph_blobs SET data = ? WHERE blob_id = ?", (forged, blob_id))
    thread.refused("a chunk of a list is not a list")


# -- task results ------------------------------------------------------------------------------


def test_a_write_without_node_is_refused(thread: Thread) -> None:
    thread.edit_write(lambda r: changed(r, ("result", "node"), DELETE))
    message = thread.refused("has no 'node'")
    assert "task 'ask'" in message


def test_a_write_without_a_result_is_refused(thread: Thread) -> None:
    thread.edit_write(lambda r: {"format": 2, "nodes": r["nodes"]})
    thread.refused("has no 'result'")


def test_an_interrupt_of_the_wrong_length_is_refused(thread: Thread) -> None:
    thread.edit_write(lambda r: changed(r, ("result", "interrupt"), ["id", "ask", "proceed?"]))
    thread.refused(r"\['interrupt'\] should be a list of 5 items, found 3 items")


def test_an_error_of_the_wrong_shape_is_refused(thread: Thread) -> None:
    thread.edit_write(lambda r: changed(r, ("result", "error"), {"type": "ValueError"}))
    thread.refused(r"\['error'\] should be a list of 4 items, found dict")


def test_an_unknown_status_is_refused(thread: Thread) -> None:
    thread.edit_write(lambda r: changed(r, ("result", "status"), "exploded"))
    thread.refused(r"\['status'\] should be one of")


def test_a_result_naming_a_missing_version_is_refused(thread: Thread) -> None:
    thread.edit_write(lambda r: changed(r, ("result", "node"), "ghost"))
    thread.refused("its result refers to state version 'ghost'")


def test_attempts_that_are_not_an_integer_are_refused(thread: Thread) -> None:
    thread.edit_write(lambda r: changed(r, ("result", "attempts"), 1.5))
    thread.refused(r"\['attempts'\] should be an integer, found float")


# -- every way in ------------------------------------------------------------------------------


LOAD_PATHS: dict[str, Callable[[ag.CompiledGraph], object]] = {
    "get_state": lambda app: app.get_state("t"),
    "get_history": lambda app: app.get_history("t"),
    "invoke(None)": lambda app: app.invoke(None, thread_id="t"),
    "resume": lambda app: app.invoke(ag.Command(resume="yes"), thread_id="t"),
    "update_state": lambda app: app.update_state("t", {"n": 5}),
    "new input": lambda app: app.invoke({"n": 1}, thread_id="t"),
}


@pytest.mark.parametrize("path", list(LOAD_PATHS))
def test_every_load_path_refuses_a_damaged_record(thread: Thread, path: str) -> None:
    thread.edit_checkpoint(lambda r: changed(r, ("position", "inbox"), [1]))
    with pytest.raises(ag.SerializationError, match=r"is damaged: .*\['inbox'\]\[0\]") as info:
        LOAD_PATHS[path](thread.app)
    assert "'t'" in str(info.value) and thread.checkpoint in str(info.value)


def test_every_error_survives_pickling_with_its_message_and_attributes() -> None:
    """Errors travel to other processes (the Ray backend gives them to on_error handlers there)."""
    import pickle

    made = [
        ag.VertexError(
            "research/fetch",
            task_id="fetch",
            step=2,
            attempts=3,
            error_type="builtins.X",
            message="m",
            others=1,
        ),
        ag.RecordedError("builtins.ConnectionError", "down", "Traceback ..."),
        ag.MergeConflictError("k", vertices=("a", "b"), step=3, values=(1, 2)),
        ag.VertexActorDiedError("the actor died"),
        ag.VertexTimeoutError("too slow"),
        ag.BackendError("no node"),
    ]
    for error in made:
        again = pickle.loads(pickle.dumps(error))  # noqa: S301 - our own bytes
        assert type(again) is type(error) and str(again) == str(error)
        assert vars(again) == vars(error)
