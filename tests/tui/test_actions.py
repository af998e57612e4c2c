"""Acting on a flow: `e` edits the request in the app and sends it (a new flow linked to its origin,
marked ↻E#N), `E` does it in $EDITOR, `y`/`Y`/`P` copy curl, body and a finding's pointer (OSC 52
and a file), and a stream whose events all arrived at once is marked. Real forwarder, real fake
upstream, real store, the real app under Pilot at 80×24 and 160×48."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import httpx
import pytest
from textual.notifications import Notify
from textual.widgets import Static, TextArea

from inspector.curl import curl_command
from inspector.flow import EDITED_REPLAY_NOTE
from inspector.mock import MockUpstream, sse_response
from inspector.wire.dialects.openai_chat.mock import chat_stream
from inspector.proxy import Forwarder
from inspector.store import Store
from inspector.tui.bridge import EventBridge
from inspector.tui.messages import Copied, ReplayFinished
from inspector.tui.screens.flow import FlowScreen
from inspector.tui.screens.flows import FlowsScreen
from inspector.tui.widgets.editor import EditorScreen
from inspector.tui.widgets.flow_list import FlowList

from .conftest import make_app, settle
from .flows import clean_request
from .test_flow_view import SIZES, open_flow
from .test_live import SECRET, Seen, completed, forwarding, post_chat, upstream  # noqa: F401 (fixtures)


def cursor_text(flows: FlowList) -> str:
    return flows.render_line(flows.cursor - int(flows.scroll_y)).text


async def recorded(app, pilot, seen: Seen, forwarder: Forwarder) -> None:
    await asyncio.to_thread(post_chat, forwarder.base_url)
    await seen.wait_for(completed(1))
    await settle(app, pilot)


def notes(seen: Seen) -> list[tuple[str, str]]:
    return [(m.notification.title, m.notification.message) for m in seen.messages if isinstance(m, Notify)]


@pytest.mark.parametrize("size", SIZES)
async def test_e_edits_the_request_here_and_sends_it_as_an_edited_replay(
        store: Store, upstream: MockUpstream, forwarding: tuple[Forwarder, EventBridge], size) -> None:
    forwarder, bridge = forwarding
    seen = Seen()
    app = make_app(store, forwarder=forwarder, bridge=bridge, clock=time.time)
    async with app.run_test(size=size, message_hook=seen) as pilot:
        await recorded(app, pilot, seen, forwarder)
        await pilot.press("e")
        await settle(app, pilot)
        editor = app.screen
        assert isinstance(editor, EditorScreen)
        area = editor.query_one(TextArea)
        assert (area.text, area.has_focus) == (json.dumps(clean_request(), indent=2) + "\n", True)
        edited = area.text.replace("Weather in Paris?", "Weather in Lyon?")
        area.text = edited
        await pilot.press("ctrl+s")
        finished = await seen.wait_for(lambda m: isinstance(m, ReplayFinished))
        assert (finished.original_id, finished.new_id, isinstance(app.screen, FlowsScreen)) == (1, 2, True)
        await seen.wait_for(completed(2))
        await settle(app, pilot)
        # Sent as typed, with the client's credentials from the forwarder's memory.
        assert upstream.received[1].body == edited.encode()
        assert [r.header("authorization") for r in upstream.received] == [f"Bearer {SECRET}"] * 2
        flows = app.query_one(FlowList)
        current = flows.current
        assert (current.id, current.replay_of, current.replay_edited, current.replay_fixed) == (2, 1, True, False)
        assert store.get(2).notes == [EDITED_REPLAY_NOTE]
        assert "↻E#1 /v1/chat/" in cursor_text(flows)
        await pilot.press("enter")
        await settle(app, pilot)
        title = str(app.screen.query_one("#flow-title", Static).content)
        assert "openai-chat · passthrough" in title and "  edited replay of #1" in title


@pytest.mark.parametrize("size", [(80, 24)])  # the layout plays no part: the smallest size
async def test_the_editor_refuses_json_that_does_not_parse_and_says_where(
        store: Store, upstream: MockUpstream, forwarding: tuple[Forwarder, EventBridge], size) -> None:
    forwarder, bridge = forwarding
    seen = Seen()
    app = make_app(store, forwarder=forwarder, bridge=bridge, clock=time.time)
    async with app.run_test(size=size, message_hook=seen) as pilot:
        await recorded(app, pilot, seen, forwarder)
        await open_flow(app, pilot, 1)
        await pilot.press("e")
        await settle(app, pilot)
        editor = app.screen
        assert isinstance(editor, EditorScreen)
        area = editor.query_one(TextArea)
        area.text = area.text.replace('"gpt-4o-mini",', '"gpt-4o-mini"', 1)
        await pilot.press("ctrl+s")
        assert app.screen is editor
        problem = editor.query_one("#edit-problem", Static)
        assert (str(problem.content), problem.display, area.cursor_location) == (
            "✖ not valid JSON: line 3, column 3: Expecting ',' delimiter (not sent)", True, (2, 2))
        await pilot.press("escape", "escape")  # the first asks: the edits are unsent
        await settle(app, pilot)
        assert isinstance(app.screen, FlowScreen) and len(upstream.received) == 1 and store.count() == 1


async def test_E_without_an_editor_edits_here(store: Store, ids: dict[str, int], monkeypatch) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    seen = Seen()
    app = make_app(store)
    async with app.run_test(size=(80, 24), message_hook=seen) as pilot:
        await settle(app, pilot)
        await pilot.press("E")
        await settle(app, pilot)
        assert isinstance(app.screen, EditorScreen) and app.screen.flow_id == app.query_one(FlowList).current.id
        assert notes(seen) == [("Edit", "no $VISUAL or $EDITOR set: editing here")]


@pytest.mark.parametrize("size", [(80, 24)])  # the layout plays no part: the smallest size
async def test_y_copies_the_request_as_curl_and_writes_it_to_a_file(
        store: Store, upstream: MockUpstream, forwarding: tuple[Forwarder, EventBridge], tmp_path: Path,
        size) -> None:
    forwarder, bridge = forwarding
    seen = Seen()
    app = make_app(store, forwarder=forwarder, bridge=bridge, clock=time.time, export_dir=tmp_path)
    async with app.run_test(size=size, message_hook=seen) as pilot:
        await recorded(app, pilot, seen, forwarder)
        await pilot.press("y", "enter")  # into the folder offered
        copied = await seen.wait_for(lambda m: isinstance(m, Copied))
        command = curl_command(store.get(1))
        path = tmp_path / "flow-1.curl.sh"
        assert (copied.what, copied.path, app.clipboard) == ("curl", str(path), command)
        assert path.read_text() == command + "\n"
        assert SECRET not in command and '"Authorization: Bearer ${OPENAI_API_KEY}"' in command.replace(
            "authorization", "Authorization")
        await pilot.press("Y", "enter")
        copied = await seen.wait_for(lambda m: isinstance(m, Copied) and m.what == "body")
        assert app.clipboard == json.dumps(clean_request(), separators=(",", ":"))  # as httpx sent it
        assert (tmp_path / "flow-1.request-body.txt").read_text() == app.clipboard
        await pilot.pause()
        assert notes(seen) == [
            ("Copy", f"#1 curl copied (if the terminal allows OSC 52) and written to {path}"),
            ("Copy", f"#1 body copied (if the terminal allows OSC 52) and written to {tmp_path}/flow-1.request-body.txt")]


@pytest.mark.parametrize("size", [(80, 24)])  # the layout plays no part: the smallest size
async def test_P_copies_the_pointer_of_the_chosen_finding(store: Store, ids: dict[str, int], tmp_path: Path,
                                                          size) -> None:
    seen = Seen()
    app = make_app(store, export_dir=tmp_path)
    async with app.run_test(size=size, message_hook=seen) as pilot:
        screen = await open_flow(app, pilot, ids["defective"])
        await pilot.press("n")
        chosen = screen.chosen.violation.pointer
        await pilot.press("n", "P", "enter")
        copied = await seen.wait_for(lambda m: isinstance(m, Copied))
        second = screen.chosen.violation.pointer
        assert second != chosen and (app.clipboard, copied.what) == (second, "pointer")
        assert (tmp_path / f"flow-{ids['defective']}.pointer.txt").read_text() == second + "\n"


def buffering_upstream_canned():
    paced = sse_response(chat_stream("The weather in Lyon is mild today.", pieces=6))
    paced.delay = 0.05
    paced.chunks = [(0.0, b"".join(data for _, data in paced.chunks))]
    return paced


@pytest.mark.parametrize("size", SIZES)
async def test_a_buffered_stream_is_marked_in_the_list_and_the_flow(
        store: Store, upstream: MockUpstream, forwarding: tuple[Forwarder, EventBridge], size) -> None:
    forwarder, bridge = forwarding
    seen = Seen()
    app = make_app(store, forwarder=forwarder, bridge=bridge, clock=time.time)
    upstream.push(buffering_upstream_canned(),
                  sse_response(chat_stream("The weather in Lyon is mild today.", pieces=6), interval=0.01))
    body = {**clean_request(), "stream": True}
    async with app.run_test(size=size, message_hook=seen) as pilot:
        for _ in range(2):
            response = await asyncio.to_thread(httpx.post, f"{forwarder.base_url}/v1/chat/completions", json=body)
            assert response.status_code == 200
        await seen.wait_for(completed(2))
        await settle(app, pilot)
        flows = app.query_one(FlowList)
        assert [(flows.row(n).id, flows.row(n).buffered) for n in range(flows.total)] == [(1, True), (2, False)]
        assert "⇉ " not in cursor_text(flows)
        await pilot.press("k")
        assert "⇉ /v1/chat/" in cursor_text(flows)
        await pilot.press("enter")
        await settle(app, pilot)
        title = str(app.screen.query_one("#flow-title", Static).content)
        assert "⇉ buffered: every event arrived at once" in title
