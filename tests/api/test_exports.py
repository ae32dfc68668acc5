"""The public surface is deliberate, and no module imports itself through others."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import actorgraph

PACKAGE = Path(actorgraph.__file__).resolve().parent

PUBLIC = {
    "actorgraph": [
        "END",
        "PARENT",
        "START",
        "ActorGraphError",
        "AlreadyAnsweredError",
        "BackendError",
        "CachePolicy",
        "CacheWarning",
        "CheckpointError",
        "ConfigFileError",
        "Command",
        "ConfigError",
        "CompiledGraph",
        "Context",
        "ErrorInfo",
        "Graph",
        "GraphValidationError",
        "GraphValidationWarning",
        "Interrupt",
        "InvalidUpdateError",
        "IsLastStep",
        "MemoryCache",
        "MergeConflictError",
        "MissingDependencyError",
        "RecordedError",
        "RecursionLimitError",
        "RemainingSteps",
        "ResumeError",
        "RetryPolicy",
        "RoutingError",
        "RunCancelledError",
        "RunHandle",
        "RunKeywords",
        "RunResult",
        "RunTimeoutError",
        "Send",
        "SerializationError",
        "StoreError",
        "Snapshot",
        "StreamWriter",
        "SqliteCache",
        "StuckVertexWarning",
        "SuperstepState",
        "ThreadNotFoundError",
        "VertexActorDiedError",
        "VertexError",
        "VertexOptions",
        "VertexResult",
        "VertexTimeoutError",
        "get_stream_writer",
        "interrupt",
        "load",
        "load_string",
    ],
    "actorgraph.merge": [
        "MISSING",
        "Merge",
        "Reducer",
        "add",
        "append",
        "apply_rule",
        "by_key",
        "has_keys",
        "merge_dicts",
        "replace",
        "three_way",
        "union",
        "works_by_key",
    ],
    "actorgraph.checkpoint": [
        "SCHEMA_VERSION",
        "AnswerRow",
        "CheckpointRow",
        "Checkpointer",
        "EncryptedSerializer",
        "MemoryCheckpointer",
        "MsgpackSerializer",
        "PickleSerializer",
        "PostgresCheckpointer",
        "Serializer",
        "SqliteCheckpointer",
        "ThreadInfo",
        "WriteRow",
    ],
    "actorgraph.events": [
        "CheckpointSaved",
        "Custom",
        "Event",
        "Interrupted",
        "JoinWaiting",
        "Listener",
        "MessageChunk",
        "RetryScheduled",
        "RunFinished",
        "RunStarted",
        "SuperstepCommitted",
        "SuperstepStarted",
        "TaskFinished",
        "TaskScheduled",
        "TaskStarted",
    ],
    "actorgraph.logging": ["configure"],
    "actorgraph.testing": ["FakeClock", "ScriptedModel"],
    "actorgraph.func": ["Entrypoint", "TaskFunction", "TaskFuture", "entrypoint", "task"],
    "actorgraph.prebuilt": [
        "InjectedState",
        "InjectedStore",
        "InjectedToolCallId",
        "ModelVertex",
        "Tool",
        "ToolCallError",
        "ToolNode",
        "as_tool",
        "create_react_agent",
        "tools_condition",
    ],
    "actorgraph.draw": ["render_png", "to_dot", "to_mermaid"],
    "actorgraph.store": [
        "BaseStore",
        "Item",
        "MemoryStore",
        "PostgresStore",
        "SearchItem",
        "SqliteStore",
        "StoreError",
    ],
    "actorgraph.messages": [
        "REMOVE_ALL_MESSAGES",
        "AddMessages",
        "AnyMessage",
        "MessagesState",
        "RemoveMessage",
        "add_messages",
        "coerce_message",
        "content_of",
        "id_of",
        "last_message",
        "message",
        "role_of",
        "tool_calls_of",
        "tool_message",
    ],
    "actorgraph.cache": ["MemoryCache", "SqliteCache"],
    "actorgraph.cli": ["main"],
    "actorgraph.web": ["app"],
    "actorgraph.worker": ["Submitted", "run"],
    "actorgraph.server": ["Auth", "Cron", "Crons", "Limits", "Webhooks", "create_app"],
}


def test_the_public_surface_is_pinned() -> None:
    for name, exported in PUBLIC.items():
        module = importlib.import_module(name)
        assert sorted(module.__all__) == sorted(exported), name
        for attr in exported:
            assert getattr(module, attr) is not None, f"{name}.{attr}"


def test_every_public_name_has_a_docstring() -> None:
    for name, exported in PUBLIC.items():
        module = importlib.import_module(name)
        assert module.__doc__, name
        for attr in exported:
            value = getattr(module, attr)
            if inspect.isclass(value) or inspect.isfunction(value):
                assert value.__doc__, f"{name}.{attr} has no docstring"


def test_only_public_modules_have_public_names() -> None:
    names = {m.name for m in pkgutil.iter_modules(actorgraph.__path__)}
    public = {n for n in names if not n.startswith("_")}
    assert public == {
        "merge",
        "checkpoint",
        "events",
        "logging",
        "testing",
        "draw",
        "ray",
        "cli",
        "web",
        "worker",
        "server",
        "messages",
        "store",
        "cache",
        "prebuilt",
        "func",
    }


# -- layering: the layers themselves are an import-linter contract (pyproject.toml, `lint-imports`) --


def test_the_top_of_the_package_holds_the_layers_and_the_public_modules() -> None:
    entries = sorted(p.name for p in PACKAGE.iterdir() if p.name != "__pycache__")
    assert len(entries) <= 23, entries  # the layers, the public modules and __init__.py
    assert {"_model", "_engine", "_build", "_actors", "_api"} <= set(entries)


def _module_name(path: Path) -> str:
    relative = path.relative_to(PACKAGE).with_suffix("")
    parts = [p for p in relative.parts if p != "__init__"]
    return ".".join(["actorgraph", *parts])


def _full_imports(path: Path) -> set[str]:
    """Every actorgraph module a file imports, by full dotted name (TYPE_CHECKING and local imports too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("actorgraph"):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("actorgraph."))
    return found


def test_no_module_imports_itself_through_others() -> None:
    """No import cycle, counting imports under TYPE_CHECKING and inside functions."""
    graph = {_module_name(p): _full_imports(p) for p in PACKAGE.rglob("*.py")}
    cycles = []
    for start in sorted(graph):
        stack = [(start, [start])]
        seen = set()
        while stack:
            module, path = stack.pop()
            for target in sorted(graph.get(module, ())):
                if target == start:
                    cycles.append(" -> ".join([*path, start]))
                elif target not in seen and target in graph:
                    seen.add(target)
                    stack.append((target, [*path, target]))
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


@pytest.mark.slow
def test_a_run_with_a_store_imports_none_of_the_optional_libraries(tmp_path: Path) -> None:
    """They stay dependencies, imported only where used: the log renderer, the pickle serializer, and
    the command line's and graph files' libraries (click, rich, PyYAML, pydantic), and the web
    inbox's (starlette, jinja2, uvicorn)."""
    import subprocess
    import sys

    program = f"""
import sys
import actorgraph as ag
from actorgraph.checkpoint import SqliteCheckpointer
g = ag.Graph()
g.add_vertex("a", lambda s: {{"n": s["n"] + 1}})
g.add_edge(ag.START, "a")
g.add_edge("a", ag.END)
with SqliteCheckpointer({str(tmp_path / "runs.db")!r}) as store, g.compile(store) as app:
    assert app.invoke({{"n": 1}}, thread_id="t").state == {{"n": 2}}
optional = ("structlog", "cloudpickle", "click", "rich", "yaml", "pydantic", "starlette", "jinja2", "uvicorn")
print(sorted(m for m in optional if m in sys.modules))
"""
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"
