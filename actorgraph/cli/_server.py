"""`server`: the LangGraph Server API for some graphs (`actorgraph.server`, the `server` extra)."""

from __future__ import annotations

from typing import Any

import click

from actorgraph._model.errors import ConfigError
from actorgraph.cli._codes import DONE
from actorgraph.cli._console import stdout
from actorgraph.cli._exits import CommandError, guarded
from actorgraph.cli._logs import log_format_option, log_to_stderr
from actorgraph.cli._options import Output, StoreChoice, command, output_options, store_options
from actorgraph.cli._webhook_options import WebhookOptions, webhook_options

__all__ = ["server"]


@command(
    "server",
    examples=[
        "actorgraph server --config langgraph.json              # http://127.0.0.1:2024",
        "actorgraph server -g agent=./agent.py:graph --db runs.db",
        'actorgraph server --config langgraph.json --dsn "$DSN" --host 0.0.0.0 --token "$API_TOKEN"',
    ],
)
@click.option(
    "--config", "config", metavar="PATH", help="A langgraph.json: its graphs, dependencies, env and auth."
)
@click.option(
    "-g",
    "--graph",
    "graphs",
    multiple=True,
    metavar="NAME=TARGET",
    help="A graph to serve (path/to/file.py:graph or module:graph); repeatable.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to bind.")
@click.option("--port", default=2024, show_default=True, type=click.IntRange(0, 65535), help="The port.")
@click.option(
    "--token",
    envvar="ACTORGRAPH_TOKEN",
    metavar="TOKEN",
    help="The access token every request needs ($ACTORGRAPH_TOKEN); beyond loopback, it or auth is needed.",
)
@click.option(
    "--allow-host",
    "allow_host",
    multiple=True,
    metavar="NAME",
    help="A host name requests may name besides the loopback names and the bound address.",
)
@click.option(
    "--cors-origin",
    "cors_origin",
    multiple=True,
    metavar="ORIGIN",
    help="An origin a browser front end calls from (http://localhost:3000); CORS is off without.",
)
@click.option(
    "--lease",
    type=click.FloatRange(1, 86400),
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="How long a run stays this server's without a heartbeat: if the server dies, another server or "
    "an `actorgraph worker --config` takes its runs over this long after.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 1024),
    default=16,
    show_default=True,
    help="Background runs at once (runs a client waits for are not counted).",
)
@log_format_option
@store_options
@output_options
@guarded
@webhook_options
def server(  # noqa: PLR0913 - one keyword per option, as click passes them
    *,
    config: str | None,
    graphs: tuple[str, ...],
    host: str,
    port: int,
    token: str | None,
    allow_host: tuple[str, ...],
    cors_origin: tuple[str, ...],
    lease: float,
    concurrency: int,
    webhooks: WebhookOptions,
    log_format: str,
    store: StoreChoice,
    out: Output,
) -> int:
    """Serve graphs over the LangGraph Server API, for langgraph-sdk, useStream and agent-chat-ui.

    It binds 127.0.0.1 unless --host says otherwise; another address needs --token or auth.
    Threads, runs and the memory store live in --db (SQLite, default actorgraph.db)
    or --dsn (PostgreSQL). Background runs are rows of the store's run queue: this
    server and any `actorgraph worker --config` on the same store take them, and a
    run whose server died is finished by another once its lease ran out. It logs
    each request and each run's end on stderr (--log-format json: one object a
    line). Webhooks are signed with --webhook-secret, sent to public addresses
    only (--webhook-allow adds others). Needs the `server` extra.
    """
    del out  # --json and --debug mean nothing to a server; accepted like every command's
    serve = _serving()
    log_to_stderr(log_format, server=True)
    stdout.file.flush()
    try:
        serve(
            config=config,
            graphs=graphs,
            db=store.db,
            dsn=store.dsn,
            host=host,
            port=port,
            token=token,
            allow_hosts=allow_host,
            cors_origins=cors_origin,
            lease=lease,
            concurrency=concurrency,
            webhook_secret=webhooks.secret,
            webhook_allow=webhooks.allow,
        )
    except ConfigError as exc:
        raise CommandError(str(exc)) from None
    return DONE


def _serving() -> Any:
    """The server extra's `serve`, imported for this command only.

    Raises:
        CommandError: the extra is not installed (naming it).
    """
    try:
        from actorgraph.server._serve import serve  # noqa: PLC0415 - the server extra, for this command only
    except ImportError as exc:
        msg = f'server needs the server extra ({exc.name} is missing): pip install "actorgraph[server]"'
        raise CommandError(msg) from exc
    return serve
