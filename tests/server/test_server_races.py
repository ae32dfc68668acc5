"""Two server processes on one store, two `reject` requests on one thread at the same moment: exactly one
run starts, the other request gets 409 and records nothing. Twenty rounds, on SQLite and PostgreSQL, with
real `actorgraph server` processes and `langgraph-sdk` clients sending from two threads released together.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client
from pg_server import POSTGRES
from server_processes import processes

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

ROUNDS = 20


def _both(clients: list[Any], thread: str) -> list[int]:
    """The statuses of two `reject` runs on `thread`, one to each server, sent together."""
    start, statuses = threading.Barrier(len(clients)), list[int]()

    def send(client: Any) -> None:
        start.wait(30)
        try:
            client.runs.create(thread, "slow", input={"sleep": 3}, multitask_strategy="reject")
            statuses.append(200)
        except httpx.HTTPStatusError as exc:
            statuses.append(exc.response.status_code)

    senders = [threading.Thread(target=send, args=(client,)) for client in clients]
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join(60)
    return sorted(statuses)


@pytest.mark.parametrize("kind", ["sqlite", POSTGRES])
def test_two_servers_never_both_start_a_run_on_one_thread(
    tmp_path: Path, kind: str, request: pytest.FixtureRequest
) -> None:
    store = ["--db", str(tmp_path / "runs.db")]
    if kind == "postgres":
        store = ["--dsn", request.getfixturevalue("postgres_db")]
    with processes(tmp_path, store) as running:
        urls = [running.server(log="a.log"), running.server(log="b.log")]
        clients = [get_sync_client(url=url, timeout=60) for url in urls]
        for _ in range(ROUNDS):
            thread = clients[0].threads.create()["thread_id"]
            assert _both(clients, thread) == [200, 409]
            assert len(clients[1].runs.list(thread)) == 1
            assert clients[1].threads.get(thread)["status"] == "busy"
