"""The inbox reads one page of the store's threads: the 200 newest, saying when there are more,
and a search of ids that reads page after page until it has found enough."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
import web_graphs
from starlette.testclient import TestClient
from store_rows import row

from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.web import _pages, app

THREADS = 205


@pytest.fixture
def client(tmp_path: Path):
    """The inbox of a SQLite store holding `THREADS` done threads t0..t204 (t204 the newest)."""
    with SqliteCheckpointer(tmp_path / "runs.db") as store, web_graphs.approval.compile(store) as graph:
        for n in range(THREADS):
            store.put(row(f"t{n}", 1, status="done"), expect_head=None)
            time.sleep(0.0002)  # distinct updated_at: the newest is known
        yield TestClient(app(graph), base_url="http://127.0.0.1")


def _listed(page: str) -> list[str]:
    return re.findall(r'<td><a href="/threads/([^"]+)">', page)


def test_the_inbox_shows_the_newest_threads_and_says_there_are_more(client: TestClient) -> None:
    page = client.get("/", params={"status": "done"}).text
    listed = _listed(page)
    assert listed == [f"t{n}" for n in range(THREADS - 1, THREADS - 1 - _pages.INBOX_ROWS, -1)]
    assert "Showing the 200 newest threads; there are more" in page


def test_a_page_with_every_thread_on_it_does_not_say_there_are_more(client: TestClient) -> None:
    page = client.get("/", params={"status": "done", "q": "t20"}).text
    assert _listed(page) == ["t204", "t203", "t202", "t201", "t200", "t20"]
    assert "there are more" not in page


def test_a_search_reads_page_after_page_of_the_store(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_pages, "SEARCH_PAGE", 7)  # many small pages, the last one short
    page = client.get("/", params={"status": "all", "q": "T1"}).text
    expected = [f"t{n}" for n in range(THREADS - 1, -1, -1) if str(n).startswith("1")]
    assert _listed(page) == expected
    assert "there are more" not in page
    monkeypatch.setattr(_pages, "INBOX_ROWS", 50)
    cut = client.get("/", params={"status": "all", "q": "t1"}).text
    assert _listed(cut) == expected[:50]
    assert "Showing the 50 newest matching threads; there are more" in cut


class _Listing(SqliteCheckpointer):
    """A real SQLite store that records the `limit` of every `threads()` call made on it."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.limits: list[int | None] = []

    def threads(self, **kwargs):
        self.limits.append(kwargs.get("limit"))
        return super().threads(**kwargs)


def test_runs_counts_in_the_store_and_lists_one_page_of_failures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _Listing(tmp_path / "runs.db") as store, web_graphs.approval.compile(store) as graph:
        for n in range(THREADS):
            status = "error" if n % 41 == 0 else "done"  # t0, t41, t82, t123, t164 failed
            store.put(row(f"t{n}", 1, status=status), expect_head=None)
            time.sleep(0.0002)
        monkeypatch.setattr(_pages, "INBOX_ROWS", 3)
        page = TestClient(app(graph), base_url="http://127.0.0.1").get("/runs").text
        assert store.limits == [3]  # one page of the failed threads, and no listing of every thread
    assert '<span class="status done">done</span> 200' in page
    assert '<span class="status error">error</span> 5' in page
    assert '<span class="status interrupted">interrupted</span> 0' in page
    assert re.findall(r'<h3><a href="/threads/([^"]+)">', page) == ["t164", "t123", "t82"]
    assert "Showing the 3 newest of 5 failed runs" in page
