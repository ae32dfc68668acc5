"""The documentation cannot rot: its code is the examples' code, and every example runs.

- Every file in `examples/` runs as a user runs it (a fresh interpreter), unless
  tests/documentation/test_examples.py already does, and prints what it should.
- Python code in `docs/` is written in the page (readable on GitHub as it
  stands), after a comment naming the section of an example it shows
  (`<!-- code: examples/X.py:section -->`), and is exactly that section
  (`tests/docsync.py` rewrites the blocks after an example changes). The API
  reference's generated part is the exception: its signatures and docstring
  examples are the code's own, kept current by tests/documentation/test_reference.py.
- An output shown in `docs/` (a fenced block after `<!-- output: examples/X.py -->`)
  is what that example prints.
- A page in `AS_IT_STANDS` is a program as it stands: its Python blocks, imports
  included, run in order in a fresh interpreter, and print what the page shows.
"""

from __future__ import annotations

import functools
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

import api_reference
import docsync
import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
EXAMPLES = ROOT / "examples"


class Example(NamedTuple):
    """How to run an example, and what its output must contain."""

    args: tuple[str, ...]
    expected: str
    stdin: str = ""


# Examples that tests/documentation/test_examples.py does not run; `{tmp}` is a fresh directory.
RUNS: dict[str, Example] = {
    "agent.py": Example((), "Lima: sunny after 3 attempts"),
    "functional.py": Example((), "calls after the answer: {'outline': 1, 'section': 3}"),
    "nested_invoke.py": Example((), "done: published=True, runs: {'draft': 1, 'review': 1}"),
    "live_interrupts.py": Example((), "fallback: shipped=True, charged 2 time(s)"),
    "approval.py": Example(("--db", "{tmp}/a.db", "ask", "release notes"), '"status": "published"', "y\n"),
    "approval_inbox.py": Example((), "inbox empty; every expense settled"),
    "cache_and_defer.py": Example((), "the model was called 2 times"),
    "checkpoints.py": Example((), "durability='exit': 1 checkpoint(s)"),
    "from_langgraph.py": Example((), "answered: The answer is 54."),
    "getting_started.py": Example((), "getting started: all steps passed"),
    "human_in_the_loop.py": Example((), "done: {'name': 'Ada', 'age': 36}"),
    "map_reduce.py": Example((), "worker drops 'doc': a superstep runs every vertex with messages"),
    "memory_store.py": Example((), "memory store: all steps passed"),
    "merging.py": Example((), "with add: {'n': 18, 'total': 18}"),
    "resume_after_crash.py": Example((), "vertex runs: total=1, w0=1, w1=1, w2=1, w3=2, w4=2"),
    "approval_yaml.py": Example((), "done Release notes: draft 2. Revised to mention the fix."),
    "ray_backend.py": Example((), "the driver among them: False"),
    "ray_cluster.py": Example((), "local Ray: done, 2 vertices ran on Ray nodes"),
    "retry_flaky_api.py": Example((), "sunny in Lima; runs: {'prepare': 1, 'fetch': 7}"),
    "schemas_and_updates.py": Example((), "then: {'answer': '2 note(s) on tides'}"),
    "streaming.py": Example((), "ainvoke: intro / body / end"),
    "subgraphs.py": Example((), "research's own history, newest first: [(2, ()), (1, ('summarize',))"),
    "stateful_subgraphs.py": Example((), "answered 'and my email?' (note 4)"),
    "supervisor.py": Example((), "turns: researcher -> writer: need more -> researcher -> writer"),
    "superstep_state.py": Example((), "runs: {'news': 1, 'prices': 2, 'weather': 1}"),
    "supersteps.py": Example((), "superstep 2: left, right"),
    "tracing.py": Example((), "11 spans in 1 trace"),
    "workers.py": Example((), "notes-tides published: True True"),
    "serve_over_http.py": Example((), "conversation: ['hi', 'you said hi']"),
    "serve_crons.py": Example((), "the cron ran at least 3 times; the client lists the daily cron"),
    "webhooks.py": Example((), "delivered and verified: success {'n': 2}"),
    "webhook_verify.py": Example((), "replayed an hour later: False"),
    "serve_many_users.py": Example((), "bob reads it: 404 {'detail': 'thread alice-notes not found'}"),
}

# Pages whose code blocks, in order, are a program a reader can copy and run: imports included.
AS_IT_STANDS = [
    "how-to/from-langgraph.md",
    "how-to/build-an-agent.md",
    "how-to/supervisor.md",
]

FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+|~~~+)(?P<info>.*)$")
OUTPUT = re.compile(r"^<!--\s*output:\s*(?P<example>examples/\S+\.py)\s*-->\s*$")


class Run(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


@functools.cache
def run(name: str) -> Run:
    """Run an example once per session, in a fresh interpreter and a scratch directory."""
    example = RUNS[name]
    with tempfile.TemporaryDirectory() as scratch:
        args = [arg.replace("{tmp}", scratch) for arg in example.args]
        done = subprocess.run(
            [sys.executable, str(EXAMPLES / name), *args],
            input=example.stdin,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            cwd=scratch,  # an example that wrote to its working directory would write here
        )
    return Run(done.returncode, done.stdout, done.stderr)


def run_by_test_examples() -> set[str]:
    """The examples tests/documentation/test_examples.py runs itself."""
    text = (ROOT / "tests" / "documentation" / "test_examples.py").read_text()
    return set(re.findall(r'run_example\(\s*"([^"]+\.py)"', text))


def doc_pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def fenced_blocks(text: str) -> list[tuple[int, str, list[str]]]:
    """Every fenced block of a page: (line number of the fence, info string, lines)."""
    blocks: list[tuple[int, str, list[str]]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        fence = opening["fence"]
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            body.append(lines[j])
            j += 1
        blocks.append((i + 1, opening["info"].strip(), body))
        i = j + 1
    return blocks


def section_markers(path: Path) -> dict[str, list[tuple[str, int]]]:
    """Section name -> its markers ("start" / "end", line number), in file order."""
    markers: dict[str, list[tuple[str, int]]] = {}
    pattern = re.compile(r"^\s*# --8<-- \[(start|end):([a-z][-_0-9a-z]*)\]\s*$")
    for number, line in enumerate(path.read_text().splitlines(), 1):
        match = pattern.match(line)
        if match:
            markers.setdefault(match[2], []).append((match[1], number))
    return markers


# -- every example runs -------------------------------------------------------------------------


def test_every_example_is_run_by_a_test() -> None:
    files = {path.name for path in EXAMPLES.glob("*.py")}
    untested = files - run_by_test_examples() - set(RUNS)
    assert not untested, f"add these examples to RUNS in tests/documentation/test_docs.py: {sorted(untested)}"
    assert set(RUNS) <= files, f"RUNS names examples that do not exist: {sorted(set(RUNS) - files)}"
    assert not set(RUNS) & run_by_test_examples(), "tests/documentation/test_examples.py runs these already"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(RUNS))
def test_example_runs_and_prints_what_it_shows(name: str) -> None:
    result = run(name)
    assert result.returncode == 0, f"{name} failed:\n{result.stderr}"
    assert RUNS[name].expected in result.stdout, result.stdout


def test_the_streaming_example_logs_with_structlog() -> None:
    result = run("streaming.py")
    assert '"event": "run finished"' in result.stderr
    assert '"thread_id": "logged"' in result.stderr


# -- the docs point at real code ----------------------------------------------------------------


def sourced_blocks() -> list[tuple[str, str, str, list[str]]]:
    """(page:line, example, section, lines) for every Python block in the docs."""
    return [
        (f"{page.relative_to(ROOT)}:{number}", example, section, body)
        for page in doc_pages()
        for number, example, section, body in docsync.blocks(page)
    ]


def test_the_docs_show_code_from_examples() -> None:
    assert len(sourced_blocks()) > 50


@pytest.mark.parametrize(("where", "example", "section", "body"), sourced_blocks())
def test_every_block_is_exactly_its_section_of_an_example(
    where: str, example: str, section: str, body: list[str]
) -> None:
    expected = docsync.section(ROOT / example, section)
    assert body == expected, f"{where}: differs from {example}:{section}; run python tests/docsync.py"


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.py")), ids=lambda p: p.name)
def test_sections_in_examples_are_balanced(path: Path) -> None:
    for name, markers in section_markers(path).items():
        assert [kind for kind, _ in markers] == ["start", "end"], f"{path.name}: section {name!r}: {markers}"


@pytest.mark.parametrize("page", doc_pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_python_in_the_docs_comes_from_examples(page: Path) -> None:
    text = page.read_text()
    generated = api_reference.generated_lines(text)  # signatures and docstrings, kept by test_reference.py
    for number, info, body in fenced_blocks(text):
        python = info.startswith(("python", "py ", "py\t", "pycon")) or info == "py"
        if not python or number in generated:
            continue
        where = f"{page.relative_to(ROOT)}:{number}"
        assert any(line.strip() for line in body), f"{where}: empty code block"
        sourced = {line for line, *_ in docsync.blocks(page)}
        assert number - 1 in sourced, (
            f"{where}: Python in the docs must be a section of an example that a test runs, "
            "after a comment naming it: <!-- code: examples/file.py:section -->"
        )


def shown_outputs() -> list[Any]:
    """(page:line, example, lines) for every output block in the docs."""
    found = []
    for page in doc_pages():
        text = page.read_text()
        lines = text.splitlines()
        blocks = {number: body for number, _, body in fenced_blocks(text)}
        for number, line in enumerate(lines, 1):
            match = OUTPUT.match(line)
            if match is None:
                continue
            where = f"{page.relative_to(ROOT)}:{number}"
            assert number + 1 in blocks, f"{where}: an output marker must be followed by a fenced block"
            marks = [pytest.mark.slow] if "ray" in match["example"] else []  # starts a Ray cluster
            found.append(pytest.param(where, match["example"], blocks[number + 1], marks=marks))
    return found


@pytest.mark.parametrize(("where", "example", "shown"), shown_outputs())
def test_outputs_in_the_docs_are_what_the_examples_print(where: str, example: str, shown: list[str]) -> None:
    name = Path(example).name
    assert name in RUNS, f"{where}: {example} is not run by this file"
    printed = {line.rstrip() for line in run(name).stdout.splitlines()}
    missing = [line for line in shown if line.strip() and line.rstrip() not in printed]
    assert not missing, f"{where}: {example} no longer prints {missing}"


# -- pages whose code runs as it stands ------------------------------------------------------------


def page_program(page: Path) -> str:
    """The page's Python blocks in order, as one script (`from __future__` lines first, as Python wants)."""
    lines = [
        line
        for _, example, _, body in docsync.blocks(page)
        if example.endswith(".py")
        for line in [*body, ""]
    ]
    future = [line for line in lines if line.startswith("from __future__ ")]
    return "\n".join([*dict.fromkeys(future), *(line for line in lines if line not in future)])


@pytest.mark.slow
@pytest.mark.parametrize("name", AS_IT_STANDS)
def test_the_page_s_code_runs_as_it_stands_and_prints_what_it_shows(name: str, tmp_path: Path) -> None:
    page = DOCS / name
    script = tmp_path / "page.py"
    script.write_text(page_program(page))
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path
    )
    assert done.returncode == 0, f"{name}: its code blocks do not run as they stand:\n{done.stderr}"
    printed = {line.rstrip() for line in done.stdout.splitlines()}
    text = page.read_text()
    blocks = {number: body for number, _, body in fenced_blocks(text)}
    for number, line in enumerate(text.splitlines(), 1):
        if OUTPUT.match(line):
            missing = [
                shown for shown in blocks[number + 1] if shown.strip() and shown.rstrip() not in printed
            ]
            assert not missing, f"{name}:{number}: its code, run as it stands, does not print {missing}"


def test_a_page_that_runs_as_it_stands_begins_with_its_imports() -> None:
    for name in AS_IT_STANDS:
        first = docsync.blocks(DOCS / name)[0]
        assert first[2] == "imports", (
            f"{name}: its first code block is {first[1]}:{first[2]}, not the imports"
        )


# -- the examples in the reference's docstrings run as they stand ----------------------------------

# a docstring example that cannot run alone, with why
NOT_ALONE = {"actorgraph.worker": "it starts a worker that serves a PostgreSQL queue until it is stopped"}
_DOC_BLOCK = re.compile(r"^(?P<indent> *)```python\n(?P<code>.*?)^(?P=indent)```$", re.MULTILINE | re.DOTALL)


def docstring_examples() -> list[Any]:
    """(where, code) for every Python block in the docstrings the API reference shows."""
    import importlib
    import inspect
    import textwrap

    found = []
    for module_name in sorted(set(api_reference.PAGES.values())):
        module = importlib.import_module(module_name)
        owners = [(module_name, module)]
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            owners.append((f"{module_name}.{name}", value))
            if inspect.isclass(value):
                owners.extend((f"{module_name}.{name}.{m}", v) for m, v in vars(value).items() if callable(v))
        for where, owner in owners:
            doc = inspect.getdoc(owner) if not isinstance(owner, str) else None
            for match in _DOC_BLOCK.finditer(doc or ""):
                skip = NOT_ALONE.get(where)
                marks = [pytest.mark.skip(reason=skip)] if skip else []
                found.append(pytest.param(where, textwrap.dedent(match["code"]), marks=marks, id=where))
    return found


@pytest.mark.slow
@pytest.mark.parametrize(("where", "code"), docstring_examples())
def test_a_docstring_example_runs_as_it_stands(where: str, code: str, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(code)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path
    )
    assert done.returncode == 0, (
        f"the example in {where}'s docstring does not run as it stands:\n{done.stderr}"
    )
