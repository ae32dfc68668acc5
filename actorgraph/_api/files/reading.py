"""Reading a graph file with bounds: its size, its nesting, what its aliases expand to, plain values only.

PyYAML's `SafeLoader` (never a parser of our own) composes the document; the
subclass here counts as it goes, so a billion-laughs file, a recursive alias or
ten thousand nested brackets stop at the place that crossed a limit, quickly,
as a `ConfigFileError` with the file, line and column. Every failure of reading
(bytes that are not UTF-8, characters YAML refuses, a tag such as
`!!python/object`, a value PyYAML cannot construct) is one too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import yaml

from actorgraph._model.errors import ConfigFileError

__all__ = ["MAX_ALIASED", "MAX_BYTES", "MAX_DEPTH", "MAX_NODES", "compose", "construct", "read_file"]

MAX_BYTES = 1_000_000  # of a graph file (characters, for load_string)
MAX_DEPTH = 100  # levels of nested lists and mappings, aliases expanded
MAX_NODES = 100_000  # values in the document, aliases expanded
MAX_ALIASED = 10_000  # values that aliases add to the document

_YAML = "tag:yaml.org,2002:"
_PLAIN = frozenset(
    _YAML + kind for kind in ("str", "int", "float", "bool", "null", "timestamp", "seq", "map")
)
_HINTS = {
    _YAML + "merge": "merge keys (<<) are not supported: write the keys out, or quote '<<'",
    _YAML + "value": "a bare = is YAML's value key: quote it ('=')",
}
_PLAIN_ONLY = (
    "a graph file holds plain values (text, numbers, true/false, null, lists and mappings); "
    "it names Python functions as text, e.g. fn: package.module:function"
)


def read_file(path: str | Path) -> str:
    """The text of a graph file: at most `MAX_BYTES` bytes of UTF-8.

    Raises:
        ConfigFileError: the file cannot be read (missing, a folder, no permission),
            is too large, or is not UTF-8; where the bytes are, with their line and column.
    """
    try:
        with Path(path).open("rb") as stream:
            data = stream.read(MAX_BYTES + 1)
    except (OSError, ValueError) as exc:
        problem = getattr(exc, "strerror", None) or str(exc)
        raise ConfigFileError(f"cannot read the graph file: {problem}", file=str(path)) from None
    if len(data) > MAX_BYTES:
        line, column = _place(data, MAX_BYTES)
        msg = f"the file is larger than {MAX_BYTES:,} bytes, the limit for a graph file (passed here)"
        raise ConfigFileError(msg, file=str(path), line=line, column=column)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = _place(data, exc.start)
        msg = f"the file is not UTF-8 text: byte 0x{data[exc.start]:02x} cannot be read; save it as UTF-8"
        raise ConfigFileError(msg, file=str(path), line=line, column=column) from None


def _place(data: bytes, offset: int) -> tuple[int, int]:
    """The 1-based line and column (in characters) of a byte offset."""
    start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset) + 1, len(data[start:offset].decode("utf-8", errors="replace")) + 1


def compose(text: str, file: str) -> yaml.Node | None:
    """The document's node tree (None for an empty text), within the limits above.

    Raises:
        ConfigFileError: the text is too large, is not YAML, holds several documents,
            a tag, or crosses a limit; at the place where it does.
    """
    if len(text) > MAX_BYTES:
        line = text.count("\n", 0, MAX_BYTES) + 1
        column = MAX_BYTES - text.rfind("\n", 0, MAX_BYTES)
        msg = f"the text is longer than {MAX_BYTES:,} characters, the limit for a graph file (passed here)"
        raise ConfigFileError(msg, file=file, line=line, column=column)
    try:
        loader = _BoundedLoader(text, file)
    except yaml.reader.ReaderError as exc:
        raise _unreadable(exc, text, file) from None
    try:
        return loader.get_single_node()
    except yaml.reader.ReaderError as exc:
        raise _unreadable(exc, text, file) from None
    except yaml.MarkedYAMLError as exc:
        context = f" ({exc.context})" if exc.context else ""
        raise _at_mark(f"not valid YAML: {exc.problem}{context}", file, exc.problem_mark) from None
    except yaml.YAMLError as exc:
        raise ConfigFileError(f"not valid YAML: {exc}", file=file) from None
    except RecursionError:  # not expected within MAX_DEPTH; a clear error all the same
        raise ConfigFileError(f"nested too deeply: at most {MAX_DEPTH} levels", file=file) from None
    finally:
        loader.dispose()


def construct(node: yaml.Node, constructor: yaml.SafeLoader, file: str) -> Any:
    """The value of a scalar node (text, a number, a date, ...), or a located error."""
    try:
        return constructor.construct_object(node)
    except yaml.MarkedYAMLError as exc:
        raise _at_mark(
            f"cannot read this value: {exc.problem}", file, exc.problem_mark or node.start_mark
        ) from None
    except (ValueError, OverflowError) as exc:  # a date out of range, an integer of 5,000 digits
        raise _at_mark(f"cannot read this value: {exc}", file, node.start_mark) from None


def _at_mark(problem: str, file: str, mark: Any) -> ConfigFileError:
    """A `ConfigFileError` at a PyYAML mark (0-based line and column), if there is one."""
    if mark is None:
        return ConfigFileError(problem, file=file)
    return ConfigFileError(problem, file=file, line=mark.line + 1, column=mark.column + 1)


def _unreadable(exc: yaml.reader.ReaderError, text: str, file: str) -> ConfigFileError:
    position = min(max(exc.position, 0), len(text))
    line = text.count("\n", 0, position) + 1
    column = position - text.rfind("\n", 0, position)
    code = exc.character if isinstance(exc.character, int) else ord(exc.character or "\0")
    msg = f"the character U+{code:04X} is not allowed in YAML: remove it, or write it as an escape in quotes"
    return ConfigFileError(msg, file=file, line=line, column=column)


class _BoundedLoader(yaml.SafeLoader):
    """`SafeLoader` that counts while it composes: depth, values, what aliases add; plain tags only."""

    def __init__(self, text: str, file: str) -> None:
        super().__init__(text)
        self._file = file
        self._depth = 0  # of the node being composed
        self._composed = 0  # nodes written in the file
        self._aliased = 0  # nodes that aliases add (each alias adds what its anchor holds)
        self._sizes: dict[int, tuple[int, int]] = {}  # id(node) -> (nodes, levels), once complete

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        """One node, refused when it crosses a limit or carries a tag that is not plain."""
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
            node = cast("yaml.Node", super().compose_node(parent, index))  # None only for an empty stream
            self._expand(node, mark)
            return node
        mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
        if self._depth >= MAX_DEPTH:
            raise _at_mark(
                f"nested too deeply: at most {MAX_DEPTH} levels of lists and mappings", self._file, mark
            )
        self._depth += 1
        node = cast("yaml.Node", super().compose_node(parent, index))
        self._depth -= 1
        self._finish(node)
        return node

    def _finish(self, node: yaml.Node) -> None:
        if node.tag not in _PLAIN:
            shown = node.tag.replace(_YAML, "!!")
            problem = _HINTS.get(node.tag, f"the tag {shown} is not allowed: {_PLAIN_ONLY}")
            raise _at_mark(problem, self._file, node.start_mark)
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = node.value
        elif isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        sizes = [self._sizes[id(child)] for child in children]
        self._sizes[id(node)] = (1 + sum(n for n, _ in sizes), 1 + max((d for _, d in sizes), default=0))
        self._composed += 1
        self._check_total(node.start_mark)

    def _expand(self, node: yaml.Node, mark: Any) -> None:
        found = self._sizes.get(id(node))
        if found is None:
            problem = "recursive alias: it refers to a list or mapping that contains it"
            raise _at_mark(problem, self._file, mark)
        nodes, levels = found
        if self._depth + levels > MAX_DEPTH:
            problem = f"nested too deeply with this alias expanded: at most {MAX_DEPTH} levels"
            raise _at_mark(problem, self._file, mark)
        self._aliased += nodes
        if self._aliased > MAX_ALIASED:
            problem = (
                f"aliases expand to more than {MAX_ALIASED:,} values (a billion laughs?): "
                "write the values out, or alias only small ones"
            )
            raise _at_mark(problem, self._file, mark)
        self._check_total(mark)

    def _check_total(self, mark: Any) -> None:
        if self._composed + self._aliased > MAX_NODES:
            problem = f"the file holds more than {MAX_NODES:,} values, the limit for a graph file"
            raise _at_mark(problem, self._file, mark)
