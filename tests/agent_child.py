"""An agent run in its own process, for the crash and approval tests.

`agent_child.py run|resume|ask|approve DB THREAD LEDGER`: the agent's model asks
for three tool calls (a, b, c) and then answers; every tool writes "start:<name>"
and "end:<name>" lines to LEDGER (fsynced). With BLOCK set, tool c never finishes
(the test kills the process). `ask` stops before the tools (interrupt_before),
`approve` continues. The last line printed is a JSON report.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from ledger import note

from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.messages import role_of
from actorgraph.prebuilt import create_react_agent

LEDGER = sys.argv[4] if len(sys.argv) > 4 else ""


def _tool(name: str) -> Any:
    def tool(x: int) -> str:
        note(LEDGER, f"start:{name}")
        if name == "c" and os.environ.get("BLOCK"):
            while True:
                time.sleep(1)
        note(LEDGER, f"end:{name}")
        return f"{name}{x}"

    tool.__name__ = name
    tool.__doc__ = f"Tool {name}."
    return tool


def model(messages: list[Any]) -> dict[str, Any]:
    """Ask for three tool calls after the user speaks; answer once the tools did."""
    if role_of(messages[-1]) == "user":
        calls = [{"id": f"call-{n}", "name": n, "args": {"x": i}} for i, n in enumerate("abc")]
        return {"role": "assistant", "content": "", "tool_calls": calls}
    return {"role": "assistant", "content": "all three done"}


def main() -> None:
    command, db, thread = sys.argv[1:4]
    checkpointer = SqliteCheckpointer(db)
    before = ["tools"] if command in ("ask", "approve") else None
    with create_react_agent(
        model, [_tool(n) for n in "abc"], checkpointer=checkpointer, interrupt_before=before
    ) as app:
        first = command in ("run", "ask")
        result = app.invoke({"messages": ["go"]} if first else None, thread_id=thread)
        messages = (result.state or {}).get("messages", [])
        said = [m["content"] for m in messages if role_of(m) == "tool"]
        print(json.dumps({"status": result.status, "tools": said}))  # noqa: T201 - the report line
    checkpointer.close()


if __name__ == "__main__":
    main()
