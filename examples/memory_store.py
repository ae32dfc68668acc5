"""A memory store: values kept across threads, found by filter or by meaning, used from a vertex.

Run it: python examples/memory_store.py [DIRECTORY]

It writes one SQLite file, in DIRECTORY or in a temporary directory.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import actorgraph as ag
from actorgraph.store import BaseStore, MemoryStore, SqliteStore

State = dict[str, Any]


def basics(path: Path) -> None:
    # --8<-- [start:basics]
    with SqliteStore(path) as store:
        alice = ("users", "alice", "memories")
        store.put(alice, "food", {"text": "likes ramen", "kind": "preference", "weight": 3})
        store.put(alice, "city", {"text": "lives in Lima", "kind": "fact", "weight": 5})
        store.put(alice, "mood", {"text": "tired today", "kind": "state"}, ttl=3600)  # gone in an hour

        if (item := store.get(alice, "food")) is not None:  # None when the key is not there
            print(f"{item.key}: {item.value['text']} (since {item.created_at:%Y})")
        newest = store.search(("users", "alice"), limit=2)  # newest update first
        print("newest:", [found.key for found in newest])
        heavy = store.search(("users",), filter={"weight": {"$gte": 4}})
        print("weight >= 4:", [found.key for found in heavy])
        print("namespaces:", store.list_namespaces(max_depth=2))
    # --8<-- [end:basics]
    assert [found.key for found in newest] == ["mood", "city"]
    assert [found.key for found in heavy] == ["city"]


# --8<-- [start:embed]
WORDS = ("food", "ramen", "city", "lima", "weather")


def embed(texts: list[str]) -> list[list[float]]:
    """A toy embedding: how often each of a few words occurs (use a real model's in practice)."""
    return [[float(text.lower().count(word)) for word in WORDS] for text in texts]


# --8<-- [end:embed]


def semantic() -> None:
    # --8<-- [start:semantic]
    store = MemoryStore(index={"embed": embed, "dims": len(WORDS), "fields": ["text"]})
    store.put(("notes",), "1", {"text": "Ramen is my favourite food"})
    store.put(("notes",), "2", {"text": "Lima is a city by the sea"})
    store.put(("notes",), "3", {"text": "The weather in Lima is mild"})
    for found in store.search(("notes",), query="a city like Lima?", limit=2):
        print(f"{found.score:.2f} {found.value['text']}")
    # --8<-- [end:semantic]
    assert store.search(("notes",), query="food")[0].key == "1"


# --8<-- [start:vertex]
def remember(state: State, ctx: ag.Context[Any]) -> State:
    """Files what the user said under the user's namespace, for every later thread."""
    ctx.store.put(("users", state["user"]), f"said-{ctx.thread_id}", {"text": state["text"]})
    return state


def recall(state: State, ctx: ag.Context[Any]) -> State:
    """Reads everything the user said, in any thread."""
    said = ctx.store.search(("users", state["user"]), limit=100)
    return {**state, "known": sorted(found.value["text"] for found in said)}


def chat(store: BaseStore) -> ag.CompiledGraph[State]:
    graph: ag.Graph[State] = ag.Graph(name="chat")
    graph.add_vertex("remember", remember)
    graph.add_vertex("recall", recall)
    graph.add_edge(ag.START, "remember")
    graph.add_edge("remember", "recall")
    graph.add_edge("recall", ag.END)
    return graph.compile(store=store)


# --8<-- [end:vertex]


def across_threads() -> None:
    # --8<-- [start:threads]
    store = MemoryStore()
    with chat(store) as app:
        app.invoke({"user": "bob", "text": "I am vegetarian"}, thread_id="monday")
        result = app.invoke({"user": "bob", "text": "What should I cook?"}, thread_id="tuesday")
    print("tuesday knows:", result.state["known"])
    # --8<-- [end:threads]
    assert result.state["known"] == ["I am vegetarian", "What should I cook?"]


def main() -> None:
    directory = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())
    basics(directory / "memory.db")
    semantic()
    across_threads()
    print("memory store: all steps passed")


if __name__ == "__main__":
    main()
