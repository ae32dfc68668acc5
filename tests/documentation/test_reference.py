"""The reference pages read as Markdown anywhere, and say what the code says.

- The API pages are generated into the repository from the code's signatures and
  docstrings (tests/api_reference.py), the graph-file page from its schema
  (tests/config_reference.py, checked in tests/config/test_config.py): a page that
  differs from what its generator writes now is stale.
- No page keeps a mkdocstrings `:::` marker (empty outside the built site), and no
  page prints a type as Python's `<class '...'>`.
- Every public module has an API page, and every command of the command line says
  which extra it needs.
"""

from __future__ import annotations

import pkgutil
import re
from pathlib import Path

import api_reference
import pytest

import actorgraph

REFERENCE = api_reference.REFERENCE
FRONT_ENDS = {"cli", "web"}  # commands and pages, documented in cli.md and the how-to guides
DOCUMENTED = api_reference.public_classes()  # imports every public module once, when collected


def reference_pages() -> list[Path]:
    return sorted(REFERENCE.glob("*.md"))


@pytest.mark.parametrize(("page", "module"), sorted(api_reference.PAGES.items()))
def test_the_api_page_is_current(page: str, module: str) -> None:
    path = REFERENCE / page
    expected = api_reference.page(path, api_reference.render(module, DOCUMENTED))
    assert path.read_text() == expected, f"docs/reference/{page} is stale: run python tests/api_reference.py"


def test_every_public_module_has_an_api_page() -> None:
    public = {m.name for m in pkgutil.iter_modules(actorgraph.__path__) if not m.name.startswith("_")}
    pages = {module.removeprefix("actorgraph.") for module in api_reference.PAGES.values()}
    assert public - FRONT_ENDS == pages - {"actorgraph"}, (
        "add the module's page to PAGES in tests/api_reference.py"
    )


@pytest.mark.parametrize("path", reference_pages(), ids=lambda p: p.name)
def test_the_page_reads_as_markdown(path: Path) -> None:
    text = path.read_text()
    markers = [n for n, line in enumerate(text.splitlines(), 1) if line.lstrip().startswith(":::")]
    assert not markers, (
        f"{path.name}:{markers}: a mkdocstrings marker is empty outside the site; generate the text"
    )
    assert "<class '" not in text, f"{path.name}: a type printed as <class '...'>, not as a reader writes it"


def test_generated_signatures_keep_the_source_text() -> None:
    index = (REFERENCE / "index.md").read_text()
    assert "def load(" in index
    assert "checkpointer: Checkpointer | bool | None = None," in index
    assert 'durability: str = "sync",' in index
    assert "level: int | str = logging.INFO," in (REFERENCE / "logging.md").read_text()


def cli_sections() -> dict[str, str]:
    """Command -> the text of its section in cli.md, up to the next heading."""
    text = (REFERENCE / "cli.md").read_text()
    parts = re.split(r"^## `actorgraph (\w+)[^`]*`$", text, flags=re.MULTILINE)[1:]
    return {command: body.split("\n## ")[0] for command, body in zip(parts[::2], parts[1::2], strict=True)}


def test_every_command_has_a_section() -> None:
    click = pytest.importorskip("click", reason="the command line needs the cli extra")
    from actorgraph.cli._main import cli

    assert isinstance(cli, click.Group)
    assert set(cli_sections()) == set(cli.commands)


@pytest.mark.parametrize("command", sorted(cli_sections()))
def test_every_command_says_which_extra_it_needs(command: str) -> None:
    extras = {"serve": "cli,web", "server": "cli,server", "crons": "cli,server"}.get(command, "cli")
    first = cli_sections()[command].strip().split("\n\n")[0]
    assert f'pip install "actorgraph[{extras}]"' in first, f"cli.md: say what `actorgraph {command}` needs"
