"""A server that LangGraph's own clients drive: the LangGraph Server API on actorgraph's store.

```python
import actorgraph as ag
from actorgraph.server import create_app

graph = ag.Graph()
graph.add_vertex("echo", lambda state: state)
graph.add_edge(ag.START, "echo")
graph.add_edge("echo", ag.END)

app = create_app({"agent": graph}, db="actorgraph.db")  # an ASGI app: `uvicorn module:app`, or mount it
```

`actorgraph server --config langgraph.json` serves the graphs of the file that
LangGraph users already have (or `-g NAME=TARGET`) with uvicorn, so that
`langgraph-sdk` (`get_client(url=...)`), `@langchain/langgraph-sdk` and its
`useStream` work against it unchanged: assistants (one per graph), threads,
their state and history, runs streamed (server-sent events) or waited for, the
memory store, and crons (runs on a schedule: the cron routes, and `Crons` from
Python). It needs the `server` extra (`pip install "actorgraph[server]"`);
`import actorgraph` never imports it. docs/how-to/serve.md says how to use it and
what differs from LangGraph's own server.

Threat model. Whoever reaches the server can run its graphs and read every
thread, so: it binds 127.0.0.1 by default, and `actorgraph server` refuses any
other address without `--token` or an auth handler (an empty token is refused);
with a token every request but `/ok` needs it (`Authorization: Bearer` or
`X-Api-Key`). With an auth handler (`Auth`, LangGraph's custom auth: the
config's `"auth": {"path": "./auth.py:auth"}`, or `create_app(auth=...)`) each
request is its user's: every route asks the handlers what the user may do, and
what they see is filtered in the store's own queries
(docs/how-to/serve-many-users.md). It answers only requests whose Host is a
loopback name or one it was given (400 otherwise: DNS rebinding); CORS is off
unless origins are named. Every request body is read with bounds (size, JSON
depth, list sizes) and validated by a pydantic model before anything runs; every
refusal is a 4xx `{"detail": ...}` naming the field, and nothing a route did not
expect is answered with a traceback.
Webhooks are signed (a secret is required to accept one) and sent only to
public addresses unless `webhooks.allow` names others, each address checked
when the request is sent, no redirect followed (`_webhooks.py`).

Layer (docs/design.md): a front end, at the top, on the public API and the facade.
It imports no other front end (`actorgraph.cli` imports it only to start it).
"""

import importlib.util

from actorgraph._model.errors import MissingDependencyError

# The `server` extra: module name -> the name pip installs it by. Checked before anything of it is
# imported, so a slim install gets one error naming the extra, not an ImportError from deep inside.
_EXTRA = {
    "starlette": "starlette",
    "uvicorn": "uvicorn",
    "pydantic": "pydantic",
    "orjson": "orjson",
    "croniter": "croniter",
    "httpx": "httpx",
}
_MISSING = [package for module, package in _EXTRA.items() if importlib.util.find_spec(module) is None]
if _MISSING:
    missing = ", ".join(_MISSING)
    msg = f'the server needs the server extra ({missing} not installed): pip install "actorgraph[server]"'
    raise MissingDependencyError(msg)

from actorgraph.server._app import create_app  # noqa: E402 - only once the extra is known there
from actorgraph.server._auth import Auth  # noqa: E402 - only once the extra is known there
from actorgraph.server._body import Limits  # noqa: E402 - only once the extra is known there
from actorgraph.server._cron_api import Crons  # noqa: E402 - only once the extra is known there
from actorgraph.server._cron_rows import Cron  # noqa: E402 - only once the extra is known there
from actorgraph.server._webhooks import Webhooks  # noqa: E402 - only once the extra is known there

__all__ = ["Auth", "Cron", "Crons", "Limits", "Webhooks", "create_app"]
