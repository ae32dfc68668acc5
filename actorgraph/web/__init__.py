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

Threat model. Whoever reaches the server can read every thread's state and
answer its questions, so:

- without a token the app admits everyone: serve it on loopback only
  (`actorgraph serve` refuses another address without a token);
- with `token`, every request needs it: `Authorization: Bearer TOKEN`, or the
  HttpOnly, SameSite=Strict session cookie set by the `/login` form (the cookie
  holds a keyed hash, not the token); otherwise 401;
- every POST carries the app's CSRF token (a random secret rendered into its
  forms, compared in constant time), else 403; forms are at most 64 KiB (413);
- every value from a state or an interrupt is escaped (Jinja2 autoescape) and a
  Content-Security-Policy forbids scripts, frames and foreign forms;
- no endpoint reads or writes a file, imports a module or evaluates anything
  the client chooses: answers are JSON or text, choices are picked by index
  among those the interrupt offers;
- an answer is applied once: a lock per thread, the answers applied so far (in
  memory), and a check that the question is still pending in the store; the
  second answer gets 409 and sees the first.

Not covered: TLS (put a reverse proxy in front of a public server), user
accounts (one token for everyone; the "your name" field is a label, not a
login), and the answers' record lasting past a restart (the store's pending
check still refuses a stale answer then).
"""

from actorgraph.web._app import app

__all__ = ["app"]
