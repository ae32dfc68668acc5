"""Input and output schemas, several writes per task, and bulk updates of a thread.

Run it: python examples/schemas_and_updates.py
"""

from __future__ import annotations

from typing import Annotated, Any, NotRequired, TypedDict

import actorgraph as ag
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.merge import append


# --8<-- [start:schemas]
class Question(TypedDict):
    """What a caller gives."""

    question: str


class Answer(TypedDict):
    """What a caller gets back."""

    answer: str


class Research(TypedDict):
    """The whole state: `notes` is in neither schema, so it is the vertices' own."""

    question: str
    notes: NotRequired[Annotated[list[str], append]]
    answer: NotRequired[str]


def research() -> ag.Graph[Research]:
    graph: ag.Graph[Research] = ag.Graph(state=Research, input=Question, output=Answer, returns="update")
    graph.add_vertex("search", lambda s: {"notes": [f"found something on {s['question']}"]})
    graph.add_vertex("write", lambda s: {"answer": f"{len(s['notes'])} note(s) on {s['question']}"})
    graph.add_edge(ag.START, "search")
    graph.add_edge("search", "write")
    graph.add_edge("write", ag.END)
    return graph


with research().compile(checkpointer=MemoryCheckpointer()) as app:
    result = app.invoke({"question": "tides"}, thread_id="r-1")
    print(f"the caller gets {result.state}")  # the output schema's keys only
    print(f"the thread keeps {sorted(app.get_state('r-1').state)}")  # the whole state
    try:
        app.invoke({"question": "tides", "notes": ["planted"]}, thread_id="r-2")
    except ag.InvalidUpdateError as exc:
        print(f"refused: {exc}")
# --8<-- [end:schemas]


# --8<-- [start:writes]
class Log(TypedDict):
    """A log that appends."""

    log: Annotated[list[str], append]


def two_entries(state: Log) -> ag.Command:
    # one task, two writes to one key: each lands in order, through the key's reducer
    return ag.Command(update=[("log", ["checked the input"]), ("log", ["wrote the answer"])])


logger: ag.Graph[Log] = ag.Graph(state=Log, returns="update")
logger.add_vertex("work", two_entries)
logger.add_edge(ag.START, "work")
logger.add_edge("work", ag.END)
with logger.compile() as log_app:
    print(f"log: {log_app.invoke({'log': ['start']}).state['log']}")
# --8<-- [end:writes]


# --8<-- [start:bulk]
def seeded(app: ag.CompiledGraph[Any]) -> None:
    # a thread built by hand: three supersteps, one checkpoint each
    app.bulk_update_state(
        "seeded",
        [
            [({"question": "tides"}, ag.START)],  # the input
            [({"notes": ["from the archive"]}, "search")],  # as if `search` had produced it
            [{"notes": ["checked by a person"]}],  # a plain update, standing for no vertex
        ],
    )
    snapshot = app.get_state("seeded")
    checkpoints = len(app.get_history("seeded"))
    print(f"{checkpoints} checkpoints, next={snapshot.next}, notes={snapshot.state['notes']}")
    print(f"then: {app.invoke(None, thread_id='seeded').state}")


with research().compile(checkpointer=MemoryCheckpointer()) as seeded_app:
    seeded(seeded_app)
# --8<-- [end:bulk]
