"""The web inbox in a real browser (Debian's Chromium driven by Playwright) against a real server:
`actorgraph serve` as a subprocess on a loopback port, on a SQLite file that already holds a paused
thread (`web_graphs.py`).

Screenshots of the inbox and of a thread are written to each test's folder; with
`ACTORGRAPH_SCREENSHOTS=docs` they are also copied to `docs/images/` (the how-to shows them).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import web_graphs

from actorgraph.checkpoint import SqliteCheckpointer
from actorgraph.draw import _STYLES

pytestmark = [pytest.mark.needs_browser, pytest.mark.slow]  # slow: a real browser

TESTS = Path(__file__).resolve().parents[1]
DOCS_IMAGES = TESTS.parent / "docs" / "images"
CHROMIUM = "/usr/bin/chromium"
START = 20.0  # seconds a server may take to answer
STEP = 5_000  # ms Playwright waits for an element or a page
RUN = 15_000  # ms a resumed run may take to be done (the page reloads itself meanwhile)
TOKEN = "browser-test-token-0123456789"  # noqa: S105 - a test token
OK_FILL = _STYLES["ok"][0]  # the fill colour draw.py gives a vertex whose last task was ok


# -- the browser: one per module ------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if shutil.which("chromium") is None:  # conftest skips first; this names what is missing
        pytest.skip("no Chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=shutil.which("chromium") or CHROMIUM, args=["--no-sandbox"], headless=True
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def new_context(browser: Any) -> Iterator[Callable[[], Any]]:
    """Fresh browser contexts (own cookies), closed after the test, with short timeouts."""
    made: list[Any] = []

    def make() -> Any:
        context = browser.new_context(viewport={"width": 1100, "height": 900})
        context.set_default_timeout(STEP)
        context.set_default_navigation_timeout(2 * STEP)
        made.append(context)
        return context

    yield make
    for context in made:
        context.close()


@pytest.fixture
def page(new_context: Callable[[], Any]) -> Any:
    return new_context().new_page()


# -- the server: `actorgraph serve` on a loopback port ---------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")


@dataclass
class Servers:
    folder: Path
    started: list[Server] = field(default_factory=list)

    def paused(self, graph: str, *threads: tuple[str, dict[str, Any]]) -> Path:
        """Runs of `web_graphs.<graph>` that pause, in the SQLite file the server will serve."""
        db = self.folder / "runs.db"
        with SqliteCheckpointer(db) as store, getattr(web_graphs, graph).compile(store) as compiled:
            for thread_id, given in threads:
                compiled.invoke(given, thread_id=thread_id)
                assert compiled.get_state(thread_id).status == "interrupted"
        return db

    def start(self, graph: str, *args: str) -> Server:
        """`actorgraph serve web_graphs:<graph> --db runs.db`, answering (bounded) before it returns."""
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("ACTORGRAPH_")}
        env |= {"PYTHONPATH": os.pathsep.join(p for p in (str(TESTS), env.get("PYTHONPATH")) if p)}
        env |= {"WEB_TEST_DIR": str(self.folder), "NO_COLOR": "1"}
        argv = [sys.executable, "-m", "actorgraph.cli", "serve", f"web_graphs:{graph}"]
        argv += ["--db", str(self.folder / "runs.db"), "--host", "127.0.0.1", "--port", str(port), *args]
        log = self.folder / f"server-{port}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(argv, cwd=self.folder, env=env, stdout=out, stderr=subprocess.STDOUT)
        server = Server(f"http://127.0.0.1:{port}", process, log)
        self.started.append(server)
        deadline = time.monotonic() + START
        while time.monotonic() < deadline:
            if process.poll() is not None:
                pytest.fail(f"the server exited with {process.returncode}:\n{server.output()}")
            try:
                if httpx.get(f"{server.url}/login", timeout=2).status_code == 200:
                    return server
            except httpx.TransportError:
                time.sleep(0.1)
        pytest.fail(f"the server did not answer within {START} s:\n{server.output()}")

    def stop(self) -> None:
        for server in self.started:
            server.process.terminate()
            try:
                server.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.process.kill()
                server.process.wait(timeout=10)


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[Servers]:
    started = Servers(tmp_path)
    try:
        yield started
    finally:
        started.stop()


# -- helpers ----------------------------------------------------------------------------------------


def shoot(page: Any, folder: Path, name: str) -> Path:
    """A screenshot in the test's folder, copied to docs/images with ACTORGRAPH_SCREENSHOTS=docs."""
    shot = folder / name
    shot.write_bytes(page.screenshot())  # not `path=`: Playwright would write it from a pool thread
    assert shot.stat().st_size > 1000
    if os.environ.get("ACTORGRAPH_SCREENSHOTS") == "docs":
        DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, DOCS_IMAGES / name)
    return shot


def vertex_fills(page: Any, svg_url: str) -> dict[str, str]:
    """Open the thread's picture and read each vertex's fill colour from the SVG itself."""
    page.goto(svg_url)
    fills = {}
    for node in page.locator("g.node").all():
        name = node.locator("text").first.text_content() or ""
        shape = node.locator("polygon, path, ellipse").first
        fills[name.strip()] = (shape.get_attribute("fill") or "").lower()
    return fills


def status_of(context: Any, server: Server, thread_id: str) -> dict[str, Any]:
    reply = context.request.get(f"{server.url}/threads/{thread_id}/status.json")
    assert reply.status == 200
    status: dict[str, Any] = reply.json()
    return status


# -- the tests --------------------------------------------------------------------------------------


def test_a_choice_clicked_in_the_inbox_finishes_the_run_and_the_picture_turns_green(
    servers: Servers, page: Any, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    servers.paused("choices", ("release-1.4", {}), ("hotfix-231", {}))
    server = servers.start("choices")

    page.goto(f"{server.url}/")
    expect(page.get_by_role("heading", name="Inbox")).to_be_visible()
    row = page.locator("table.inbox tr", has=page.get_by_role("link", name="release-1.4"))
    expect(row).to_contain_text("choose")
    expect(row).to_contain_text("Ship it?")
    expect(page.get_by_role("link", name="hotfix-231")).to_be_visible()
    shoot(page, tmp_path, "web-inbox.png")

    row.get_by_role("link", name="release-1.4").click()
    expect(page.locator("#status")).to_have_text("interrupted")
    expect(page.locator("img.graph")).to_be_visible()
    shoot(page, tmp_path, "web-thread.png")

    page.get_by_label("your name").fill("Ada")
    with page.expect_response(lambda r: r.url.endswith("/answer")) as posted:
        page.get_by_role("button", name="ship", exact=True).click()
    assert posted.value.status == 303
    expect(page.locator("#status")).to_have_text("done", timeout=RUN)
    expect(page.get_by_role("button", name="ship")).to_have_count(0)
    # The page reloads itself until the run is done and may still be fetching the
    # picture: wait (bounded) until a loaded picture is there.
    page.wait_for_function(
        "() => { const img = document.querySelector('img.graph');"
        " return img !== null && img.complete && img.naturalWidth > 0; }",
        timeout=RUN,
    )
    assert status_of(page.context, server, "release-1.4")["state"]["picked"] == "ship"
    assert web_graphs.runs("publish") == 1

    fills = vertex_fills(page, f"{server.url}/threads/release-1.4/graph.svg")
    assert fills["choose"] == OK_FILL, fills
    assert fills["publish"] == OK_FILL, fills


def test_json_that_does_not_parse_is_shown_next_to_the_field(servers: Servers, page: Any) -> None:
    from playwright.sync_api import expect

    servers.paused("approval", ("notes-1", {"topic": "release notes"}))
    server = servers.start("approval")

    page.goto(f"{server.url}/threads/notes-1")
    field = page.get_by_label("answer as JSON")
    field.fill("{nope")
    with page.expect_response(lambda r: r.url.endswith("/answer")) as posted:
        page.get_by_role("button", name="Answer with JSON").click()
    assert posted.value.status == 400
    question = page.locator("section.interrupt")
    expect(question.get_by_role("alert")).to_contain_text("not JSON")
    expect(question.get_by_label("answer as JSON")).to_have_value("{nope")  # what was typed, to fix
    assert status_of(page.context, server, "notes-1")["status"] == "interrupted"

    question.get_by_label("answer as JSON").fill('{"approved": true}')
    question.get_by_role("button", name="Answer with JSON").click()
    expect(page.locator("#status")).to_have_text("done", timeout=RUN)
    assert status_of(page.context, server, "notes-1")["state"]["answer"] == {"approved": True}


def test_two_people_answer_the_same_question_one_wins_the_other_is_told(
    servers: Servers, new_context: Callable[[], Any]
) -> None:
    from playwright.sync_api import expect

    servers.paused("approval", ("notes-1", {"topic": "x"}))
    server = servers.start("approval")
    ada, bob = new_context().new_page(), new_context().new_page()
    for person in (ada, bob):  # both open the question before either answers
        person.goto(f"{server.url}/threads/notes-1")
        expect(person.get_by_label("answer as text")).to_be_visible()

    ada.get_by_label("your name").first.fill("Ada")
    ada.get_by_label("answer as text").fill("yes")
    ada.get_by_role("button", name="Answer", exact=True).click()
    expect(ada.locator("#status")).to_have_text("done", timeout=RUN)

    bob.get_by_label("your name").first.fill("Bob")
    bob.get_by_label("answer as text").fill("no")
    with bob.expect_response(lambda r: r.url.endswith("/answer")) as posted:
        bob.get_by_role("button", name="Answer", exact=True).click()
    assert posted.value.status == 409
    expect(bob.get_by_role("heading", name="Not applied")).to_be_visible()
    expect(bob.get_by_role("alert")).to_contain_text("already answered")
    expect(bob.locator("p.answered")).to_contain_text("Answered by Ada")
    expect(bob.locator("pre.json")).to_have_text('"yes"')

    assert status_of(ada.context, server, "notes-1")["state"]["answer"] == "yes"
    assert web_graphs.runs("publish") == 1


def test_a_script_in_a_question_is_shown_as_text_and_never_runs(servers: Servers, page: Any) -> None:
    from playwright.sync_api import expect

    attack = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">'
    servers.paused("raw", ("x1", {"question": attack}))
    server = servers.start("raw")
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))

    for url in (f"{server.url}/", f"{server.url}/threads/x1"):
        page.goto(url)
        expect(page.locator("p.question").first).to_have_text(attack)  # the markup, as text
        assert page.locator("img[src='x']").count() == 0  # no element was made from it
        assert page.evaluate("() => typeof window.pwned") == "undefined"
    assert dialogs == []


def test_with_a_token_the_browser_logs_in_and_posts_need_the_csrf_token(
    servers: Servers, new_context: Callable[[], Any]
) -> None:
    from playwright.sync_api import expect

    servers.paused("approval", ("t1", {"topic": "x"}))
    server = servers.start("approval", "--token", TOKEN)
    context = new_context()
    page = context.new_page()

    refused = page.goto(f"{server.url}/threads/t1")
    assert refused is not None
    assert refused.status == 401
    expect(page.get_by_text("Publish this draft?")).to_have_count(0)
    page.get_by_role("link", name="log in").click()

    page.get_by_label("access token").fill("a guess")
    with page.expect_response(lambda r: r.url.endswith("/login")) as wrong:
        page.get_by_role("button", name="Log in").click()
    assert wrong.value.status == 401
    expect(page.get_by_role("alert")).to_have_text("that is not the access token")
    assert context.cookies() == []

    page.get_by_label("access token").fill(TOKEN)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Inbox")).to_be_visible()
    expect(page.get_by_role("link", name="t1")).to_be_visible()
    (cookie,) = context.cookies()
    assert cookie["httpOnly"]
    assert cookie["sameSite"] == "Strict"
    assert TOKEN not in cookie["value"]

    page.get_by_role("link", name="t1").click()
    interrupt_id = page.locator("input[name=interrupt_id]").first.input_value()
    csrf = page.locator("input[name=csrf]").first.input_value()
    answer_url = f"{server.url}/threads/t1/answer"
    no_csrf = context.request.post(answer_url, form={"interrupt_id": interrupt_id, "text": "forged"})
    assert no_csrf.status == 403  # logged in (the cookie is sent), but no CSRF token
    forged = context.request.post(answer_url, form={"csrf": "x", "interrupt_id": interrupt_id, "text": "y"})
    assert forged.status == 403
    stranger = new_context().request.post(
        answer_url, form={"csrf": csrf, "interrupt_id": interrupt_id, "text": "stranger"}
    )
    assert stranger.status == 401  # the CSRF token alone is not the access token
    assert status_of(context, server, "t1")["status"] == "interrupted"

    page.get_by_label("answer as text").fill("ok")  # the page's own form carries both
    page.get_by_role("button", name="Answer", exact=True).click()
    expect(page.locator("#status")).to_have_text("done", timeout=RUN)
    assert status_of(context, server, "t1")["state"]["answer"] == "ok"


def test_tricky_thread_ids_open_and_answer_their_own_thread_in_a_browser(servers: Servers, page: Any) -> None:
    """Chromium resolves `..` and `.` in paths, splits at `/`, `?` and `#`: the links must survive it."""
    from playwright.sync_api import expect

    tricky = ["x/../victim", "..", ".", "a/b?c=1#d", "100% ünï\\code"]
    servers.paused("approval", *[(t, {"topic": t}) for t in [*tricky, "victim"]])
    server = servers.start("approval")

    for thread_id in tricky:
        page.goto(f"{server.url}/?status=all")
        page.get_by_role("link", name=thread_id, exact=True).click()
        expect(page.get_by_role("heading", level=1)).to_contain_text(f"Thread {thread_id}")
        expect(page.get_by_text(f"{thread_id}: draft", exact=True)).to_be_visible()
        page.get_by_label("answer as text").fill(f"yes to {thread_id}")
        page.get_by_role("button", name="Answer", exact=True).click()
        expect(page.locator("#status")).to_have_text("done", timeout=RUN)
        expect(page.get_by_role("heading", level=1)).to_contain_text(f"Thread {thread_id}")

    page.goto(f"{server.url}/")
    expect(page.get_by_role("link", name="victim", exact=True)).to_be_visible()  # still waiting
    assert web_graphs.runs("publish") == len(tricky)
