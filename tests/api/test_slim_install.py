"""A slim install: `pip install actorgraph` brings the engine's needs only; the rest is in extras.

The command line and graph files need the `cli` extra (click, rich, PyYAML,
pydantic), `actorgraph serve` the `web` extra too. Without them, the engine
works in full and each front door says, in one line, which extra to install.
The checks run in a fresh interpreter where those packages are not installed,
as far as Python can tell: every finder of `sys.meta_path` finds nothing of them,
so `import click` fails and `importlib.util.find_spec("click")` is None, as
after a plain `pip install actorgraph`.
"""

from __future__ import annotations

import ast
import configparser
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import actorgraph

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(actorgraph.__file__).resolve().parent
SCRIPT = Path(sys.executable).parent / "actorgraph"

ENGINE = {"pykka", "structlog", "cloudpickle", "msgpack"}
CLI = {"click": "click", "rich": "rich", "yaml": "PyYAML", "pydantic": "pydantic"}  # module -> package
WEB = ("starlette", "jinja2", "uvicorn", "multipart", "python_multipart")

# Run first in the child: the packages named in BLOCKED look as if they were never installed.
PRELUDE = '''
import sys


class NotInstalled:
    """One of sys.meta_path's finders, blind to the packages in BLOCKED (and their submodules)."""

    def __init__(self, finder):
        self.finder = finder

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            return None
        find = getattr(self.finder, "find_spec", None)
        return None if find is None else find(name, path, target)

    def __getattr__(self, name):
        return getattr(self.finder, name)


assert not [name for name in BLOCKED if name in sys.modules], "imported before the prelude"
sys.meta_path[:] = [NotInstalled(finder) for finder in sys.meta_path]
'''

ENGINE_RUN = """
import actorgraph as ag

# what only some calls need (OpenSSL's 3 MiB, subprocess's 2 MiB): `import actorgraph` stays small
heavy = sorted(name for name in ("hashlib", "subprocess", "shutil", "socket") if name in sys.modules)

import contextlib, importlib, io, json, pkgutil, tempfile
from pathlib import Path

from actorgraph.checkpoint import SqliteCheckpointer

# every module but the command line's, the graph files' and the server's (their packages themselves import)
skipped = ("actorgraph.cli.", "actorgraph._api.files.", "actorgraph.server")
for module in pkgutil.walk_packages(ag.__path__, "actorgraph."):
    if not module.name.startswith(skipped):
        importlib.import_module(module.name)
import actorgraph.cli, actorgraph._api.files

try:
    import actorgraph.server
    server_error = None
except ag.MissingDependencyError as exc:
    server_error = {"is_ours": isinstance(exc, ag.ActorGraphError), "message": str(exc)}

g = ag.Graph()
g.add_vertex("a", lambda s: {"n": s["n"] + 1})
g.add_vertex("b", lambda s: {"n": s["n"] * 10})
g.add_edge(ag.START, "a")
g.add_edge("a", "b")
g.add_edge("b", ag.END)
with tempfile.TemporaryDirectory() as folder:
    with SqliteCheckpointer(str(Path(folder) / "runs.db")) as store, g.compile(store) as app:
        state = app.invoke({"n": 1}, thread_id="t").state
        status = app.get_state("t").status
        mermaid = app.draw_mermaid("t")

try:
    ag.load_string("name: x")
    load_error = None
except ag.MissingDependencyError as exc:
    load_error = {"is_ours": isinstance(exc, ag.ActorGraphError), "message": str(exc)}

said = {}
for argv in (["--help"], ["serve", "flow.yaml"]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = actorgraph.cli.main(argv)
    said[argv[0]] = {"code": code, "stderr": err.getvalue()}

print(json.dumps({
    "state": state,
    "status": str(status),
    "drawn": "flowchart" in mermaid,
    "load_error": load_error,
    "server_error": server_error,
    "said": said,
    "imported": sorted(name for name in BLOCKED if name in sys.modules),
    "heavy": heavy,
}))
"""


def without(blocked: tuple[str, ...], program: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run `program` in a fresh, isolated interpreter where the `blocked` packages are not installed."""
    code = f"BLOCKED = {sorted(blocked)!r}\n{PRELUDE}\n{program}"
    return subprocess.run(
        [sys.executable, "-I", "-c", code], cwd=cwd, capture_output=True, text=True, timeout=60, check=False
    )


def _requirement_names(lines: str) -> set[str]:
    """The names (lower case) of setup.cfg's requirements, one a line, without versions or extras."""
    return {re.split(r"[\[<>=!~ ;]", line, maxsplit=1)[0].lower() for line in lines.split() if line}


def _setup() -> configparser.ConfigParser:
    setup = configparser.ConfigParser()
    setup.read(ROOT / "setup.cfg")
    return setup


def test_the_base_install_holds_the_engines_needs_only() -> None:
    setup = _setup()
    assert _requirement_names(setup["options"]["install_requires"]) == ENGINE
    assert _requirement_names(setup["options.extras_require"]["cli"]) == {p.lower() for p in CLI.values()}


def test_the_test_extra_installs_every_extra() -> None:
    extras = _setup()["options.extras_require"]
    every = set().union(
        *(
            _requirement_names(extras[part])
            for part in ("cli", "web", "server", "ray", "postgres", "encryption")
        )
    )
    assert every <= _requirement_names(extras["test"])


def _module_level_imports(path: Path) -> set[str]:
    """The top-level names of what a module imports when it is imported (not inside its functions)."""
    found = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            found.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.partition(".")[0])
    return found


def test_only_the_command_line_and_graph_files_import_the_cli_extra() -> None:
    doors = [
        ("cli", "__init__.py"),
        ("cli", "_codes.py"),
        ("_api", "files", "__init__.py"),
        ("server", "__init__.py"),
    ]
    front_doors = {PACKAGE.joinpath(*parts) for parts in doors}  # what runs before the extra is checked
    behind = {"cli", "files", "server"}  # packages whose front door checks their extra first
    importers = {
        str(path.relative_to(PACKAGE)): sorted(_module_level_imports(path) & set(CLI))
        for path in PACKAGE.rglob("*.py")
        if path in front_doors or not (behind & set(path.relative_to(PACKAGE).parts[:-1]))
    }
    assert {path: names for path, names in importers.items() if names} == {}


@pytest.mark.slow
@pytest.mark.parametrize("blocked", [tuple(CLI), ("yaml",)], ids=["no cli extra", "no PyYAML"])
def test_the_engine_runs_and_the_front_doors_name_the_extra(blocked: tuple[str, ...], tmp_path: Path) -> None:
    done = without(blocked, ENGINE_RUN, tmp_path)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["state"] == {"n": 20} and seen["status"] == "done" and seen["drawn"]
    assert seen["imported"] == []
    assert seen["heavy"] == []
    for_files = ", ".join(CLI[name] for name in ("yaml", "pydantic") if name in blocked)
    said = f'graph files need the cli extra ({for_files} not installed): pip install "actorgraph[cli]"'
    assert seen["load_error"] == {"is_ours": True, "message": said}
    if "pydantic" in blocked:  # the server's extra holds pydantic too: its package says so when imported
        said = 'the server needs the server extra (pydantic not installed): pip install "actorgraph[server]"'
        assert seen["server_error"] == {"is_ours": True, "message": said}
    else:
        assert seen["server_error"] is None
    missing = ", ".join(CLI[name] for name in CLI if name in blocked)
    line = f"actorgraph: the command line needs the cli extra ({missing} not installed): pip install "
    assert seen["said"]["--help"] == {"code": 2, "stderr": f'{line}"actorgraph[cli]"\n'}
    assert seen["said"]["serve"] == {"code": 2, "stderr": f'{line}"actorgraph[cli,web]"\n'}


# What `import actorgraph` leaves to the calls that need it (issue 39): the engine loads with
# the first compile(), the names of `actorgraph.__getattr__` with their first use, and the heavy
# stdlib modules with the calls that need them. A module here that comes back to the import fails
# the test, named; what a run without a store leaves out is below it.
LEFT_BY_THE_IMPORT = (
    # the engine: actors, runs, streams, events, the stores' records
    "actorgraph._api.compiled",
    "actorgraph._api.compiling",
    "actorgraph._actors.runtime",
    "actorgraph._actors.handle",
    "actorgraph._api.request",
    "actorgraph.events",
    "actorgraph.checkpoint",
    "pykka",
    # names some programs use: graph files, node caches, pictures
    "actorgraph._api.files",
    "actorgraph.cache",
    "actorgraph.draw",
    # the stdlib: thread pools and logging (pykka's), pickling, suggestions, ids, JSON
    "concurrent.futures",
    "logging",
    "pickle",
    "difflib",
    "uuid",
    "random",
    "json",
)
LEFT_BY_A_RUN = (
    "actorgraph._api.files",
    "actorgraph._api.queued",  # CompiledGraph.submit
    "actorgraph.cache",
    "actorgraph.checkpoint.memory",
    "actorgraph.draw",
    "asyncio",  # ssl's 4 MiB with it
    "getpass",  # who answers: worked out when an answer is claimed
    "hashlib",  # OpenSSL's 3 MiB
    "pickle",
    "shutil",
    "socket",
    "sqlite3",
    "subprocess",
)

LAZY_RUN = """
import sys

import actorgraph as ag

imported = set(sys.modules)
g = ag.Graph()
g.add_vertex("a", lambda s: {"n": s["n"] + 1})
g.add_edge(ag.START, "a")
g.add_edge("a", ag.END)
with g.compile() as app:
    state = app.invoke({"n": 1}).state
ran = set(sys.modules)
listed = dir(ag)
star = {}
exec("from actorgraph import *", star)
import json
print(json.dumps({
    "state": state,
    "imported": sorted(imported),
    "ran": sorted(ran),
    "listed": listed,
    "star": sorted(name for name in star if not name.startswith("__")),
    "submodules": sorted(name for name in ("cache", "checkpoint", "draw", "events", "merge")
                         if type(getattr(ag, name)) is type(ag)),
}))
"""


@pytest.mark.slow
def test_the_import_leaves_the_engine_and_the_rarer_names_to_their_first_use(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-c", LAZY_RUN],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["state"] == {"n": 2}
    assert [name for name in LEFT_BY_THE_IMPORT if name in seen["imported"]] == []
    assert [name for name in LEFT_BY_A_RUN if name in seen["ran"]] == []
    # every public name is there before its first use, for dir() and for `import *`
    assert set(actorgraph.__all__) <= set(seen["listed"])
    assert seen["star"] == sorted(actorgraph.__all__)
    # the public submodules `import actorgraph` used to load as a side effect are still attributes
    assert seen["submodules"] == ["cache", "checkpoint", "draw", "events", "merge"]


def console_script(*args: str) -> str:
    """The child's program for the installed `actorgraph` script, run as the shell runs it, with `args`."""
    run = "runpy.run_path(sys.argv[0], run_name='__main__')"
    return f"sys.argv = {[str(SCRIPT), *args]!r}\nimport runpy\n{run}"


def python_m(*args: str) -> str:
    """The child's program for `python -m actorgraph.cli args...`."""
    return (
        f"sys.argv = {['actorgraph', *args]!r}\nimport runpy\n"
        "runpy.run_module('actorgraph.cli', run_name='__main__', alter_sys=True)"
    )


@pytest.mark.slow
@pytest.mark.parametrize("launch", [console_script, python_m], ids=["console script", "python -m"])
def test_the_command_without_its_extra_says_which_to_install(
    launch: Callable[..., str], tmp_path: Path
) -> None:
    done = without(tuple(CLI), launch("run", "flow.yaml"), tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        "actorgraph: the command line needs the cli extra (click, rich, PyYAML, pydantic not installed): "
        'pip install "actorgraph[cli]"\n'
    )


@pytest.mark.slow
def test_serve_without_the_web_extra_says_which_to_install(tmp_path: Path) -> None:
    done = without(WEB, console_script("serve", "flow.yaml"), tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].endswith('pip install "actorgraph[web]"'), lines


SERVER_ONLY = {"orjson", "croniter", "httpx"}  # the server extra's packages that no other extra brings


def test_only_the_server_imports_the_server_extras_own_packages() -> None:
    # a plain install compiled no graph when the run queue imported orjson (found by CI's wheel check)
    importers = {
        str(path.relative_to(PACKAGE)): sorted(_module_level_imports(path) & SERVER_ONLY)
        for path in PACKAGE.rglob("*.py")
        if "server" not in path.relative_to(PACKAGE).parts[:-1]
    }
    assert {path: names for path, names in importers.items() if names} == {}
