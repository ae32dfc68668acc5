"""Load: 100 concurrent streams against one `actorgraph server` process, round after round.

The server is the command, a child process, so that its memory is its own:
its resident set (VmRSS) and its thread count are read from /proc after each
round. In each round 100 clients (`langgraph-sdk`'s async client) each start a
thread of the `chat` graph and stream it (`values` + `messages-tuple`) to its
question; every other client answers at once and streams the rest, the others
leave their question open, as people do. Every stream must end with the right
values.

"Flat" means: from the end of round 2 to the end of round 5 (after the first
rounds have warmed the caches, the pools and the allocator), the server's RSS
grows by less than `RSS_SLACK` (6 MiB) and its threads by fewer than
`THREAD_SLACK` (40). No time is asserted. (When each open question held a
thread of the server, the 150 questions left open in rounds 3 to 5 grew it by
10 MiB and 160 threads.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import server_graphs
from server_process import ServerProcess, server_process

from actorgraph._actors import live

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # 5 rounds of 100 streams on a child server

CLIENTS = 100
ROUNDS = 5
RSS_SLACK = 6 * 2**20
THREAD_SLACK = 40
MODES = ["values", "messages-tuple"]


async def _stream(client: Any, thread_id: str, **options: Any) -> list[tuple[str, Any]]:
    return [(p.event, p.data) async for p in client.runs.stream(thread_id, "chat", **options)]


def _values(parts: list[tuple[str, Any]]) -> list[Any]:
    assert not [data for event, data in parts if event == "error"], parts
    return [data for event, data in parts if event == "values"]


async def _one(client: Any, index: int) -> None:
    """One client: a new thread streamed to its question; even clients answer it and stream the rest."""
    thread_id = (await client.threads.create())["thread_id"]
    hi = {"messages": [{"role": "user", "content": f"hi {index}"}], "n": index}
    parts = await _stream(client, thread_id, input=hi, stream_mode=MODES)
    assert parts[0][0] == "metadata"
    pieces = [data[0]["content"] for event, data in parts if event == "messages"]
    assert pieces == ["hel", "lo", "hello"]
    paused = _values(parts)[-1]
    assert paused["n"] == index + 1
    assert paused["log"] == ["greet"]
    assert [q["value"] for q in paused["__interrupt__"]] == [{"question": "go on?"}]
    if index % 2:
        return  # left open, as a person who has not answered yet leaves it
    done = _values(await _stream(client, thread_id, command={"resume": f"yes {index}"}))[-1]
    assert done["log"] == ["greet", f"ask:yes {index}", "finish"]
    assert done["n"] == (index + 1) * 10
    assert "__interrupt__" not in done


def _threads(server: ServerProcess) -> int:
    return len(list(Path(f"/proc/{server.process.pid}/task").iterdir()))


async def _rounds(server: ServerProcess) -> list[tuple[int, int]]:
    """Run the rounds; the server's (RSS, threads) after each."""
    from langgraph_sdk import get_client

    client = get_client(url=server.url, timeout=300)
    seen = []
    for _ in range(ROUNDS):
        await asyncio.gather(*(_one(client, index) for index in range(CLIENTS)))
        await asyncio.sleep(0.5)  # the runs' actors stop just after their streams end
        seen.append((server.rss(), _threads(server)))
    return seen


def test_a_hundred_concurrent_streams_all_finish_and_the_server_stays_flat(tmp_path):
    with server_process(["chat=chat_graph"], tmp_path) as server:
        seen = asyncio.run(_rounds(server))
        (rss_2, threads_2), (rss_5, threads_5) = seen[1], seen[-1]
        shown = ", ".join(f"{rss / 2**20:.1f} MiB {threads} threads" for rss, threads in seen)
        assert rss_5 - rss_2 < RSS_SLACK, f"the server's memory grew round after round: {shown}"
        assert threads_5 - threads_2 < THREAD_SLACK, f"the server kept threads: {shown}"
        assert "Traceback" not in server.output()


KINDS: dict[str, Any] = {  # what the server is given, made anew for each test
    "a function returning a Graph": lambda: server_graphs.chat_graph,
    "a Graph": server_graphs.chat_graph,
    "a CompiledGraph with the live path on": lambda: server_graphs.chat_graph().compile(live_interrupts=60),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_pause_holds_no_thread_of_the_server_whatever_the_kind_of_graph(serve_with, kind):
    client = serve_with({"chat": KINDS[kind]()}).client()
    thread_id = client.threads.create()["thread_id"]
    paused = client.runs.wait(thread_id, "chat", input={"messages": [], "n": 1})
    assert paused["__interrupt__"]
    assert live.waiting() == 0  # its vertex unwound: the question is only in the store
    done = client.runs.wait(thread_id, "chat", command={"resume": "later"})
    assert done["log"] == ["greet", "ask:later", "finish"]
