"""`serve`: the web inbox of a graph's threads, with uvicorn (the `web` extra)."""

from __future__ import annotations

import ipaddress
import os
import secrets
from typing import Any

import click

from actorgraph._model.errors import ConfigError
from actorgraph.cli._codes import DONE, FAILED
from actorgraph.cli._console import stdout
from actorgraph.cli._exits import CommandError, guarded
from actorgraph.cli._listening import close, listen, url
from actorgraph.cli._logs import log_format_option, log_to_stderr
from actorgraph.cli._opened import opened
from actorgraph.cli._options import Output, StoreChoice, command, output_options, store_options

__all__ = ["serve"]


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to any address


def _bound_name(host: str) -> tuple[str, ...]:
    """The bound address as a Host header names it; nothing for a wildcard (0.0.0.0, ::), not a name."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return (host,) if host else ()  # a host name: requests may name it
    return () if address.is_unspecified else (host,)


_ENV_TOKEN = "ACTORGRAPH_TOKEN"  # noqa: S105 - the variable's name, not a token


def _checked_token(token: str | None) -> str | None:
    """--token, refused when empty or blank (anyone could send it), as is an empty $ACTORGRAPH_TOKEN."""
    from actorgraph.web._guard import check_token  # noqa: PLC0415 - the web extra, checked by the caller

    if token is None and os.environ.get(_ENV_TOKEN) == "":  # click reads an empty variable as unset
        msg = f"${_ENV_TOKEN} is set but empty: set it to the access token, or unset it"
        raise CommandError(msg)
    try:
        return check_token(token)
    except ConfigError:
        msg = (
            f"--token {token!r} is blank, and anyone could send a blank token: give the access token "
            "(is the variable you passed set?), or leave --token out"
        )
        raise CommandError(msg) from None


def _token_for(host: str, token: str | None) -> str | None:
    """The access token: the one given, or (bound beyond loopback without one) a new one."""
    if token is not None or _loopback(host):
        return token
    return secrets.token_urlsafe(24)


@command(
    "serve",
    examples=[
        "actorgraph serve flow.yaml                       # http://127.0.0.1:8000/",
        "actorgraph serve myapp.flows:approval --db runs.db --port 8080",
        'actorgraph serve flow.yaml --host 0.0.0.0 --token "$INBOX_TOKEN" --allow-host inbox.example',
    ],
)
@click.argument("target")
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to bind.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="The port.")
@click.option(
    "--token",
    envvar="ACTORGRAPH_TOKEN",
    metavar="TOKEN",
    help="The access token every request needs ($ACTORGRAPH_TOKEN); made if not given beyond loopback.",
)
@click.option(
    "--allow-host",
    "allow_host",
    multiple=True,
    metavar="NAME",
    help="A host name (or *.domain) requests may name besides localhost, 127.0.0.1, [::1] and the bound "
    "address; repeatable. Other Host headers get 400 (DNS rebinding).",
)
@log_format_option
@store_options
@output_options
@guarded
def serve(  # noqa: PLR0913 - one keyword per option, as click passes them
    *,
    target: str,
    host: str,
    port: int,
    token: str | None,
    allow_host: tuple[str, ...],
    log_format: str,
    store: StoreChoice,
    out: Output,
) -> int:
    """Serve the web inbox of TARGET's threads: answer questions, retry failed runs, in a browser.

    It binds 127.0.0.1 unless --host says otherwise; another address needs an
    access token (--token, or one made and printed now). It answers only requests
    that name it localhost, 127.0.0.1, [::1], the bound address or an --allow-host
    name (400 otherwise: this stops DNS rebinding). It logs each request, and
    each error with its traceback, on stderr. Needs the `web` extra.
    """
    del out  # --json and --debug mean nothing to a server; accepted like every command's
    try:
        import uvicorn  # noqa: PLC0415 - the web extra is imported by this command only

        from actorgraph.web import app  # noqa: PLC0415
    except ImportError as exc:
        msg = f'serve needs the web extra ({exc.name} is missing): pip install "actorgraph[web]"'
        raise CommandError(msg) from exc
    given = _checked_token(token)
    with opened(target, store) as compiled:
        token = _token_for(host, given)
        try:
            web = app(compiled, token=token, allow_hosts=(*_bound_name(host), *allow_host))
        except ValueError as exc:  # an --allow-host that is not a host name
            raise CommandError(str(exc)) from exc
        sockets = listen(host, port)
        try:
            port = sockets[0].getsockname()[1]  # --port 0: the one the system chose
            _announce(compiled.name, host, port, allow_host, made=token if given is None else None)
            log_to_stderr(log_format, server=True)
            started = _run(uvicorn, web, sockets)
        finally:
            close(sockets)
    if not started:
        raise CommandError("the inbox did not start; the log above says why", code=FAILED)
    return DONE


def _announce(name: str, host: str, port: int, allow_host: tuple[str, ...], *, made: str | None) -> None:
    """Print the token made for this server (if one was), where it serves, and which names it answers."""
    if made is not None:
        stdout.print(f"{host} is not a loopback address, so the inbox needs an access token: {made}")
        stdout.print("log in at /login with it, or send the header: Authorization: Bearer TOKEN")
    stdout.print(f"serving {name!r} on {url(host, port)} (Ctrl-C stops)", highlight=False)
    if not _bound_name(host) and not allow_host:
        stdout.print("it answers requests for localhost, 127.0.0.1 and [::1] only: add --allow-host NAME")
        stdout.print("for each name people reach it by (other Host headers get 400)")
    stdout.file.flush()


def _run(uvicorn: Any, web: Any, sockets: list[Any]) -> bool:
    """Serve on the bound sockets until stopped; False if the server never started."""
    config = uvicorn.Config(web, log_config=None, log_level="info", access_log=True, lifespan="off")
    server = uvicorn.Server(config)
    server.run(sockets=sockets)
    return bool(server.started)
