"""Answers and thread metadata in every store: a claim is a compare-and-set, all or none."""

from __future__ import annotations

import sqlite3
import threading

import pytest
from store_rows import chain, cid, row

from actorgraph._model.errors import CheckpointError, ConfigError
from actorgraph.checkpoint import AnswerRow
from actorgraph.checkpoint.sqlite import SqliteCheckpointer


def answer(interrupt_id: str, n: int = 1, *, by: str = "ann", data: bytes = b"yes") -> AnswerRow:
    return AnswerRow(interrupt_id, cid(n), "review", by, 1_700_000_000.0, data)


def test_a_claim_is_stored_once_and_the_second_claim_gets_the_first(store):
    chain(store, "t", 1)
    assert store.claim_answers("t", cid(1), [answer("int-a")]) == []
    assert store.get_answers("t", ["int-a", "int-b"]) == {"int-a": answer("int-a")}
    lost = store.claim_answers("t", cid(1), [answer("int-a", by="bob", data=b"no")])
    assert lost == [answer("int-a")]
    assert store.get_answers("t", ["int-a"])["int-a"].answered_by == "ann"


def test_a_claim_is_all_or_none(store):
    chain(store, "t", 1)
    store.claim_answers("t", cid(1), [answer("int-a")])
    lost = store.claim_answers("t", cid(1), [answer("int-b", by="bob"), answer("int-a", by="bob")])
    assert [a.interrupt_id for a in lost] == ["int-a"]
    assert store.get_answers("t", ["int-b"]) == {}


def test_a_claim_sets_the_thread_running(store):
    chain(store, "t", 1)
    store.put_writes("t", cid(1), [], status="interrupted")
    assert [i.thread_id for i in store.threads(status="interrupted")] == ["t"]
    store.claim_answers("t", cid(1), [answer("int-a")])
    assert store.threads(status="interrupted") == []
    assert store.threads()[0].status == "running"


def test_a_claim_against_a_head_that_moved_is_refused_and_stores_nothing(store):
    chain(store, "t", 2)
    with pytest.raises(CheckpointError, match="no longer pending"):
        store.claim_answers("t", cid(1), [answer("int-a")])
    with pytest.raises(CheckpointError, match="deleted"):
        store.claim_answers("gone", cid(1), [answer("int-a")])
    assert store.get_answers("t", ["int-a"]) == {}


def test_answers_go_with_their_thread_and_with_pruned_checkpoints(store):
    chain(store, "t", 1)
    store.claim_answers("t", cid(1), [answer("int-a")])
    store.put(row("t", 2, parent=1), expect_head=cid(1))
    store.put(row("t", 3, parent=2), expect_head=cid(2))
    store.claim_answers("t", cid(3), [answer("int-c", 3)])
    assert store.prune("t", keep=1) == 2
    assert set(store.get_answers("t", ["int-a", "int-c"])) == {"int-c"}
    store.delete_thread("t")
    assert store.get_answers("t", ["int-c"]) == {}


def test_metadata_is_kept_replaced_and_deleted_with_the_thread(store):
    assert store.get_metadata("t") == {}
    store.set_metadata("t", {"graph": "flows.yaml", "by": "cli"})
    store.set_metadata("t", {"graph": "other.yaml"})
    assert store.get_metadata("t") == {"by": "cli", "graph": "other.yaml"}
    assert store.get_metadata("u") == {}
    chain(store, "t", 1)
    store.delete_thread("t")
    assert store.get_metadata("t") == {}


@pytest.mark.parametrize("bad", [{"k": 1}, {1: "v"}, {"k": "v" * 5000}, ["k"]])
def test_metadata_holds_short_strings_only(store, bad):
    with pytest.raises(ConfigError, match="set_metadata"):
        store.set_metadata("t", bad)


def test_claims_racing_from_threads_store_exactly_one(store):
    chain(store, "t", 1)
    barrier = threading.Barrier(8)
    won: list[str] = []

    def claim(who: str) -> None:
        barrier.wait()
        if not store.claim_answers("t", cid(1), [answer("int-a", by=who)]):
            won.append(who)

    threads = [threading.Thread(target=claim, args=(f"p{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(won) == 1
    assert store.get_answers("t", ["int-a"])["int-a"].answered_by == won[0]


def test_a_read_only_database_older_than_answers_reads_them_as_empty(tmp_path):
    path = tmp_path / "old.db"
    with SqliteCheckpointer(path) as cp:
        chain(cp, "t", 1)
    with sqlite3.connect(path) as conn:  # as a store written before answers were stored
        conn.execute("DROP TABLE actorgraph_answers")
        conn.execute("DROP TABLE actorgraph_metadata")
    with SqliteCheckpointer(path, readonly=True) as cp:
        assert cp.get_answers("t", ["int-a"]) == {}
        assert cp.get_metadata("t") == {}
    with SqliteCheckpointer(path) as cp:  # opened for writing, it gains the tables
        assert cp.claim_answers("t", cid(1), [answer("int-a")]) == []
