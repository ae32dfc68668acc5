"""What a merge conflict's message says: the values, and the reducer that would keep them all.

`MergeConflictError` lists what the branches wrote (the first 20, and how many
more) and suggests a reducer by the values' types (`append` for lists, `add`
for numbers, `union` for sets, `merge_dicts` for dicts) before `replace`,
saying what `replace` would drop.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["listed", "reducer_advice"]

_SHOWN = 40  # characters of a conflicting value shown in a message
_LISTED = 20  # conflicting values listed in a message


def _short(value: object) -> str:
    text = "<deleted>" if repr(value) == "MISSING" else repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


_KEEPS_ALL = (  # (types of every value, reducer, what it keeps)
    ((list, tuple), "append", "keeps every item every branch appended, each once"),
    ((bool,), "replace", "keeps the last branch's value (by task order)"),
    ((int, float), "add", "sums every branch's change"),
    ((set, frozenset), "union", "keeps every element any branch added"),
    ((dict,), "merge_dicts", "keeps every branch's sub-key changes"),
)


def reducer_advice(key: str, values: Sequence[object]) -> str:
    """Which reducer keeps every branch's change to `key`, then what `replace` would drop."""
    present = [v for v in values if repr(v) != "MISSING"]
    keeps = next(
        (
            (name, what)
            for types_, name, what in _KEEPS_ALL
            if present and all(isinstance(v, types_) for v in present)
        ),
        None,
    )
    replace = f"by_key({{{key!r}: replace}}) keeps only the last branch's value and drops the others' changes"
    if keeps is None or keeps[0] == "replace":
        return (
            f"Give the key a reducer: {replace} (or any binary function f(a, b) that combines "
            f"two values), or change the key in one branch only."
        )
    name, what = keeps
    return (
        f"Give the key a reducer that keeps every branch's change: merge=by_key({{{key!r}: {name}}}) "
        f"(or Annotated[..., {name}] in the state schema) {what}; {replace}. Or change the key "
        f"in one branch only."
    )


def listed(values: Sequence[object]) -> str:
    """`" (3 values: 1, 2, 3)"`: the values a message shows (the first 20, and how many more), or ""."""
    shown = ", ".join(_short(v) for v in values[:_LISTED])
    more = len(values) - _LISTED
    shown += f", and {more} more" if more > 0 else ""
    return f" ({len(values)} values: {shown})" if shown else ""
