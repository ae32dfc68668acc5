"""A web inbox for a graph's threads: answer the questions runs wait for, in a browser.

`app(compiled)` is a Starlette (ASGI) application, rendered on the server
(Jinja2, no JavaScript, its CSS shipped in the package: it works offline);
`actorgraph serve TARGET` serves it with uvicorn. It needs the `web` extra
(`pip install "actorgraph[web]"`); `import actorgraph` never imports it.

Pages: the inbox `/` (threads waiting for an answer; `?status=`, `?q=`), a
thread `/threads/{id}` (its questions with answer forms, the graph picture,
the supersteps, the state, the history; retry, cancel), the runs `/runs`.

An interrupt value `{"question": ..., "choices": [...]}` is answered with one
button per choice (the chosen one is the answer); any other value with a text
or a JSON field.

Threat model (every threat and what stops it: docs/security.md). Whoever
reaches the server can read every thread's state and answer its questions, so:

- without a token the app admits everyone: serve it on loopback only
  (`actorgraph serve` refuses another address without a token);
- it answers only requests whose Host is a loopback name, or one of
  `allow_hosts` (`--allow-host`): 400 otherwise, which stops DNS rebinding;
- with `token`, every request needs it: `Authorization: Bearer TOKEN`, or the
  HttpOnly, SameSite=Strict cookie of a `/login` session (a random id and its
  keyed hash, not the token); otherwise 401;
- every POST carries a CSRF token bound to the visitor's session (a keyed hash
  of it), else 403; forms are read with bounds (URL-encoded UTF-8, 64 KiB: 413,
  each field once, answers checked): anything else is 400, never applied;
- every value from a state or an interrupt is escaped (Jinja2 autoescape) and
  cut to a bounded preview (the whole is a download); a Content-Security-Policy
  forbids scripts, frames and foreign forms;
- thread ids are one percent-encoded path segment in every URL, read back from
  the raw path; a thread the store cannot read is shown as damaged, not a 500;
- no endpoint reads or writes a file, imports a module or evaluates anything
  the client chooses: answers are JSON or text, choices are picked by index
  among those the interrupt offers;
- an answer is claimed in the store before any vertex runs with it
  (`RunHandle.wait_started`): a second answer to the question, from here or
  anywhere, before or after a restart, gets 409 naming who answered and when.

Not covered: TLS (put a reverse proxy in front of a public server), and user
accounts (one token for everyone; the "your name" field is a label, not a login).

Layer (docs/design.md): a front end, at the top. May import every layer below it; never
`actorgraph.cli` (shared text helpers live in `actorgraph._api.text`).
"""

from actorgraph.web._app import app

__all__ = ["app"]
