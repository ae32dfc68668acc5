"""Verifying a webhook of actorgraph server in a receiver: the signature, the time, and the replays.

Run it: python examples/webhook_verify.py

Copy `verify` into a receiver (examples/webhooks.py uses it): it needs only the
standard library. Run as a script, it signs a body as the server does and shows
what `verify` accepts and refuses.
"""

# --8<-- [start:verify]
from __future__ import annotations

import base64
import hashlib
import hmac
import time
from typing import Any

TOLERANCE = 300  # seconds: a delivery signed longer ago (or ahead) is refused, so a replay fails


def signing_key(secret: str) -> bytes:
    """The key actorgraph signs with: a `whsec_` secret's base64 bytes, any other secret's UTF-8."""
    if secret.startswith("whsec_"):
        return base64.b64decode(secret.removeprefix("whsec_"), validate=True)
    return secret.encode()


def verify(secret: str, headers: Any, body: bytes, *, now: float | None = None) -> bool:
    """Whether a delivery is the server's, signed within `TOLERANCE` seconds (Standard Webhooks).

    `headers`: the request's, with a `get` that ignores case (`http.server`'s, Starlette's, Flask's);
    `body`: the raw body, as received (before any JSON parsing).
    """
    webhook_id = headers.get("webhook-id") or ""
    stamp = headers.get("webhook-timestamp") or ""
    if not webhook_id or not stamp.isdigit():
        return False
    if abs((time.time() if now is None else now) - int(stamp)) > TOLERANCE:
        return False  # too old, or from the future: a replay, or a clock far off
    signed = f"{webhook_id}.{stamp}.".encode() + body
    expected = base64.b64encode(hmac.new(signing_key(secret), signed, hashlib.sha256).digest()).decode()
    given = (headers.get("webhook-signature") or "").split()
    return any(hmac.compare_digest(f"v1,{expected}", signature) for signature in given)


# --8<-- [end:verify]


def main() -> None:
    secret = "a secret of at least 24 characters"  # noqa: S105 - a demonstration's, not a real one
    body, stamp = b'{"run_id": "r1", "status": "success"}', int(time.time())
    mac = hmac.new(signing_key(secret), f"r1.{stamp}.".encode() + body, hashlib.sha256).digest()
    headers = {
        "webhook-id": "r1",
        "webhook-timestamp": str(stamp),
        "webhook-signature": "v1," + base64.b64encode(mac).decode(),
    }
    print("signed:", verify(secret, headers, body))
    print("body changed:", verify(secret, headers, body.replace(b"success", b"error")))
    print("replayed an hour later:", verify(secret, headers, body, now=stamp + 3600))
    print("another run's id:", verify(secret, {**headers, "webhook-id": "r2"}, body))


if __name__ == "__main__":
    main()
