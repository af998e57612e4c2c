"""The forwarder in its own process under the TUI (inspector.child): a real child process, a real
store file read read-only by the app, a real mock upstream; the parent killed outright in a process
of its own."""

from __future__ import annotations

import asyncio
from dataclasses import replace
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

from inspector.child import ChildFailed, ForwarderProcess
from inspector.mock import MockUpstream
from inspector.store import Store
from inspector.tui.bridge import EventBridge
from inspector.tui.messages import ForwarderStopped, ReplayFailed, ReplayFinished
from inspector.tui.widgets.connection import ConnectionBar
from inspector.tui.widgets.flow_list import FlowList
from inspector.proxy.options import Options

from .conftest import make_app, settle
from .flows import clean_request
from .test_live import SECRET, Seen, completed, post_chat


@pytest.fixture
def upstream() -> Iterator[MockUpstream]:
    with MockUpstream() as mock:
        yield mock


@pytest.fixture
def child(tmp_path: Path, upstream: MockUpstream) -> Iterator[ForwarderProcess]:
    forwarder = ForwarderProcess.start(Options(upstream.base_url, store=str(tmp_path / "flows.sqlite3"), port=0))
    yield forwarder
    forwarder.stop()


def reader(child: ForwarderProcess, path: Path) -> Store:
    """The app's view of the child's store: read-only, as `toolwire-inspect --upstream` opens it."""
    store = Store(path, read_only=True)
    store.session_id = child.session_id
    return store


def wait_until(condition, timeout: float = 10.0) -> None:
    """Poll with a deadline: for what no message announces (another process's end)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def gone(pid: int) -> bool:
    """Ended: no such process, or a zombie (exited, not yet reaped by its parent)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:  # reaped, even between opening the file and reading it
        return True


async def test_flows_recorded_by_the_child_appear_live_replay_runs_there_and_quit_stops_it(
        tmp_path: Path, upstream: MockUpstream, child: ForwarderProcess) -> None:
    bridge = EventBridge()
    bridge.follow(child)
    seen = Seen()
    port = int(child.base_url.rsplit(":", 1)[1])
    with reader(child, tmp_path / "flows.sqlite3") as store:
        app = make_app(store, forwarder=child, bridge=bridge, clock=time.time)
        async with app.run_test(size=(80, 24), message_hook=seen) as pilot:
            assert app.query_one(FlowList).total == 0
            await asyncio.to_thread(post_chat, child.base_url)
            await seen.wait_for(completed(1))
            await settle(app, pilot)
            flows = app.query_one(FlowList)
            row = flows.current
            assert (flows.total, row.id, row.path, row.status, row.model, row.session_id) == (
                1, 1, "/v1/chat/completions", 200, "gpt-4o-mini", child.session_id)
            assert str(app.query_one(ConnectionBar).render()).split("\n")[0] == (
                f"toolwire-inspect passthrough  tokens 10/5  listening {child.base_url} → {upstream.base_url}")
            # The client's key lives in the child's memory only: the replay is sent from there.
            await pilot.press("r")
            finished = await seen.wait_for(lambda m: isinstance(m, ReplayFinished))
            assert (finished.original_id, finished.new_id) == (1, 2)
            await seen.wait_for(completed(2))
            await settle(app, pilot)
            assert (flows.total, flows.current.id, flows.current.replay_of) == (2, 2, 1)
            assert [r.header("authorization") for r in upstream.received] == [f"Bearer {SECRET}"] * 2
            # Two writers never share this store, so the ids are dense.
            assert [r.id for r in store.rows()] == [1, 2]
            # Refusals are counted in the child and shown here.
            refused = await asyncio.to_thread(httpx.post, f"{child.base_url}/v1/chat/completions",
                                              json=clean_request(), headers={"Origin": "http://evil.example"})
            assert refused.status_code == 403
            await asyncio.to_thread(wait_until, lambda: child.access.refused == 1)
            await pilot.press("c")  # at 80 columns the refusal needs the whole header
            assert str(app.query_one(ConnectionBar).render()).split("\n")[1] == (
                "refused 1: refused: requests from web pages (Origin 'http://evil.example') are not answered; "
                "pass --allow-origin http://evil.example to allow that page")
            await pilot.press("q")
        # Asked by the quit itself, before the app's own teardown (the fixture's stop() comes later).
        await asyncio.to_thread(wait_until, lambda: gone(child.pid))
    assert not listening(port)
    # A stop that was asked for is not reported as a death.
    assert not [m for m in seen.messages if isinstance(m, ForwarderStopped)]


async def test_a_killed_child_is_shown_and_the_app_goes_on(tmp_path: Path, child: ForwarderProcess) -> None:
    bridge = EventBridge()
    bridge.follow(child)
    seen = Seen()
    with reader(child, tmp_path / "flows.sqlite3") as store:
        app = make_app(store, forwarder=child, bridge=bridge, clock=time.time)
        async with app.run_test(size=(160, 48), message_hook=seen) as pilot:
            await asyncio.to_thread(post_chat, child.base_url)
            await seen.wait_for(completed(1))
            os.kill(child.pid, signal.SIGKILL)
            stopped = await seen.wait_for(lambda m: isinstance(m, ForwarderStopped))
            assert stopped.reason == "exit status -9"
            await pilot.pause()
            bar = str(app.query_one(ConnectionBar).render()).split("\n")
            assert bar[2] == "forwarder stopped (exit status -9): nothing more is recorded"
            notes = [m.notification for m in seen.messages if isinstance(m, Notify)]
            assert [(n.title, n.severity) for n in notes] == [("Forwarder stopped", "error")]
            # The recorded flows stay readable; a replay says why it cannot be sent.
            await settle(app, pilot)
            assert app.query_one(FlowList).current.id == 1
            await pilot.press("r")
            failed = await seen.wait_for(lambda m: isinstance(m, ReplayFailed))
            assert (failed.original_id, failed.reason) == (1, "the forwarder is not running (exit status -9)")
            await pilot.press("enter")
            await settle(app, pilot)
            assert app.screen.view.flow.id == 1


def test_the_child_dies_with_its_parent(tmp_path: Path, upstream: MockUpstream) -> None:
    # The parent is a process of its own, killed outright: no cleanup of its own can run.
    parent = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, threading\n"
         "from inspector.child import ForwarderProcess\n"
         "from inspector.proxy.options import Options\n"
         f"child = ForwarderProcess.start(Options({upstream.base_url!r}, store={str(tmp_path / 'f.sqlite3')!r}, "
         "port=0))\n"
         "print(child.pid, child.base_url.rsplit(':', 1)[1], flush=True)\n"
         "threading.Event().wait()\n"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        pid, port = map(int, parent.stdout.readline().split())
        assert listening(port)
        response = httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=clean_request())
        assert response.status_code == 200
        parent.kill()
        parent.wait()
        wait_until(lambda: gone(pid))
        assert not listening(port)
    finally:
        parent.kill()
        parent.wait()
    with Store(tmp_path / "f.sqlite3", read_only=True) as store:
        assert [(r.id, r.state, r.status) for r in store.rows()] == [(1, "complete", 200)]


def test_a_child_that_cannot_start_says_why(tmp_path: Path, upstream: MockUpstream) -> None:
    with pytest.raises(ChildFailed) as refused:
        ForwarderProcess.start(Options("ftp://example.com", store=str(tmp_path / "f.sqlite3")))
    assert str(refused.value) == (
        "--upstream must be an http(s) URL such as https://api.openai.com; got 'ftp://example.com'")


async def test_keys_are_answered_while_a_2_mb_flow_loads(tmp_path: Path) -> None:
    from inspector.tui.screens.flow import FlowScreen
    from textual.widgets import TabbedContent

    from .flows import save_flow

    request = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": f"turn {n} " + "x" * 2600}
                                                    for n in range(800)]}
    # Analysed in the writer thread, not a worker process: this test is about the UI, not the store.
    with Store(tmp_path / "big.sqlite3", analyse_apart=10**9) as store:
        store.new_session("http://up.example", "http://127.0.0.1:0")
        big = save_flow(store, request)
        assert len(store.get(big).request_body) > 2_000_000
        app = make_app(store)
        seen = Seen()
        async with app.run_test(size=(80, 24), message_hook=seen) as pilot:
            await settle(app, pilot)
            # The loading thread is held at the store's read lock, so the load is still running when
            # the key comes, however fast the machine: the key must not wait for it.
            with store._read_lock:
                app.open_flow(big)
                await pilot.press("s")
                screen = app.screen
                assert isinstance(screen, FlowScreen) and screen.view is None
                assert screen.query_one(TabbedContent).active == "tab-chunks"
            await settle(app, pilot)
            assert screen.view is not None and screen.view.flow.id == big
            assert screen.query_one(TabbedContent).active == "tab-chunks"  # the key's effect stays
            # The request's text came first, before the analysis, on the lines the full view uses.
            loaded = [m for m in seen.messages if isinstance(m, (FlowScreen.Previewed, FlowScreen.Prepared))]
            assert [type(m) for m in loaded] == [FlowScreen.Previewed, FlowScreen.Prepared]
            assert (loaded[0].pane.text, loaded[0].pane.note) == (screen.view.request.text, "checking…")
            await pilot.press("escape")
            assert app.screen is app.flows_screen


def test_the_header_names_each_mode(store: Store) -> None:
    from inspector.proxy import Forwarder

    modes = [make_app(store, forwarder=Forwarder(Options("http://127.0.0.1:9", port=0, **options), store=store)).listening.mode
             for options in ({}, {"repair": True}, {"translate": "openai-chat:anthropic"})]
    assert modes == ["passthrough", "repair", "translate openai-chat → anthropic"]


def test_the_tui_s_limits_reach_its_forwarder_process(tmp_path: Path, upstream: MockUpstream) -> None:
    """`toolwire-inspect --max-body N` (the TUI) sets the limit of the forwarder it starts, as `record`'s does."""
    from inspector.cli import parse_args
    from inspector.cli.common import options

    given = options(parse_args(["--max-body", "16", "--timeout", "30"]))
    assert (given.max_body, given.timeout) == (16, 30.0)
    forwarder = ForwarderProcess.start(replace(given, upstream=upstream.base_url, store=str(tmp_path / "flows.sqlite3"),
                                               port=0))
    try:
        small = httpx.post(forwarder.base_url + "/v1/chat/completions", content=b'{"model": "m"}')
        large = httpx.post(forwarder.base_url + "/v1/chat/completions", content=b'{"model": "m", "x": 1}')
    finally:
        forwarder.stop()
    assert (small.status_code, large.status_code) == (200, 413)
