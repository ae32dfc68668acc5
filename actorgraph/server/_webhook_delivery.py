"""Sending the webhooks owed: signed, to a checked address, bounded, retried with backoff.

A task of the server's event loop (and of `actorgraph worker --config`'s) when it
has a signing secret: it takes the oldest delivery due from the outbox under a
lease (several at once, each its own task), and POSTs the Run object:

- signed as Standard Webhooks signs (standardwebhooks.com): `webhook-id` (the run
  id: the same on every attempt, the receiver's idempotency key),
  `webhook-timestamp` (Unix seconds of this attempt) and `webhook-signature`
  (`v1,` and the base64 HMAC-SHA256 of `{id}.{timestamp}.{body}` with the key);
- to an address checked at connect time: the host is resolved once, every
  address checked (`_webhooks.resolve`), and the request sent to that address
  with the URL's `Host` (and its name as TLS SNI, so the certificate is checked
  against it); no proxy from the environment, no redirect followed, no
  connection kept for another delivery;
- bounded: the whole attempt within `timeout` seconds, at most 64 KiB of the
  answer read.

A 2xx answer delivers it (the row is deleted). Anything else (another status, a
redirect, no answer, a refused connection) is tried again after `first_retry`
seconds, twice as long each time up to five minutes, with jitter, until
`retry_for` seconds after the run's end; then it is dropped and logged. An
address that may not be reached drops it at once. The run never waits for any
of this: its end was recorded before.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import logging
import random
import time
from dataclasses import dataclass
from typing import Any, Final

import httpx
from starlette.concurrency import run_in_threadpool

from actorgraph import ActorGraphError, ConfigError
from actorgraph.server._context import Server
from actorgraph.server._webhook_body import Ends
from actorgraph.server._webhook_outbox import Outbox, Owed
from actorgraph.server._webhooks import Address, RefusedWebhookError, Target, Webhooks, resolve, target_of
from actorgraph.server._wire import dumps, iso

__all__ = ["Deliverer", "serve_webhooks", "signature", "signed_headers"]

log = logging.getLogger("actorgraph.server")

_ANSWER_READ: Final = 64 * 1024  # bytes of a receiver's answer read (the status is what counts)
_LONGEST_WAIT: Final = 300.0
_AT_ONCE: Final = 8  # deliveries in flight per process
_OK: Final = range(200, 300)


def signature(key: bytes, webhook_id: str, timestamp: int, body: bytes) -> str:
    """The `webhook-signature` of a body: `v1,` and base64(HMAC-SHA256(key, f"{id}.{timestamp}.{body}"))."""
    mac = hmac.new(key, f"{webhook_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


def signed_headers(
    key: bytes, webhook_id: str, body: bytes, *, timestamp: int | None = None
) -> dict[str, str]:
    """The headers of one delivery: content type, the id, the time and the signature."""
    stamp = int(time.time()) if timestamp is None else timestamp
    return {
        "content-type": "application/json",
        "user-agent": "actorgraph-webhooks",
        "webhook-id": webhook_id,
        "webhook-timestamp": str(stamp),
        "webhook-signature": signature(key, webhook_id, stamp, body),
    }


@dataclass(frozen=True, slots=True)
class _Failure:
    why: str
    final: bool = False  # no retry can help (the address may not be reached)


async def _post(http: httpx.AsyncClient, target: Target, address: Address, body: bytes, headers: Any) -> int:
    """POST `body` to `target` at `address` (with its Host and SNI); the answer's status."""
    url = httpx.URL(target.url).copy_with(host=str(address))
    extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
    request = http.build_request(
        "POST", url, content=body, headers={**headers, "host": target.host_header}, extensions=extensions
    )
    response = await http.send(request, stream=True)
    try:
        read = 0
        async for chunk in response.aiter_raw():
            read += len(chunk)
            if read >= _ANSWER_READ:
                break
    finally:
        await response.aclose()
    return response.status_code


async def _attempt(http: httpx.AsyncClient, webhooks: Webhooks, owed: Owed) -> _Failure | None:
    """One delivery of `owed`; None when the receiver took it."""
    assert webhooks.key is not None  # noqa: S101 - a deliverer exists only with a key
    body = dumps({**owed.body, "webhook_sent_at": iso(time.time())})
    headers = signed_headers(webhooks.key, owed.run_id, body)
    try:
        async with asyncio.timeout(webhooks.timeout):
            target = target_of(owed.url)
            addresses = await resolve(target, webhooks.allowed)
            for address in addresses[:-1]:
                with contextlib.suppress(httpx.ConnectError):
                    return _answered(await _post(http, target, address, body, headers))
            return _answered(await _post(http, target, addresses[-1], body, headers))
    except RefusedWebhookError as exc:
        return _Failure(str(exc), final=True)
    except TimeoutError:
        return _Failure(f"no answer within {webhooks.timeout:g} s")
    except (httpx.HTTPError, OSError) as exc:
        return _Failure(f"{type(exc).__name__}: {exc}"[:500])


def _answered(status: int) -> _Failure | None:
    if status in _OK:
        return None
    if 300 <= status < 400:  # noqa: PLR2004 - the redirects
        return _Failure(f"answered {status}: redirects are not followed")
    return _Failure(f"answered {status}")


class Deliverer:
    """Takes the deliveries owed in an outbox and sends them (see the module)."""

    def __init__(
        self, outbox: Outbox, webhooks: Webhooks, *, name: str, lease: float, poll: float = 1.0
    ) -> None:
        """Deliver `outbox`'s webhooks as `name`, holding each for `lease` seconds; look every `poll` s."""
        if webhooks.key is None:
            raise ConfigError("a deliverer needs the webhook secret")  # a caller's mistake, not a user's
        self.outbox = outbox
        self.webhooks = webhooks
        self.name = name
        self.lease = max(lease, 1.5 * webhooks.timeout + 2.0)  # an attempt ends well before its lease
        self.poll = poll
        self._wake = asyncio.Event()
        self._going: set[asyncio.Task[None]] = set()

    def wake(self) -> None:
        """A delivery is owed: look now (from the event loop's thread)."""
        self._wake.set()

    async def serve(self) -> None:
        """Deliver until cancelled; deliveries going on are given back then."""
        limits = httpx.Limits(max_connections=_AT_ONCE, max_keepalive_connections=0)
        timeout = httpx.Timeout(self.webhooks.timeout)
        async with httpx.AsyncClient(
            trust_env=False, follow_redirects=False, limits=limits, timeout=timeout
        ) as http:
            try:
                await self._taking(http)
            finally:
                for task in self._going:
                    task.cancel()
                await asyncio.gather(*self._going, return_exceptions=True)

    async def _taking(self, http: httpx.AsyncClient) -> None:
        while True:
            self._wake.clear()
            owed = None
            if len(self._going) < _AT_ONCE:
                try:
                    owed = await run_in_threadpool(self.outbox.take, self.name, self.lease)
                except Exception as exc:  # noqa: BLE001 - deliveries pause until the next look; runs go on
                    error = f"{type(exc).__name__}: {exc}"
                    log.warning("could not take an owed webhook", extra={"worker": self.name, "error": error})
            if owed is not None:
                task = asyncio.get_running_loop().create_task(self._deliver(http, owed))
                self._going.add(task)
                task.add_done_callback(self._done)
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.poll)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._going.discard(task)
        self._wake.set()

    async def _deliver(self, http: httpx.AsyncClient, owed: Owed) -> None:
        try:
            failure = await _attempt(http, self.webhooks, owed)
        except asyncio.CancelledError:
            with contextlib.suppress(ActorGraphError):
                await asyncio.shield(run_in_threadpool(self.outbox.give_back, owed.run_id, self.name))
            raise
        except Exception as exc:  # a delivery fails alone, never the server
            log.exception("webhook delivery failed unexpectedly", extra={"run_id": owed.run_id})
            failure = _Failure(f"{type(exc).__name__}: {exc}"[:500])
        try:
            await run_in_threadpool(self._record, owed, failure)
        except Exception as exc:  # noqa: BLE001 - its lease runs out and it is sent again: at least once
            log.warning(
                "could not record a webhook delivery", extra={"run_id": owed.run_id, "error": str(exc)}
            )

    def _record(self, owed: Owed, failure: _Failure | None) -> None:
        fields = {"run_id": owed.run_id, "thread_id": owed.thread_id, "attempt": owed.attempts + 1}
        if failure is None:
            self.outbox.delivered(owed.run_id)
            log.info("webhook delivered", extra=fields)
            return
        retry_at = None if failure.final else self._retry_at(owed)
        self.outbox.failed(owed.run_id, self.name, error=failure.why, retry_at=retry_at)
        if retry_at is None:
            log.warning("webhook dropped: %s", failure.why, extra=fields | {"error": failure.why})
        else:
            log.info(
                "webhook failed, tried again later: %s", failure.why, extra=fields | {"error": failure.why}
            )

    def _retry_at(self, owed: Owed) -> float | None:
        """When to try again (backoff with jitter), or None once the time for retries is over."""
        wait = min(self.webhooks.first_retry * 2.0 ** min(owed.attempts, 30), _LONGEST_WAIT)
        at = time.time() + wait * random.uniform(0.8, 1.2)  # noqa: S311 - jitter, not a secret
        return None if at > owed.created_at + self.webhooks.retry_for else at


def serve_webhooks(server: Server, outbox: Outbox, webhooks: Webhooks | None) -> None:
    """Owe the webhooks of the runs that end in `server`; with a secret, deliver the store's owed ones too."""
    ends = Ends(outbox, server.graphs)
    server.runner.webhooks = ends
    server.webhooks = webhooks
    if webhooks is not None and webhooks.key is not None and server.taker is not None:
        deliverer = Deliverer(outbox, webhooks, name=server.runs.name, lease=server.runs.lease)
        ends.wake = deliverer.wake
        server.taker.also.append(deliverer.serve)
