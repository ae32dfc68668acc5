"""`serve`: the graphs of a `langgraph.json` (or named one by one) served with uvicorn until stopped."""

from __future__ import annotations

import ipaddress
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from actorgraph._model.errors import ConfigError
from actorgraph.server._app import create_app
from actorgraph.server._config import ServerConfig, graph_option, imported, read_config
from actorgraph.server._guard import is_loopback
from actorgraph.server._webhooks import SECRET_VARIABLE, Webhooks, webhooks_of

__all__ = ["graphs_from", "graphs_of", "serve", "served_settings"]

log = logging.getLogger("actorgraph.server")


def graphs_of(config: str | None, graphs: Sequence[str]) -> dict[str, Any]:
    """The objects to serve, by name: the config file's graphs, then `-g NAME=TARGET` ones (which win).

    The file's `env` is set and its `dependencies` put on `sys.path` before any graph is imported.

    Raises:
        ConfigError: a bad file or option, or a graph that cannot be imported (naming it).
    """
    return graphs_from(read_config(config) if config is not None else None, graphs)


def graphs_from(config: ServerConfig | None, graphs: Sequence[str]) -> dict[str, Any]:
    """`graphs_of` for a config file read already (None: no file)."""
    settings = config or ServerConfig()
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


def check_binding(host: str, token: str | None, *, auth: bool = False) -> None:
    """Refuse to serve beyond loopback without a token or an auth handler, or with an empty token.

    Raises:
        ConfigError: saying what to give.
    """
    if token is not None and not token.strip():
        raise ConfigError("--token is empty: an empty token protects nothing; give a long random one")
    if token is not None and auth:
        raise ConfigError("--token and the config's auth: give one (with auth, its handler reads each user)")
    if token is None and not auth and not is_loopback(host):
        msg = (
            f"{host} is not a loopback address, so anyone who reaches it could run the graphs and read "
            "every thread: give --token TOKEN (or $ACTORGRAPH_TOKEN), an auth handler (the config's "
            '"auth": {"path": "./auth.py:auth"}), or bind 127.0.0.1'
        )
        raise ConfigError(msg)


def auth_of(settings: ServerConfig) -> Any:
    """The `Auth` object the config's `auth.path` names (after its env and dependencies are set), or None.

    Raises:
        ConfigError: it cannot be imported (naming it).
    """
    if settings.auth is None:
        return None
    return imported("auth", settings.auth, settings.base, what="auth object")


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
    webhook_secret: str | None = None,
    webhook_allow: Sequence[str] = (),
) -> None:
    """Serve the graphs with uvicorn until stopped (Ctrl-C, SIGTERM): what `actorgraph server` runs.

    Its requests and runs are logged on the `actorgraph.server` logger (uvicorn's access log is off).
    Webhooks are signed with `webhook_secret`, else `$ACTORGRAPH_WEBHOOK_SECRET` (read once the
    file's `env` is set); `webhook_allow` adds to the file's `webhooks.allow`.

    Raises:
        ConfigError: a bad config, graph or option, or a non-loopback `host` without `token` or auth.
    """
    import uvicorn  # noqa: PLC0415 - the server extra, imported when serving

    settings = read_config(config) if config is not None else None
    check_binding(host, token, auth=settings is not None and settings.auth is not None)
    served, webhooks = settings_served(
        settings, graphs, webhook_secret=webhook_secret, webhook_allow=webhook_allow
    )
    app = create_app(
        served,
        auth=auth_of(settings) if settings is not None else None,
        db=db if dsn is None else None,
        dsn=dsn,
        token=token,
        allow_hosts=(*_bound(host), *allow_hosts),
        cors_origins=cors_origins,
        lease=lease,
        concurrency=concurrency,
        webhooks=webhooks,
    )
    names = ", ".join(s.name for s in app.state.server.graphs)
    users = f", its users named by {settings.auth}" if settings is not None and settings.auth else ""
    log.warning("actorgraph server: serving %s on http://%s:%d%s (Ctrl-C stops)", names, host, port, users)
    uvicorn.run(app, host=host, port=port, log_config=None, log_level="warning", access_log=False)


def served_settings(
    config: str | None, graphs: Sequence[str], *, webhook_secret: str | None, webhook_allow: Sequence[str]
) -> tuple[dict[str, Any], Webhooks]:
    """The graphs to serve (`graphs_of`) and the webhook settings, the config file read once.

    The secret is `webhook_secret`, else `$ACTORGRAPH_WEBHOOK_SECRET` once the file's `env` is set;
    `webhook_allow` adds to the file's `webhooks.allow`.

    Raises:
        ConfigError: a bad file, option or graph (named).
    """
    settings = read_config(config) if config is not None else None
    return settings_served(settings, graphs, webhook_secret=webhook_secret, webhook_allow=webhook_allow)


def settings_served(
    settings: ServerConfig | None,
    graphs: Sequence[str],
    *,
    webhook_secret: str | None,
    webhook_allow: Sequence[str],
) -> tuple[dict[str, Any], Webhooks]:
    """`served_settings` for a config file read already (None: no file)."""
    served = graphs_from(settings, graphs)
    secret = webhook_secret if webhook_secret is not None else os.environ.get(SECRET_VARIABLE) or None
    hooks = webhooks_of(
        settings.webhooks if settings is not None else None, secret=secret, allow=webhook_allow
    )
    return served, hooks
