"""Google-style docstrings as Markdown, for the API reference pages (tests/api_reference.py).

Prose stays as written (it is Markdown already). `Args:`, `Attributes:` and `Raises:`
become lists of name, type and text, the type taken from the signature or the class's
annotations; `Returns:` and `Yields:` become one paragraph; `Example:` and the other
titled sections keep their body, dedented, under a bold title.
"""

from __future__ import annotations

import inspect
import re
import textwrap
from collections.abc import Mapping, Sequence

LISTS = {
    "Args": "Args",
    "Arguments": "Args",
    "Parameters": "Args",
    "Attributes": "Attributes",
    "Raises": "Raises",
}
PARAGRAPHS = {"Returns", "Yields"}
BLOCKS = {"Example", "Examples", "Note", "Notes", "Warning", "Warnings", "See Also"}

_TITLE = re.compile(r"^(?P<title>[A-Z][A-Za-z ]*):\s*$")
_ITEM = re.compile(r"^(?P<name>\*{0,2}[A-Za-z_][\w.]*)(?:\s*\((?P<type>[^)]*)\))?:\s*(?P<text>.*)$")

Section = tuple[str, list[str]]
Item = tuple[str, str, str]


def sections(doc: str) -> list[Section]:
    """The parts of a docstring, in order: ("", lines) for prose, (title, dedented body) for a section."""
    parts: list[Section] = [("", [])]
    for line in inspect.cleandoc(doc).splitlines():
        title = _TITLE.match(line)
        if title and title["title"] in LISTS.keys() | PARAGRAPHS | BLOCKS:
            parts.append((title["title"], []))
        elif parts[-1][0] and line and not line.startswith(" "):  # a section ends at prose
            parts.append(("", [line]))
        else:
            parts[-1][1].append(line)
    bodies = [(title, textwrap.dedent("\n".join(lines)).strip("\n").splitlines()) for title, lines in parts]
    return [(title, lines) for title, lines in bodies if title or lines]


def items(lines: Sequence[str]) -> list[Item]:
    """The entries of an `Args:`-like section: (name, type written in the docstring, text)."""
    found: list[list[str]] = []
    for line in lines:
        item = None if line.startswith(" ") else _ITEM.match(line)
        if item:
            found.append([item["name"], item["type"] or "", item["text"]])
        elif found and line.strip():
            found[-1][2] += " " + line.strip()
    return [(name, kind, text) for name, kind, text in found]


def _list(title: str, entries: Sequence[Item], types: Mapping[str, str]) -> str:
    lines = [f"**{title}:**", ""]
    for name, written, text in entries:
        kind = written or types.get(name.lstrip("*"), "")
        shown = f"`{name}`" if title == "Raises" or not kind else f"`{name}` (`{kind}`)"
        lines.append(f"- {shown}: {text}" if text else f"- {shown}")
    return "\n".join(lines)


def _paragraph(title: str, lines: Sequence[str], kind: str) -> str:
    text = " ".join(line.strip() for line in lines if line.strip())
    return f"**{title}:** `{kind}`: {text}" if kind else f"**{title}:** {text}"


def _with_fields(parts: list[Section], fields: Sequence[str]) -> list[Section]:
    """The parts with an `Attributes:` entry for every field the docstring does not describe."""
    described = {name for title, body in parts if title == "Attributes" for name, _, _ in items(body)}
    missing = [name for name in fields if name not in described]
    if not missing:
        return parts
    at = next((i for i, (title, _) in enumerate(parts) if title == "Attributes"), None)
    if at is None:
        return [*parts, ("Attributes", [f"{name}:" for name in missing])]
    title, body = parts[at]
    return [*parts[:at], (title, [*body, *(f"{name}:" for name in missing)]), *parts[at + 1 :]]


def markdown(doc: str, types: Mapping[str, str], *, fields: Sequence[str] = ()) -> str:
    """A docstring as Markdown; `types` gives the types of arguments, attributes and `return`.

    `fields` are a class's own attributes: each one the docstring leaves out is listed too.
    """
    blocks: list[str] = []
    for title, body in _with_fields(sections(doc), fields):
        if not title:
            blocks.append("\n".join(body))
        elif title in LISTS:
            blocks.append(_list(LISTS[title], items(body), types))
        elif title in PARAGRAPHS:
            blocks.append(_paragraph(title, body, types.get("return", "") if title == "Returns" else ""))
        else:
            blocks.append("\n".join([f"**{title}:**", "", *body]))
    return "\n\n".join(block for block in blocks if block.strip())
