"""The TUI's first frame does not wait for its forwarder's process: the list of a store that exists
shows at once, the header says "starting…", and the child's readiness (or why it could not start)
arrives as an event. A real child process, held stopped (SIGSTOP) while the app shows its list, so
the order is certain; a real store; the real entry point in a pseudo-terminal."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from textual.notifications import Notify

from inspector.child import ForwarderProcess
from inspector.mock import MockUpstream
from inspector.proxy.options import Options
from inspector.store import Store
from inspector.tui.app import InspectorApp
from inspector.tui.bridge import EventBridge
from inspector.tui.messages import ForwarderFailed, ForwarderReady
from inspector.tui.widgets.connection import ConnectionBar
from inspector.tui.widgets.flow_list import FlowList

from .conftest import settle
from .flows import clean_request, save_flow
from .test_live import Seen, completed, post_chat
from .test_terminal import Terminal


@pytest.fixture
def upstream() -> Iterator[MockUpstream]:
    with MockUpstream() as mock:
        yield mock


@pytest.fixture
def stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store with one flow of an earlier session, as a second launch finds it."""
    monkeypatch.chdir(tmp_path)  # the header shows the store's path as given
    with Store("flows.sqlite3") as store:
        store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
        save_flow(store, clean_request())
    return Path("flows.sqlite3")


def header(app: InspectorApp) -> list[str]:
    return str(app.query_one(ConnectionBar).render()).split("\n")


async def test_the_list_shows_before_the_child_is_ready_and_the_header_follows_it(
        stored: Path, upstream: MockUpstream) -> None:
    child = ForwarderProcess.launch(Options(upstream.base_url, store=str(stored.resolve()), port=0))
    os.kill(child.pid, signal.SIGSTOP)  # it cannot be ready before the list is shown
    try:
        bridge = EventBridge()
        seen = Seen()
        with Store(stored, read_only=True, live=True) as store:
            bridge.launching(child)
            app = InspectorApp(store=store, forwarder=None, bridge=bridge, starting=True, clock=time.time)
            async with app.run_test(size=(120, 24), message_hook=seen) as pilot:
                await settle(app, pilot)
                flows = app.query_one(FlowList)
                assert (flows.total, flows.current.id, flows.current.path) == (1, 1, "/v1/chat/completions")
                assert header(app) == ["toolwire-inspect starting…  store flows.sqlite3"]
                assert not [m for m in seen.messages if isinstance(m, ForwarderReady)]
                os.kill(child.pid, signal.SIGCONT)
                ready = await seen.wait_for(lambda m: isinstance(m, ForwarderReady), timeout=30)
                assert (ready.session, ready.session_id, store.session_id) == (child, 2, 2)
                await pilot.pause()
                assert header(app)[0] == f"toolwire-inspect passthrough  listening {child.base_url} → {upstream.base_url}"
                # Its flows arrive as the child records them, in the session it started.
                await asyncio.to_thread(post_chat, child.base_url)
                await seen.wait_for(completed(2))
                await settle(app, pilot)
                assert [(r.id, r.session_id) for r in store.rows()] == [(1, 1), (2, 2)]
                assert (flows.total, flows.current.id) == (2, 2)
                await pilot.press("q")
    finally:
        os.kill(child.pid, signal.SIGCONT)
        child.stop()


async def test_a_child_that_cannot_start_says_why_in_the_app(stored: Path, upstream: MockUpstream) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        child = ForwarderProcess.launch(Options(upstream.base_url, store=str(stored.resolve()), port=port))
        try:
            bridge = EventBridge()
            seen = Seen()
            with Store(stored, read_only=True, live=True) as store:
                bridge.launching(child)
                app = InspectorApp(store=store, forwarder=None, bridge=bridge, starting=True, clock=time.time)
                async with app.run_test(size=(200, 24), message_hook=seen) as pilot:
                    failed = await seen.wait_for(lambda m: isinstance(m, ForwarderFailed), timeout=30)
                    await settle(app, pilot)
                    reason = f"cannot listen on 127.0.0.1:{port}: Address already in use"
                    assert (failed.reason, failed.browse, app.failed, app.forwarder) == (reason, False, failed, None)
                    assert header(app) == [f"toolwire-inspect not forwarding: {reason}  browsing flows.sqlite3"]
                    notes = [m.notification for m in seen.messages if isinstance(m, Notify)]
                    assert [(n.title, n.message, n.severity) for n in notes] == [
                        ("Not forwarding", f"the forwarder could not start: {reason}; the flows already stored "
                                           "can still be read", "error")]
                    # The stored flows stay readable.
                    assert app.query_one(FlowList).current.id == 1
                    await pilot.press("enter")
                    await settle(app, pilot)
                    assert app.screen.view.flow.id == 1
        finally:
            child.stop()


def test_a_second_launch_lists_its_store_then_forwards(stored: Path, upstream: MockUpstream) -> None:
    terminal = Terminal([sys.executable, "-m", "inspector", "--upstream", upstream.base_url, "--port", "0",
                         "--store", str(stored)], Path.cwd())
    terminal.expect(r"/v1/chat/completions\s+chat\s+gpt-4o-mini\s+200")
    port = terminal.expect(r"OPENAI_BASE_URL=http://127\.0\.0\.1:(\d+)/v1").group(1)
    response = httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=clean_request())
    assert response.status_code == 200
    terminal.send(b"\x11")  # ctrl+q
    assert terminal.wait() == 0
    with Store(stored) as store:
        assert [(r.id, r.session_id, r.status) for r in store.rows()] == [(1, 1, 200), (2, 2, 200)]


def test_a_launch_whose_child_fails_shows_it_and_exits_2(stored: Path, upstream: MockUpstream) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        terminal = Terminal([sys.executable, "-m", "inspector", "--upstream", upstream.base_url, "--port", str(port),
                             "--store", str(stored)], Path.cwd(), env={"COLUMNS": "200"})
        terminal.expect(r"not forwarding: cannot listen on 127\.0\.0\.1:\d+")
        terminal.expect(r"/v1/chat/completions\s+chat\s+gpt-4o-mini\s+200")
        terminal.send(b"\x11")  # ctrl+q
        assert terminal.wait() == 2


def test_the_list_s_first_frame_imports_no_analysis() -> None:
    """What `toolwire-inspect` imports before its first frame (inspector.cli.tui's run): neither the
    checker, the socket readers, the flow view nor the store's writer, which the child runs; nor, for
    the rows' dialect column, the dialects' homes (each imports its bridges, fixers and spec)."""
    done = subprocess.run([sys.executable, "-c", (
        "import sys\n"
        "from inspector.cli import tui\n"
        "from inspector.cli.common import open_store\n"
        "from inspector.child import ForwarderProcess\n"
        "from inspector.store import Store\n"
        "from inspector.tui.app import InspectorApp\n"
        "from inspector.tui.bridge import EventBridge\n"
        "from inspector.tui.keymap import user_keymap\n"
        "from inspector.tui.format import DIALECT_SHORT\n"
        "assert DIALECT_SHORT['openai-chat'] == 'chat'  # what each row's dialect column reads\n"
        "heavy = ('jsonschema', 'aiohttp', 'uvicorn', 'inspector.wire.check', 'inspector.analysis',\n"
        "         'inspector.sockets', 'inspector.tui.view', 'inspector.store.writer',\n"
        "         *(f'inspector.wire.dialects.{d}.home' for d in ('anthropic', 'bedrock', 'gemini', 'mcp',\n"
        "                                                         'openai_chat', 'openai_responses')))\n"
        "print(sorted(m for m in sys.modules if m in heavy))\n")], capture_output=True, text=True, check=True)
    assert done.stdout == "[]\n"
