"""What a server serves: `langgraph.json`, `-g NAME=TARGET`, the kinds of target (others refused at start)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

import actorgraph as ag
from actorgraph import ConfigError
from actorgraph.checkpoint import MemoryCheckpointer
from actorgraph.server import create_app
from actorgraph.server._config import read_config
from actorgraph.server._serve import graphs_of

GRAPH_FILE = """
import os
import actorgraph as ag

def stamp(state):
    return {**state, "flavour": os.environ.get("SERVED_FLAVOUR", "none")}

graph = ag.Graph()
graph.add_vertex("stamp", stamp).add_edge(ag.START, "stamp").add_edge("stamp", ag.END)
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "agent_served.py").write_text(GRAPH_FILE)
    (tmp_path / ".env").write_text('# settings\nSERVED_FLAVOUR="mint"\n')
    config = {
        "dependencies": ["."],
        "graphs": {"agent": "./agent_served.py:graph"},
        "env": ".env",
        "python_version": "3.11",
    }
    (tmp_path / "langgraph.json").write_text(json.dumps(config))
    monkeypatch.delenv("SERVED_FLAVOUR", raising=False)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "agent_served", raising=False)
    return tmp_path


def test_a_langgraph_json_is_read_its_env_set_and_unknown_keys_named(project):
    with pytest.warns(UserWarning, match="python_version"):
        graphs = graphs_of(str(project / "langgraph.json"), ())
    assert set(graphs) == {"agent"}
    assert isinstance(graphs["agent"], ag.Graph)
    assert os.environ["SERVED_FLAVOUR"] == "mint"


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("[1]", "JSON object"),
        ("{nope", "not JSON"),
        ('{"graphs": {"a": "no-colon"}}', "names no graph"),
        ('{"graphs": {"a b": "x.py:g"}}', "not allowed"),
        ('{"dependencies": "."}', "dependencies"),
        ('{"env": {"A": 1}}', "env"),
    ],
)
def test_a_bad_config_is_refused_naming_the_key(tmp_path, content, words):
    (tmp_path / "langgraph.json").write_text(content)
    with pytest.raises(ConfigError, match=words):
        read_config(tmp_path / "langgraph.json")


def test_graph_options_and_unloadable_graphs(project, monkeypatch):
    monkeypatch.chdir(project)
    assert set(graphs_of(None, ["other=./agent_served.py:graph"])) == {"other"}
    for option, words in (
        ("nameonly", "NAME=TARGET"),
        ("a=./missing.py:graph", "missing.py"),
        ("a=./agent_served.py:absent", "absent"),
    ):
        with pytest.raises(ConfigError, match=words):
            graphs_of(None, [option])
    with pytest.raises(ConfigError, match="no graph to serve"):
        graphs_of(None, [])


def test_targets_that_are_not_graphs_are_refused_naming_them(tmp_path):
    kept = ag.Graph()
    kept.add_vertex("a", lambda s: s).add_edge(ag.START, "a").add_edge("a", ag.END)
    with pytest.raises(ConfigError, match="graph 'numbers' is a list"):
        create_app({"numbers": [1, 2]}, db=str(tmp_path / "a.db"))
    owned = "graph 'owned' is a CompiledGraph with its own checkpointer"
    with MemoryCheckpointer() as own, kept.compile(own) as compiled, pytest.raises(ConfigError, match=owned):
        create_app({"owned": compiled}, db=str(tmp_path / "b.db"))
    with pytest.raises(ConfigError, match="SQL database"), MemoryCheckpointer() as memory:
        create_app({"kept": kept}, checkpointer=memory)
    with pytest.raises(ConfigError, match="empty token"):
        create_app({"kept": kept}, db=str(tmp_path / "c.db"), token="")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.slow
def test_the_command_serves_a_config_and_stops_on_sigterm(project):
    port = _free_port()
    command = [
        sys.executable,
        "-m",
        "actorgraph.cli",
        "server",
        "--config",
        "langgraph.json",
        "--port",
        str(port),
        "--db",
        str(project / "cli.db"),
    ]
    child = subprocess.Popen(command, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/ok", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert child.poll() is None, child.stdout.read().decode() if child.stdout else ""
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)
        reply = httpx.post(
            f"http://127.0.0.1:{port}/runs/wait", json={"assistant_id": "agent", "input": {}}, timeout=30
        )
        assert reply.json() == {"flavour": "mint"}
    finally:
        child.terminate()
        child.wait(30)


@pytest.mark.slow
def test_the_command_refuses_a_public_address_without_a_token(project):
    command = [
        sys.executable,
        "-m",
        "actorgraph.cli",
        "server",
        "--config",
        "langgraph.json",
        "--host",
        "0.0.0.0",  # noqa: S104 - refused before binding
        "--port",
        str(_free_port()),
    ]
    done = subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert "--token" in done.stderr
