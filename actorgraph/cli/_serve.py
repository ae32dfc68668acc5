"""`serve`: the web inbox of a graph's threads, with uvicorn (the `web` extra)."""

from __future__ import annotations

import ipaddress
import secrets

import click

from actorgraph.cli._codes import DONE
from actorgraph.cli._console import stdout
from actorgraph.cli._exits import CommandError, guarded
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


def _token_for(host: str, token: str | None) -> str | None:
    """The access token: the one given, or (bound beyond loopback without one) a new one, printed."""
    if token is not None or _loopback(host):
        return token
    made = secrets.token_urlsafe(24)
    stdout.print(f"{host} is not a loopback address, so the inbox needs an access token: {made}")
    stdout.print("log in at /login with it, or send the header: Authorization: Bearer TOKEN")
    return made


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
    store: StoreChoice,
    out: Output,
) -> int:
    """Serve the web inbox of TARGET's threads: answer questions, retry failed runs, in a browser.

    It binds 127.0.0.1 unless --host says otherwise; another address needs an
    access token (--token, or one made and printed now). It answers only requests
    that name it localhost, 127.0.0.1, [::1], the bound address or an --allow-host
    name (400 otherwise: this stops DNS rebinding). Needs the `web` extra.
    """
    del out  # --json and --debug mean nothing to a server; accepted like every command's
    try:
        import uvicorn  # noqa: PLC0415 - the web extra is imported by this command only

        from actorgraph.web import app  # noqa: PLC0415
    except ImportError as exc:
        msg = f'serve needs the web extra ({exc.name} is missing): pip install "actorgraph[web]"'
        raise CommandError(msg) from exc
    token = _token_for(host, token)
    with opened(target, store) as compiled:
        try:
            web = app(compiled, token=token, allow_hosts=(*_bound_name(host), *allow_host))
        except ValueError as exc:  # an --allow-host that is not a host name
            raise CommandError(str(exc)) from exc
        stdout.print(f"serving {compiled.name!r} on http://{host}:{port}/ (Ctrl-C stops)", highlight=False)
        if not _bound_name(host) and not allow_host:
            stdout.print("it answers requests for localhost, 127.0.0.1 and [::1] only: add --allow-host NAME")
            stdout.print("for each name people reach it by (other Host headers get 400)")
        stdout.file.flush()
        uvicorn.run(web, host=host, port=port, log_level="warning")
    return DONE
