"""The graph recorded with a thread: `run` records it, `answer` and `resume` use it from anywhere.

`show` and `threads` read the store alone: they import no code at all.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_shell import Shell

from actorgraph.checkpoint import SqliteCheckpointer

pytestmark = pytest.mark.slow  # every command a new process

FLOW = """\
name: recorded
vertices:
  - {id: write, fn: cli_graphs:write}
  - {id: review, fn: cli_graphs:review}
  - {id: publish, fn: cli_graphs:publish}
edges:
  - {source: __start__, target: write}
  - {source: write, target: review}
  - {source: review, target: publish}
  - {source: publish, target: __end__}
"""

# A graph file whose import leaves a mark: proves which commands load the graph's code.
SIDE = """\
from pathlib import Path

import actorgraph as ag

Path(__file__).with_name("imported").write_text("yes")


def ask(state):
    return {**state, "answer": ag.interrupt("ok?")}


graph = ag.Graph(name="side")
graph.add_vertex("ask", ask)
graph.add_edge(ag.START, "ask")
graph.add_edge("ask", ag.END)
"""


@pytest.fixture
def sh(tmp_path: Path) -> Shell:
    (tmp_path / "here").mkdir()
    (tmp_path / "elsewhere").mkdir()
    return Shell(tmp_path / "here")


def _recorded(db: Path, thread: str) -> dict[str, str]:
    with SqliteCheckpointer(db) as store:
        return store.get_metadata(thread)


@pytest.mark.timeout(120)
def test_a_thread_is_answered_from_another_folder_without_naming_its_graph(sh: Shell) -> None:
    (sh.home / "flow.yaml").write_text(FLOW)
    sh("run", "flow.yaml", "--thread", "y1", "--input", '{"topic": "x"}', code=3)
    db = sh.home / "actorgraph.db"
    assert _recorded(db, "y1") == {"graph": str(sh.home / "flow.yaml")}

    sh.home = sh.home.parent / "elsewhere"
    shown = sh.json("show", "y1", "--db", str(db))
    assert (shown["status"], shown["commands"]) == ("interrupted", [f"actorgraph answer y1 VALUE --db {db}"])
    done = sh.json("answer", "y1", "yes", "--db", str(db))
    assert done["state"] == {"topic": "x", "draft": "x: draft", "approved": "yes", "published": True}


@pytest.mark.timeout(120)
def test_a_moved_graph_is_a_clear_error_and_g_names_the_new_place(sh: Shell) -> None:
    flow = sh.home / "flow.yaml"
    flow.write_text(FLOW)
    sh("run", "flow.yaml", "--thread", "y2", code=3)
    shutil.move(flow, sh.home / "moved.yaml")

    lost = sh("answer", "y2", "yes", code=2)
    assert lost.stderr == (
        f"error: thread 'y2' was run with the graph {str(flow)!r} (recorded with the thread), which cannot "
        f"be opened here: no graph file {str(flow)!r}: it does not exist or is not a file; name the graph "
        "with -g TARGET\n"
    )
    assert sh.json("resume", "y2", code=2)["exit_code"] == 2
    assert sh.json("answer", "y2", "yes", "-g", "moved.yaml")["status"] == "done"
    assert _recorded(sh.home / "actorgraph.db", "y2") == {"graph": str(sh.home / "moved.yaml")}


@pytest.mark.timeout(120)
def test_a_thread_without_a_recorded_graph_takes_g_or_the_environment(sh: Shell) -> None:
    from cli_graphs import approval

    with SqliteCheckpointer(sh.home / "actorgraph.db") as store, approval.compile(store) as app:
        app.invoke({"topic": "api"}, thread_id="from-python")  # the Python API records no graph
    told = sh("answer", "from-python", "yes", code=2)
    assert told.stderr == (
        "error: thread 'from-python' has no graph recorded with it (it was run before graphs were "
        "recorded, or from Python); name its graph with -g TARGET or $ACTORGRAPH_GRAPH\n"
    )
    assert "has no stored checkpoint" in sh("answer", "nobody", "yes", code=2).stderr
    sh.env["ACTORGRAPH_GRAPH"] = "cli_graphs:approval"
    assert sh.json("answer", "from-python", "yes")["state"]["published"] is True


@pytest.mark.timeout(120)
def test_show_and_threads_import_no_code_and_answer_loads_the_recorded_file(sh: Shell) -> None:
    (sh.home / "side.py").write_text(SIDE)
    sh("run", "side.py:graph", "--thread", "s", code=3)
    mark = sh.home / "imported"
    assert mark.exists()
    mark.unlink()
    sh("show", "s")
    sh.json("show", "s", "--history")
    [listed] = sh.json("threads")
    assert listed["interrupts"][0]["question"] == "ok?"
    assert not mark.exists()  # reading the store loaded no graph

    db = sh.home / "actorgraph.db"
    sh.home = sh.home.parent / "elsewhere"
    assert sh.json("answer", "s", "fine", "--db", str(db))["state"] == {"answer": "fine"}
    assert mark.exists()


@pytest.mark.timeout(120)
def test_a_forged_recorded_graph_is_refused_in_one_line(sh: Shell) -> None:
    sh("run", "cli_graphs:approval", "--thread", "f", code=3)
    with SqliteCheckpointer(sh.home / "actorgraph.db") as store:
        store.set_metadata("f", {"graph": "evil\x1b[2J:graph"})
    refused = sh("answer", "f", "yes", code=2)
    assert refused.stderr.startswith("error: the graph recorded with thread 'f' is not a TARGET (")
    assert "\x1b" not in refused.stderr and len(refused.stderr.splitlines()) == 1
    assert sh.json("answer", "f", "yes", "-g", "cli_graphs:approval")["status"] == "done"


@pytest.mark.timeout(120)
def test_show_without_the_graph_shows_the_branches_only_its_merge_combines(sh: Shell) -> None:
    given = '{"items": ["laptop", "desk"], "log": []}'
    paused = sh.json("run", "cli_graphs:approvals", "--thread", "buy", "--input", given, code=3)
    for question in paused["interrupts"]:
        sh("answer", "buy", "yes", "--id", question["id"], "-q", code=None)
    alone = sh.json("show", "buy")
    assert (alone["status"], alone["state"]) == ("done", None)
    assert "conflict on key 'log'" in alone["state_note"]
    assert sorted(b["state"]["log"][0] for b in alone["branches"]) == ["desk=yes", "laptop=yes"]
    told = sh("show", "buy").stdout
    assert "from approve:0:\n" in told and "show -g TARGET merges them" in told
    merged = sh.json("show", "buy", "-g", "cli_graphs:approvals")
    assert sorted(merged["state"]["log"]) == ["desk=yes", "laptop=yes"] and merged["branches"] == []
