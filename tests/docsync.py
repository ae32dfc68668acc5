"""The docs show their code, and the code is the examples' code: `python tests/docsync.py` syncs them.

A Python block in `docs/` is preceded by a comment naming the section of an
example it shows, and holds exactly that section's lines:

    <!-- code: examples/merging.py:exact -->
    ```python title="examples/merging.py"
    ...the lines between `# --8<-- [start:exact]` and `# --8<-- [end:exact]`...
    ```

So a reader of the Markdown (on GitHub, say) sees the code, and the tests,
which run every example, keep it true: `tests/documentation/test_docs.py` fails when a block
and its section differ. After changing an example, run this file to rewrite
the blocks from their sections.
"""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

SOURCE = re.compile(
    r"^<!--\s*code:\s*(?P<path>examples/\S+\.(?:py|yaml)):(?P<section>[a-z][-_0-9a-z]*)\s*-->\s*$"
)
_MARKER = re.compile(r"^\s*# --8<-- \[(start|end):([a-z][-_0-9a-z]*)\]\s*$")


def section(path: Path, name: str) -> list[str]:
    """The lines of section `name` of an example, dedented, without section markers."""
    lines = path.read_text().splitlines()
    inside = False
    out: list[str] = []
    for line in lines:
        marker = _MARKER.match(line)
        if marker and marker[2] == name:
            inside = marker[1] == "start"
            if not inside:
                break
            continue
        if inside and not marker:
            out.append(line)
    if not out:
        msg = f"{path.relative_to(ROOT)} has no section {name!r} (or it is empty)"
        raise LookupError(msg)
    return textwrap.dedent("\n".join(out)).strip("\n").splitlines()


def blocks(page: Path) -> list[tuple[int, str, str, list[str]]]:
    """(line of the comment, example path, section, the block's lines) for every sourced block."""
    lines = page.read_text().splitlines()
    found = []
    for i, line in enumerate(lines):
        source = SOURCE.match(line)
        if source is None:
            continue
        fence = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if not fence.startswith("```"):
            msg = f"{page.relative_to(ROOT)}:{i + 1}: a code comment must be followed by a fenced block"
            raise ValueError(msg)
        end = next(j for j in range(i + 2, len(lines)) if lines[j].strip() == "```")
        found.append((i + 1, source["path"], source["section"], lines[i + 2 : end]))
    return found


def sync(page: Path) -> bool:
    """Rewrite the sourced blocks of `page` from their sections; True if it changed."""
    lines = page.read_text().splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        out.append(lines[i])
        source = SOURCE.match(lines[i])
        if source is None:
            i += 1
            continue
        if i + 1 >= len(lines) or not lines[i + 1].strip().startswith("```"):
            msg = f"{page.relative_to(ROOT)}:{i + 1}: a code comment must be followed by a fenced block"
            raise ValueError(msg)
        out.append(lines[i + 1])  # the opening fence
        end = next(j for j in range(i + 2, len(lines)) if lines[j].strip() == "```")
        out.extend(section(ROOT / source["path"], source["section"]))
        out.append(lines[end])
        i = end + 1
    text = "\n".join(out) + "\n"
    changed = text != page.read_text()
    if changed:
        page.write_text(text)
    return changed


def main() -> int:
    changed = [page for page in sorted(DOCS.rglob("*.md")) if sync(page)]
    for page in changed:
        sys.stdout.write(f"synced {page.relative_to(ROOT)}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
