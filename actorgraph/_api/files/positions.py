"""YAML read with where every value came from: `(line, column)` by path, for errors that point at the file."""

from __future__ import annotations

from typing import Any

import yaml

from actorgraph._api.files.reading import compose, construct
from actorgraph._model.errors import ConfigFileError

__all__ = ["KEY", "Located", "combined", "read_yaml"]

Path = tuple[str | int, ...]
_LISTED = 50  # problems a message lists in full


class Located:
    """A parsed document and the position of every mapping key and value in it."""

    def __init__(
        self, data: Any, positions: dict[Path, tuple[int, int]], file: str, quoted: set[Path] | None = None
    ) -> None:
        """Keep the data, the 1-based `(line, column)` of each path, the file name, the quoted scalars."""
        self.data = data
        self.positions = positions
        self.file = file
        self.quoted = quoted or set()

    def data_text_offset(self, path: Path) -> int:
        """Columns from a scalar's position to its text: 1 past an opening quote, else 0."""
        return 1 if path in self.quoted else 0

    def at(self, path: Path) -> tuple[int | None, int | None]:
        """The position of `path`, or of its nearest ancestor that has one."""
        for end in range(len(path), -1, -1):
            found = self.positions.get(path[:end])
            if found is not None:
                return found
        return None, None

    def error(self, problem: str, path: Path) -> ConfigFileError:
        """A `ConfigFileError` at `path`."""
        line, column = self.at(path)
        return ConfigFileError(problem, file=self.file, line=line, column=column)


def combined(found: list[ConfigFileError]) -> ConfigFileError:
    """One error at the first problem of a file, listing the others with their places."""
    first = found[0]
    if len(found) == 1:
        return first
    rest = "\n".join(str(other) for other in found[1:_LISTED])
    if len(found) > _LISTED:  # a file of many wrong values must not make a message as large
        rest += f"\n... and {len(found) - _LISTED} more"
    return ConfigFileError(
        f"{first.problem}\n({len(found) - 1} more problem(s)):\n{rest}",
        file=first.file,
        line=first.line,
        column=first.column,
    )


def read_yaml(text: str, file: str) -> Located:
    """Parse `text` (one YAML document, within `_yaml`'s bounds) keeping the position of every value.

    Raises:
        ConfigFileError: the text is not YAML, holds several documents, is empty, or
            crosses a bound (size, nesting, aliases, tags); at its line and column.
    """
    node = compose(text, file)
    if node is None:
        msg = "the file is empty; a graph file needs at least `vertices:` and `edges:`"
        raise ConfigFileError(msg, file=file)
    reader = _Reader(file)
    data = reader.convert(node, ())
    return Located(data, reader.positions, file, reader.quoted)


KEY = "<key>"  # a path ending in it is where a mapping key (not its value) is


class _Reader:
    """Turns composed YAML nodes into plain values, noting positions."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.positions: dict[Path, tuple[int, int]] = {}
        self.quoted: set[Path] = set()
        self._constructor = yaml.SafeLoader("")

    def convert(self, node: yaml.Node, path: Path) -> Any:
        self.positions.setdefault(path, _mark(node))
        if isinstance(node, yaml.MappingNode):
            out: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                key = self._scalar(key_node)
                if key in out:
                    line, column = _mark(key_node)
                    raise ConfigFileError(
                        f"key {key!r} appears twice", file=self.file, line=line, column=column
                    )
                self.positions[(*path, key, KEY)] = _mark(key_node)
                self.positions[(*path, key)] = _mark(value_node)
                out[key] = self.convert(value_node, (*path, key))
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self.convert(item, (*path, i)) for i, item in enumerate(node.value)]
        if isinstance(node, yaml.ScalarNode) and node.style in ('"', "'"):
            self.quoted.add(path)
        return self._scalar(node)

    def _scalar(self, node: yaml.Node) -> Any:
        if not isinstance(node, yaml.ScalarNode):
            line, column = _mark(node)
            raise ConfigFileError(
                "a mapping key must be a plain value", file=self.file, line=line, column=column
            )
        return construct(node, self._constructor, self.file)


def _mark(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1
