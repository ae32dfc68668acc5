"""`serve`: the graphs of a `langgraph.json` (or named one by one) served with uvicorn until stopped."""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from actorgraph._model.errors import ConfigError
from actorgraph.server._app import create_app
from actorgraph.server._config import ServerConfig, graph_option, imported, read_config
from actorgraph.server._guard import is_loopback

__all__ = ["graphs_of", "serve"]

log = logging.getLogger("actorgraph.server")


def graphs_of(config: str | None, graphs: Sequence[str]) -> dict[str, Any]:
    """The objects to serve, by name: the config file's graphs, then `-g NAME=TARGET` ones (which win).

    The file's `env` is set and its `dependencies` put on `sys.path` before any graph is imported.

    Raises:
        ConfigError: a bad file or option, or a graph that cannot be imported (naming it).
    """
    settings = read_config(config) if config is not None else ServerConfig()
    named = dict(graph_option(text) for text in graphs)
    targets = {**settings.graphs, **named}
    if not targets:
        raise ConfigError("no graph to serve: give --config langgraph.json or -g NAME=path/to/file.py:graph")
    settings.apply()
    base = settings.base if config is not None else Path.cwd()
    return {
        name: imported(name, target, base if name not in named else Path.cwd())
        for name, target in targets.items()
    }


def _bound(host: str) -> tuple[str, ...]:
    """The bound address as a Host header names it; nothing for a wildcard (0.0.0.0, ::)."""
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return (host,) if host else ()
    return () if address.is_unspecified else (str(address) if address.version == 4 else f"[{address}]",)  # noqa: PLR2004


def check_binding(host: str, token: str | None) -> None:
    """Refuse to serve beyond loopback without a token, or with an empty one.

    Raises:
        ConfigError: saying what to give.
    """
    if token is not None and not token.strip():
        raise ConfigError("--token is empty: an empty token protects nothing; give a long random one")
    if token is None and not is_loopback(host):
        msg = (
            f"{host} is not a loopback address, so anyone who reaches it could run the graphs and read "
            "every thread: give --token TOKEN (or $ACTORGRAPH_TOKEN), or bind 127.0.0.1"
        )
        raise ConfigError(msg)


def serve(  # noqa: PLR0913 - what to serve, where, and who may call: all keyword-only
    *,
    config: str | None = None,
    graphs: Sequence[str] = (),
    db: str | None = None,
    dsn: str | None = None,
    host: str = "127.0.0.1",
    port: int = 2024,
    token: str | None = None,
    allow_hosts: Sequence[str] = (),
    cors_origins: Sequence[str] = (),
    lease: float = 30.0,
    concurrency: int = 16,
) -> None:
    """Serve the graphs with uvicorn until stopped (Ctrl-C, SIGTERM): what `actorgraph server` runs.

    Its requests and runs are logged on the `actorgraph.server` logger (uvicorn's access log is off).

    Raises:
        ConfigError: a bad config, graph or option, or a non-loopback `host` without `token`.
    """
    import uvicorn  # noqa: PLC0415 - the server extra, imported when serving

    check_binding(host, token)
    app = create_app(
        graphs_of(config, graphs),
        db=db if dsn is None else None,
        dsn=dsn,
        token=token,
        allow_hosts=(*_bound(host), *allow_hosts),
        cors_origins=cors_origins,
        lease=lease,
        concurrency=concurrency,
    )
    names = ", ".join(s.name for s in app.state.server.graphs)
    log.warning("actorgraph server: serving %s on http://%s:%d (Ctrl-C stops)", names, host, port)
    uvicorn.run(app, host=host, port=port, log_config=None, log_level="warning", access_log=False)
