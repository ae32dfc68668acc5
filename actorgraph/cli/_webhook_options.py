"""The webhook options of `actorgraph server` and `actorgraph worker --config`: secret and hosts allowed."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import click

from actorgraph.cli._exits import CommandError
from actorgraph.cli._options import Callback

__all__ = ["WebhookOptions", "webhook_options"]


@dataclass(frozen=True, slots=True)
class WebhookOptions:
    """`--webhook-secret` (None: `$ACTORGRAPH_WEBHOOK_SECRET`) and `--webhook-allow`, as given."""

    secret: str | None = None
    allow: tuple[str, ...] = ()


def webhook_options(fn: Callback) -> Callback:
    """Add `--webhook-secret` and `--webhook-allow`, passed together as `webhooks` (a `WebhookOptions`).

    A command with a TARGET argument (`worker`'s, for app.submit's runs, which send no webhooks)
    refuses them beside one.
    """

    @functools.wraps(fn)
    def packed(*args: Any, webhook_secret: str | None, webhook_allow: tuple[str, ...], **kwargs: Any) -> Any:
        if kwargs.get("target") is not None and (webhook_secret is not None or webhook_allow):
            msg = "--webhook-secret and --webhook-allow go with --config or -g: app.submit's runs send none"
            raise CommandError(msg)
        return fn(*args, webhooks=WebhookOptions(webhook_secret, webhook_allow), **kwargs)

    allow = click.option(
        "--webhook-allow",
        "webhook_allow",
        multiple=True,
        metavar="HOST|NETWORK",
        help="A host (hooks.internal, *.corp.example), address or network (10.0.0.0/8) webhooks may reach "
        "although it is not public; repeatable, added to the config's webhooks.allow.",
    )
    secret = click.option(
        "--webhook-secret",
        "webhook_secret",
        metavar="SECRET",
        help="The secret webhooks are signed with (24 characters or more, or a whsec_ key); default "
        "$ACTORGRAPH_WEBHOOK_SECRET, which the config's env may set. Without one, runs with a webhook "
        "are refused.",
    )
    return secret(allow(packed))
