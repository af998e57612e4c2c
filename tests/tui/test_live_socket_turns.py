"""A socket's turns in the live list while the socket is still open: a real child process recording
(inspector.child) in front of a real WebSocket upstream, a real Codex-shaped client, the app reading
the child's store read-only. Each finished turn is its own row at once, linked to its socket, which
stays pending until it closes."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from websockets.sync.client import ClientConnection, connect

from inspector.child import ForwarderProcess
from inspector.proxy.options import Options
from inspector.tui.bridge import EventBridge
from inspector.tui.widgets.flow_list import FlowList
from tests.websocket.test_relay import BETA, KEY, TOOLS
from tests.websocket.upstream import SocketUpstream

from .conftest import make_app, settle
from .test_live import Seen, completed
from .test_process import reader


@pytest.fixture
def upstream() -> Iterator[SocketUpstream]:
    with SocketUpstream() as server:
        yield server


@pytest.fixture
def child(tmp_path: Path, upstream: SocketUpstream) -> Iterator[ForwarderProcess]:
    forwarder = ForwarderProcess.start(Options(upstream.base_url, store=str(tmp_path / "flows.sqlite3"), port=0))
    yield forwarder
    forwarder.stop()


def turn(ws: ClientConnection, create: dict) -> dict:
    ws.send(json.dumps(create))
    while True:
        event = json.loads(ws.recv(timeout=10))
        if event["type"] == "response.completed":
            return event["response"]


def listed(flows: FlowList) -> list[tuple]:
    rows = [flows.row(index) for index in range(flows.total)]
    return [(r.id, r.method, r.state, r.socket_of, r.continues, r.tool_calls) for r in rows if r is not None]


async def test_each_turn_is_listed_as_it_ends_while_its_socket_is_open(tmp_path: Path, child: ForwarderProcess) -> None:
    bridge = EventBridge()
    bridge.follow(child)
    seen = Seen()
    with reader(child, tmp_path / "flows.sqlite3") as store:
        app = make_app(store, forwarder=child, bridge=bridge, clock=time.time)
        async with app.run_test(size=(160, 48), message_hook=seen) as pilot:
            flows = app.query_one(FlowList)
            url = child.base_url.replace("http://", "ws://", 1) + "/v1/responses"
            ws = await asyncio.to_thread(connect, url, additional_headers={"Authorization": f"Bearer {KEY}",
                                                                           "OpenAI-Beta": BETA})
            try:
                first = await asyncio.to_thread(turn, ws, {"type": "response.create", "model": "gpt-test",
                                                           "tools": TOOLS, "input": "read the readme"})
                await seen.wait_for(completed(2))
                await settle(app, pilot)
                assert listed(flows) == [(1, "GET", "pending", None, None, 0), (2, "WS", "complete", 1, None, 1)]
                call = first["output"][0]
                await asyncio.to_thread(turn, ws, {
                    "type": "response.create", "model": "gpt-test", "tools": TOOLS, "previous_response_id": first["id"],
                    "input": [{"type": "function_call_output", "call_id": call["call_id"], "output": "# hi"}]})
                await seen.wait_for(completed(3))
                await settle(app, pilot)
                assert listed(flows) == [(1, "GET", "pending", None, None, 0), (2, "WS", "complete", 1, None, 1),
                                         (3, "WS", "complete", 1, 2, 0)]
            finally:
                await asyncio.to_thread(ws.close, 1000, "done")
            await seen.wait_for(completed(1))
            await settle(app, pilot)
            assert listed(flows) == [(1, "GET", "complete", None, None, 0), (2, "WS", "complete", 1, None, 1),
                                     (3, "WS", "complete", 1, 2, 0)]
