"""Posted forms, read with bounds: URL-encoded UTF-8, each field once, at most `LIMIT` bytes.

A body is data before it is a form: anything else (another content type, bytes
that are not UTF-8, a field given twice, a body that is not `name=value&...`)
is refused with a message saying what was wrong, before any field is used.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from starlette.requests import Request

from actorgraph._model.errors import ActorGraphError

__all__ = ["FIELDS", "LIMIT", "BadForm", "TooLarge", "read_form"]

LIMIT = 64 * 1024  # bytes of a form: an answer larger than this is refused (413)
FIELDS = 16  # fields of a form: the inbox's have at most five
_FORM = "application/x-www-form-urlencoded"


class TooLarge(ActorGraphError):  # noqa: N818 - named for the HTTP status it becomes
    """Raised by `read_form` when a request body is over `LIMIT` bytes (413)."""


class BadForm(ActorGraphError):  # noqa: N818 - named for the HTTP status it becomes
    """Raised by `read_form` when a body is not a URL-encoded UTF-8 form with each field once (400)."""


def _check_type(content_type: str) -> None:
    media, _, params = content_type.partition(";")
    if media.strip().lower() != _FORM:
        shown = media.strip()[:80] or "none"
        msg = f"an inbox form is sent as {_FORM}, not {shown!r}"
        raise BadForm(msg)
    charset = params.strip().lower().removeprefix("charset=").strip('"') if params.strip() else "utf-8"
    if charset not in ("utf-8", "utf8"):
        msg = f"an inbox form is UTF-8, not {charset[:40]!r}"
        raise BadForm(msg)


async def _body(request: Request) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > LIMIT:
        raise TooLarge
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > LIMIT:
            raise TooLarge
    return bytes(body)


async def read_form(request: Request) -> dict[str, str]:
    """The fields of a URL-encoded form.

    Raises:
        TooLarge: the body is larger than `LIMIT` bytes.
        BadForm: not a URL-encoded form of UTF-8 text, more than `FIELDS` fields,
            or a field given twice (the message says which).
    """
    body = await _body(request)
    if not body:
        return {}  # an empty form, whatever its type: the CSRF check refuses it
    _check_type(request.headers.get("content-type", ""))
    try:
        pairs = parse_qsl(
            body.decode("utf-8"),
            keep_blank_values=True,
            strict_parsing=True,
            errors="strict",
            max_num_fields=FIELDS,
        )
    except UnicodeDecodeError:
        msg = "the form is not UTF-8 text"
        raise BadForm(msg) from None
    except ValueError as exc:  # not name=value pairs, or too many of them
        msg = f"the body is not a form of at most {FIELDS} fields ({str(exc)[:80]})"
        raise BadForm(msg) from None
    fields: dict[str, str] = {}
    for name, value in pairs:
        if name in fields:
            msg = f"the field {name[:40]!r} is given twice"
            raise BadForm(msg)
        fields[name] = value
    return fields
