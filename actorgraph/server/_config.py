"""What the server serves: `langgraph.json` (the file LangGraph users already have) and `-g NAME=TARGET`.

```json
{"dependencies": ["."], "graphs": {"agent": "./agent.py:graph"}, "env": ".env",
 "auth": {"path": "./auth.py:auth"}}
```

`graphs` maps a name to `path/to/file.py:attribute` (relative to the file's
folder) or `package.module:attribute`; `dependencies` are folders put on
`sys.path` (a package name there is left to pip); `env` is a mapping or a
`.env` file, set where the process's environment does not say otherwise;
`auth.path` names an `Auth` object the same way (LangGraph's custom auth:
`langgraph_sdk.Auth` or `actorgraph.server.Auth`). Keys the server does not
use (deployment settings of LangGraph's platform) are named in a warning, not
refused.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson

from actorgraph._model.errors import ConfigError

__all__ = ["ServerConfig", "graph_option", "imported", "read_config"]

_USED: Final = frozenset({"graphs", "dependencies", "env", "webhooks", "auth"})
_NAME: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}")
_ENV_LINE: Final = re.compile(r"\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*")
_LARGEST: Final = 1 << 20  # bytes of a langgraph.json or .env file read


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """The graphs to serve (name -> TARGET text) and where their code and environment come from.

    Attributes:
        graphs: graph name -> `file.py:attribute` or `module:attribute`.
        dependencies: folders put on `sys.path` before the graphs are imported.
        env: environment variables set (where not set already) before they are imported.
        base: the folder relative paths are read from (the config file's).
        webhooks: the `webhooks` object (`allow`, `timeout`, `retry_for`), read by `_webhooks.webhooks_of`.
        auth: the `Auth` object's `file.py:attribute` or `module:attribute`, or None.
    """

    graphs: dict[str, str] = field(default_factory=dict)
    dependencies: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    base: Path = field(default_factory=Path.cwd)
    webhooks: dict[str, Any] = field(default_factory=dict)
    auth: str | None = None

    def apply(self) -> None:
        """Set the environment (the process's own values win) and put the dependencies on `sys.path`."""
        for key, value in self.env.items():
            os.environ.setdefault(key, value)
        for folder in self.dependencies:
            path = (self.base / folder).resolve()
            if path.is_dir() and str(path) not in sys.path:
                sys.path.insert(0, str(path))


def _bounded_text(path: Path, what: str) -> str:
    try:
        with path.open("rb") as file:
            data = file.read(_LARGEST + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read the {what} {str(path)!r}: {exc.strerror or exc}") from None
    if len(data) > _LARGEST:
        raise ConfigError(f"the {what} {str(path)!r} is larger than {_LARGEST} bytes")
    return data.decode("utf-8", "replace")


def read_config(path: str | os.PathLike[str]) -> ServerConfig:
    """Read a `langgraph.json`; keys the server does not use are named in a warning.

    Raises:
        ConfigError: the file cannot be read, is not JSON, or `graphs`, `dependencies`
            or `env` is malformed (the message names the key).
    """
    where = Path(path)
    try:
        data = orjson.loads(_bounded_text(where, "config file"))
    except orjson.JSONDecodeError as exc:
        raise ConfigError(f"the config file {str(where)!r} is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"the config file {str(where)!r} must hold a JSON object")
    unused = sorted(str(k) for k in data if k not in _USED)
    if unused:
        warnings.warn(
            f"{where.name}: {', '.join(unused)} not used by actorgraph server (only graphs, dependencies, "
            "env, webhooks and auth are); ignored",
            stacklevel=2,
        )
    base = where.resolve().parent
    return ServerConfig(
        _graphs(data.get("graphs", {})),
        _dependencies(data.get("dependencies", [])),
        _env(data.get("env", {}), base),
        base,
        _webhooks(data.get("webhooks", {})),
        _auth(data.get("auth"), where.name),
    )


def _auth(value: Any, file: str) -> str | None:
    """`auth.path` (the other keys of LangGraph's `auth`, for its platform, are named in a warning)."""
    if value is None:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("path"), str):
        raise ConfigError('"auth" must be {"path": "./auth.py:auth"}, naming an Auth object')
    unused = sorted(str(k) for k in value if k != "path")
    if unused:
        warnings.warn(
            f"{file}: auth.{', auth.'.join(unused)} not used by actorgraph server; ignored", stacklevel=3
        )
    return _check_target("path", value["path"], "auth")


def _graphs(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        raise ConfigError('"graphs" must map graph names to "path/file.py:attribute" or "module:attribute"')
    out = {}
    for name, target in value.items():
        given = target.get("path") if isinstance(target, dict) else target
        out[check_name(name)] = _check_target(name, given)
    return out


def _webhooks(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError('"webhooks" must be an object, such as {"allow": ["10.0.0.0/8"]}')
    return value


def _dependencies(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError('"dependencies" must be a list of folders (such as ["."]) or package names')
    return tuple(value)


def _env(value: Any, base: Path) -> dict[str, str]:
    if isinstance(value, str):
        return _env_file(base / value)
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigError('"env" must be a mapping of variable names to strings, or the path of a .env file')
    return {str(k): v for k, v in value.items()}


def _env_file(path: Path) -> dict[str, str]:
    out = {}
    for line in _bounded_text(path, ".env file").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        found = _ENV_LINE.fullmatch(line)
        if found is None:
            raise ConfigError(f"{path.name}: {line[:60]!r} is not a KEY=VALUE line")
        value = found.group(2)
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":  # noqa: PLR2004 - quotes
            value = value[1:-1]
        out[found.group(1)] = value
    return out


def check_name(name: Any) -> str:
    """A graph's name, checked: letters, digits, `_`, `.`, `-`, at most 100 characters.

    Raises:
        ConfigError: anything else.
    """
    if not isinstance(name, str) or _NAME.fullmatch(name) is None:
        msg = f"graph name {name!r:.80} is not allowed: use letters, digits, _, . and - (at most 100)"
        raise ConfigError(msg)
    return name


def _check_target(name: str, target: Any, what: str = "graph") -> str:
    if not isinstance(target, str) or ":" not in target or target.endswith(":"):
        msg = (
            f"{what} {name!r}: {target!r:.80} names no {what}: give 'file.py:attribute' or 'module:attribute'"
        )
        raise ConfigError(msg)
    return target


def graph_option(text: str) -> tuple[str, str]:
    """`-g NAME=TARGET` split and checked.

    Raises:
        ConfigError: no `=`, or a bad name or target.
    """
    name, sep, target = text.partition("=")
    if not sep:
        raise ConfigError(f"-g {text!r:.80}: give NAME=TARGET, such as agent=./agent.py:graph")
    return check_name(name), _check_target(name, target)


def imported(name: str, target: str, base: Path, *, what: str = "graph") -> Any:
    """The object TARGET names (`file.py:attribute` relative to `base`, or `module:attribute`).

    Raises:
        ConfigError: naming the graph (or `what` it is), when the file or module cannot be imported
            or has no such attribute.
    """
    where, _, attribute = target.rpartition(":")
    try:
        module = _module(where, base)
        value: Any = module
        for part in attribute.split("."):
            value = getattr(value, part)
    except ConfigError:
        raise
    except Exception as exc:
        msg = f"{what} {name!r}: loading {target} failed: {type(exc).__name__}: {exc}"
        raise ConfigError(msg) from exc
    return value


def _module(where: str, base: Path) -> Any:
    if not (where.endswith(".py") or "/" in where or os.sep in where):
        return importlib.import_module(where)
    path = (base / where).resolve()
    if not path.is_file():
        raise ConfigError(f"no Python file {str(path)!r}: it does not exist or is not a file")
    module_name = path.stem  # importable by that name beside it, as `import agent` would (Ray's workers do)
    known = sys.modules.get(module_name)
    if known is not None:
        if Path(getattr(known, "__file__", "") or "").resolve() == path:
            return known
        msg = f"the file {str(path)!r} has the name of the module {module_name!r} already loaded; rename it"
        raise ConfigError(msg)
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"{str(path)!r} cannot be imported as Python code")
    module = importlib.util.module_from_spec(spec)
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))  # its own imports of the modules beside it work
    sys.modules[module_name] = module  # pickling and dataclasses look the module up by name
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


def targets_of(config: ServerConfig, options: Mapping[str, str]) -> dict[str, str]:
    """The file's graphs, then the `-g` ones (a name given with `-g` replaces the file's)."""
    return {**config.graphs, **options}
