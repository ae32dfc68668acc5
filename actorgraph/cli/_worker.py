"""`worker`: run the queued runs of TARGET (or of the API server's graphs) until stopped (SIGTERM, Ctrl-C)."""

from __future__ import annotations

from typing import Any

import click

import actorgraph.worker
from actorgraph.checkpoint._queue import check_lease, run_queue, worker_name
from actorgraph.cli._codes import DONE, FAILED
from actorgraph.cli._console import print_json, stderr, stdout
from actorgraph.cli._exits import CommandError, guarded
from actorgraph.cli._logs import log_format_option, log_to_stderr
from actorgraph.cli._options import Output, StoreChoice, command, output_options, store_options
from actorgraph.cli._outcome import Next, tell_done
from actorgraph.cli._target import Found, find
from actorgraph.cli._thread import GRAPH_KEY, recorded_form
from actorgraph.cli._webhook_options import WebhookOptions, webhook_options
from actorgraph.func import Entrypoint

__all__ = ["queued_answer", "worker"]


@command(
    "worker",
    examples=[
        "actorgraph worker myapp.flows:graph --dsn postgresql://app@db/runs --concurrency 8",
        "actorgraph worker flow.yaml --db runs.db            # workers on one machine",
        "actorgraph worker flows.py:graph --dsn $DSN --lease 60",
        "actorgraph worker --config langgraph.json --dsn $DSN   # the runs of actorgraph server",
    ],
)
@click.argument("target", required=False)
@click.option(
    "--config",
    "config",
    metavar="PATH",
    help="A langgraph.json: take the runs of its graphs that `actorgraph server` queued (not a TARGET's).",
)
@click.option(
    "-g",
    "--graph",
    "graphs",
    multiple=True,
    metavar="NAME=TARGET",
    help="A graph of `actorgraph server` whose runs to take, as the server names it; repeatable.",
)
@click.option(
    "--concurrency", type=click.IntRange(1, 1024), default=4, show_default=True, help="Runs at once."
)
@click.option(
    "--lease",
    type=float,
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="How long a run stays this worker's without a heartbeat: another worker takes it over this "
    "long after this one died.",
)
@click.option("--name", metavar="NAME", help="The worker's name in `threads` (default host:pid).")
@log_format_option
@store_options
@output_options
@guarded
@webhook_options
def worker(  # noqa: PLR0913 - click passes every option as a keyword
    *,
    target: str | None,
    config: str | None,
    graphs: tuple[str, ...],
    concurrency: int,
    lease: float,
    name: str | None,
    webhooks: WebhookOptions,
    log_format: str,
    store: StoreChoice,
    out: Output,
) -> int:
    """Run the runs queued for TARGET (app.submit, or an answer while workers run), until stopped.

    Start several, on any machines sharing one PostgreSQL database (--dsn), or on
    one machine sharing a SQLite file (--db). Each holds a lease on its runs and
    renews it; when a worker dies, another resumes its runs from their checkpoints.
    SIGTERM or Ctrl-C stops it cleanly: its runs are queued again for the others.
    It logs on stderr each run it takes and how it ended, naming the thread, the
    run, the vertex and the error (--log-format json: one JSON object a line).
    """
    try:
        check_lease(lease)
    except actorgraph.ConfigError as exc:
        raise CommandError(f"--lease {lease}: {exc}") from None
    del out  # a worker prints no result; its log is --log-format's
    named = name or worker_name()
    if (target is None) == (config is None and not graphs):
        msg = "give TARGET (the runs app.submit queued) or --config/-g (the runs of actorgraph server)"
        raise CommandError(msg)
    log_to_stderr(log_format)
    if target is None:
        return _server_runs(config, graphs, store, webhooks, concurrency=concurrency, lease=lease, name=named)
    graph = find(target)
    stderr.print(f"worker {named} takes the queued runs of {target}", highlight=False, markup=False)
    dsn, db = (store.dsn, None) if store.dsn else (None, store.db)
    if not store.given and _has_own_store(graph):
        dsn, db = None, None  # its own checkpointer
    finished = actorgraph.worker.run(
        graph,
        dsn=dsn,
        db=db,
        concurrency=concurrency,
        lease=lease,
        name=named,
        labels={GRAPH_KEY: recorded_form(target)},  # `answer` and `resume` then need no -g
    )
    stderr.print(f"worker {named} stopped after finishing {finished} runs", highlight=False, markup=False)
    return DONE


def _has_own_store(found: Found) -> bool:
    """A compiled graph keeps its own checkpointer; an entrypoint too, unless --db/--dsn name one."""
    if isinstance(found, Entrypoint):
        return found.graph.checkpointer is not None
    return isinstance(found, actorgraph.CompiledGraph)


def _server_runs(  # noqa: PLR0913 - the graphs, their store, and the worker's bounds
    config: str | None,
    graphs: tuple[str, ...],
    store: StoreChoice,
    webhooks: WebhookOptions,
    *,
    concurrency: int,
    lease: float,
    name: str,
) -> int:
    """Take the runs `actorgraph server` queued for these graphs (the server extra), until stopped.

    With a webhook secret, it also delivers the webhooks owed in the store.
    """
    try:
        from actorgraph.server._app import Taking  # noqa: PLC0415 - the server extra, for this form only
        from actorgraph.server._serve import served_settings  # noqa: PLC0415
        from actorgraph.server._work import work  # noqa: PLC0415
    except ImportError as exc:
        extra = 'pip install "actorgraph[server]"'
        msg = f"worker --config needs the server extra ({exc.name} is missing): {extra}"
        raise CommandError(msg) from exc
    try:
        served, hooks = served_settings(
            config, graphs, webhook_secret=webhooks.secret, webhook_allow=webhooks.allow
        )
        work(
            served,
            db=None if store.dsn else store.db,
            dsn=store.dsn,
            taking=Taking(lease, concurrency, name, hooks),
        )
    except actorgraph.ConfigError as exc:
        raise CommandError(str(exc)) from None
    stderr.print(f"worker {name} stopped", highlight=False, markup=False)
    return DONE


def queued_answer(  # noqa: PLR0913 - the graph, the thread, the answer, and how to report
    app: actorgraph.CompiledGraph[Any],
    then: Next,
    resume: dict[str, Any],
    *,
    answered_by: str | None,
    wait: bool,
    out: Output,
) -> int | None:
    """While workers run: claim the answer here, queue its resume for them; None when no worker lives.

    Raises:
        AlreadyAnsweredError: another answer was claimed first (exit 4).
    """
    assert app.checkpointer is not None  # noqa: S101 - opened() gives only graphs with a store
    try:
        live = run_queue(app.checkpointer).live_workers()
    except actorgraph.ActorGraphError:  # a store without a queue, or read-only: answer as before
        return None
    if not live:
        return None
    handle = app.submit(actorgraph.Command(resume=resume), thread_id=then.thread, answered_by=answered_by)
    if not out.json:
        shown = f"answer claimed; its resume is queued for the workers ({len(live)} running)"
        stdout.print(shown if wait else f"{shown}; --wait waits for the run to stop", highlight=False)
    if not wait:
        if out.json:
            print_json({"thread_id": then.thread, "queued": True, "workers": [w.worker for w in live]})
        return DONE
    if handle.wait() == "failed":
        row = run_queue(app.checkpointer).get(then.thread)
        why = row.error if row is not None and row.error else "see actorgraph show"
        stderr.print(f"the run failed in a worker: {why}", highlight=False, markup=False)
        return FAILED
    return tell_done(app.get_state(then.thread), then, out)
