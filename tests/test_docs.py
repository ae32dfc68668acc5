"""The documentation cannot rot: its code comes from examples, and every example runs.

- Every file in `examples/` runs as a user runs it (a fresh interpreter), unless
  tests/test_examples.py already does, and prints what it should.
- Every `--8<--` snippet in `docs/` names a file (and section) that exists.
- Python code in `docs/` is only ever included from `examples/`, in the block form
  (`--8<--`, the path, `--8<--`): `ruff format` formats Python in Markdown, and
  would rewrite the one-line form `--8<-- "path"` as if it were an expression.
- An output shown in `docs/` (a fenced block after `<!-- output: examples/X.py -->`)
  is what that example prints.
"""

from __future__ import annotations

import functools
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
EXAMPLES = ROOT / "examples"


class Example(NamedTuple):
    """How to run an example, and what its output must contain."""

    args: tuple[str, ...]
    expected: str
    stdin: str = ""


# Examples that tests/test_examples.py does not run; `{tmp}` is a fresh directory.
RUNS: dict[str, Example] = {
    "approval.py": Example(("--db", "{tmp}/a.db", "ask", "release notes"), '"status": "published"', "y\n"),
    "approval_inbox.py": Example((), "inbox empty; every expense settled"),
    "checkpoints.py": Example((), "durability='exit': 1 checkpoint(s)"),
    "from_langgraph.py": Example((), "answered: The answer is 54."),
    "getting_started.py": Example((), "getting started: all steps passed"),
    "human_in_the_loop.py": Example((), "done: {'name': 'Ada', 'age': 36}"),
    "map_reduce.py": Example((), "worker drops 'doc': a superstep runs every vertex with messages"),
    "merging.py": Example((), "with add: {'n': 18, 'total': 18}"),
    "resume_after_crash.py": Example((), "vertex runs: total=1, w0=1, w1=1, w2=1, w3=2, w4=2"),
    "retry_flaky_api.py": Example((), "sunny in Lima; runs: {'prepare': 1, 'fetch': 7}"),
    "streaming.py": Example((), "ainvoke: intro / body / end"),
    "superstep_state.py": Example((), "runs: {'news': 1, 'prices': 2, 'weather': 1}"),
    "supersteps.py": Example((), "superstep 2: left, right"),
}

SNIPPET_BLOCK = "--8<--"
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
    """The examples tests/test_examples.py runs itself."""
    text = (ROOT / "tests" / "test_examples.py").read_text()
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


def snippet_references() -> list[tuple[str, str]]:
    """(page:line, target) for every snippet in the docs; only the block form is allowed."""
    found = []
    for page in doc_pages():
        inside = False
        for number, line in enumerate(page.read_text().splitlines(), 1):
            where = f"{page.relative_to(ROOT)}:{number}"
            if line.strip() == SNIPPET_BLOCK:
                inside = not inside
            elif inside and line.strip():
                found.append((where, line.strip()))
            elif "8<-" in line:
                msg = f"{where}: write a snippet as three lines: --8<--, examples/file.py:section, --8<--"
                raise AssertionError(msg)
        assert not inside, f"{page.relative_to(ROOT)}: a snippet block is not closed"
    return found


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
    assert not untested, f"add these examples to RUNS in tests/test_docs.py: {sorted(untested)}"
    assert set(RUNS) <= files, f"RUNS names examples that do not exist: {sorted(set(RUNS) - files)}"
    assert not set(RUNS) & run_by_test_examples(), "tests/test_examples.py runs these already"


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


def test_the_docs_include_snippets() -> None:
    assert len(snippet_references()) > 50


@pytest.mark.parametrize(("where", "target"), snippet_references())
def test_every_snippet_points_at_an_existing_file_and_section(where: str, target: str) -> None:
    path_text, _, section = target.partition(":")
    path = ROOT / path_text
    assert path.is_file(), f"{where}: {path_text} does not exist"
    assert path_text.startswith("examples/"), f"{where}: include code from examples/, not {path_text}"
    if section:
        markers = section_markers(path).get(section)
        assert markers, f"{where}: {path_text} has no section {section!r}"
        kinds = [kind for kind, _ in markers]
        assert kinds == ["start", "end"], f"{where}: {section!r} needs one start and one end: {markers}"
        (_, start), (_, end) = markers
        assert end > start + 1, f"{where}: section {section!r} of {path_text} is empty"


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.py")), ids=lambda p: p.name)
def test_sections_in_examples_are_balanced(path: Path) -> None:
    for name, markers in section_markers(path).items():
        assert [kind for kind, _ in markers] == ["start", "end"], f"{path.name}: section {name!r}: {markers}"


@pytest.mark.parametrize("page", doc_pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_python_in_the_docs_comes_from_examples(page: Path) -> None:
    for number, info, body in fenced_blocks(page.read_text()):
        if not info.startswith(("python", "py ", "py\t", "pycon")) and info != "py":
            continue
        code = [line.strip() for line in body if line.strip()]
        where = f"{page.relative_to(ROOT)}:{number}"
        assert code, f"{where}: empty code block"
        included = len(code) >= 3 and code[0] == code[-1] == SNIPPET_BLOCK and SNIPPET_BLOCK not in code[1:-1]
        assert included, (
            f"{where}: Python in the docs must be included from an example that a test runs, "
            "as three lines: --8<--, examples/file.py:section, --8<--"
        )


def shown_outputs() -> list[tuple[str, str, list[str]]]:
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
            found.append((where, match["example"], blocks[number + 1]))
    return found


@pytest.mark.parametrize(("where", "example", "shown"), shown_outputs())
def test_outputs_in_the_docs_are_what_the_examples_print(where: str, example: str, shown: list[str]) -> None:
    name = Path(example).name
    assert name in RUNS, f"{where}: {example} is not run by this file"
    printed = {line.rstrip() for line in run(name).stdout.splitlines()}
    missing = [line for line in shown if line.strip() and line.rstrip() not in printed]
    assert not missing, f"{where}: {example} no longer prints {missing}"
