"""LangGraph's spellings of a run's options, read into actorgraph's: `config={...}` and `stream_mode=`.

`invoke(input, {"configurable": {"thread_id": "1"}, "recursion_limit": 50})` is
`invoke(input, thread_id="1", recursion_limit=50)`, and `stream(...,
stream_mode="updates")` is `stream(..., mode="updates")`. A value given both
ways must agree; anything else in a `config` (user keys under `configurable`,
callbacks, tags) is refused with the actorgraph way to say it, never ignored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from actorgraph._model.errors import ConfigError

__all__ = ["stream_modes", "with_config"]

_TOP: Final = {"recursion_limit": "recursion_limit"}
_CONFIGURABLE: Final = {"thread_id": "thread_id", "checkpoint_id": "checkpoint_id"}


def with_config(config: Any, keywords: Mapping[str, Any]) -> Mapping[str, Any]:
    """A run's keywords with LangGraph's `config` read into them.

    Raises:
        ConfigError: a `config` that is not a mapping, a key actorgraph does not
            read from one (saying where it goes instead), or a value that
            disagrees with the same option given as a keyword.
    """
    if config is None:
        return keywords
    if not isinstance(config, Mapping):
        msg = (
            "config must be a mapping as LangGraph writes it, such as "
            f"{{'configurable': {{'thread_id': '1'}}, 'recursion_limit': 50}}; got {type(config).__name__}"
        )
        raise ConfigError(msg)
    read: dict[str, Any] = {}
    for key, value in config.items():
        if key == "configurable":
            read.update(_configurable(value))
        elif key in _TOP:
            read[_TOP[key]] = value
        else:
            msg = (
                f"config key {key!r} is not one actorgraph reads (it reads 'configurable' "
                "(thread_id, checkpoint_id) and 'recursion_limit'); pass what a vertex needs as "
                "context=..., which it reads as ctx.context, and events go to listeners=[...]"
            )
            raise ConfigError(msg)
    merged = dict(keywords)
    for name, value in read.items():
        if name in merged and merged[name] is not None and merged[name] != value:
            msg = (
                f"{name} is given twice, as {name}={merged[name]!r} and in config as {value!r}; give it once"
            )
            raise ConfigError(msg)
        merged[name] = value
    return merged


def _configurable(values: Any) -> dict[str, Any]:
    if not isinstance(values, Mapping):
        msg = f"config['configurable'] must be a mapping such as {{'thread_id': '1'}}, got {values!r:.60}"
        raise ConfigError(msg)
    read: dict[str, Any] = {}
    for key, value in values.items():
        if key == "checkpoint_ns" and not value:  # LangGraph's root namespace: the run itself
            continue
        if key not in _CONFIGURABLE:
            msg = (
                f"config['configurable'][{key!r}]: actorgraph reads only thread_id and checkpoint_id "
                f"there; pass {key!r} in context={{{key!r}: ...}}, which vertices read as "
                "ctx.context (a subgraph's run is read with get_state(..., namespace=...))"
            )
            raise ConfigError(msg)
        read[_CONFIGURABLE[key]] = value
    return read


def stream_modes(mode: str | Sequence[str] | None, stream_mode: str | Sequence[str] | None) -> Any:
    """The stream's mode(s): `mode=`, or LangGraph's `stream_mode=` (default "values").

    Raises:
        ConfigError: both are given, and differ.
    """
    if mode is not None and stream_mode is not None and _listed(mode) != _listed(stream_mode):
        msg = f"stream(mode={mode!r}, stream_mode={stream_mode!r}): give the stream's mode once"
        raise ConfigError(msg)
    chosen = mode if mode is not None else stream_mode
    return "values" if chosen is None else chosen


def _listed(mode: str | Sequence[str]) -> Any:
    return mode if isinstance(mode, str) else tuple(mode)
