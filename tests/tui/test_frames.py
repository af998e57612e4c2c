"""Sockets in the TUI: a Responses socket's turns are rows after it, marked with their socket; enter
on a socket shows its frames, one line each, the frame under the cursor raw beside (below at 80
columns) with its audio as a size, and the frames a finding points into marked."""

from __future__ import annotations

import base64

import pytest

from inspector.store import Store
from inspector.tui.screens.flow import FlowScreen
from inspector.tui.screens.frames import FramesScreen
from inspector.tui.widgets.flow_list import FlowList, row_cells
from inspector.tui.widgets.lines import LineViewer
from tests.sockets.recorded import record_socket, seeded

from .conftest import make_app, settle
from .flows import NOW

SIZES = [(80, 24), (160, 48)]
PCM = base64.b64encode(b"\x01\x02" * 12000).decode()  # half a second at 24 kHz
REALTIME = [
    ["client", {"type": "session.update", "session": {"type": "realtime", "tools": []}}],
    ["server", {"type": "response.output_audio.delta", "response_id": "resp_1", "delta": PCM}],
    ["client", {"type": "conversation.item.create",
                "item": {"type": "function_call_output", "call_id": "call_9\x1b[2J", "output": "{}"}}],
]


@pytest.fixture
def sockets(store: Store) -> tuple[int, int]:
    store.new_session("https://api.openai.com", "http://127.0.0.1:8787")
    responses = record_socket(store, seeded())
    realtime = record_socket(store, REALTIME, path="/v1/realtime")
    return responses.id, realtime.id


@pytest.mark.parametrize("size", SIZES)
async def test_turns_are_rows_after_their_socket(store: Store, sockets: tuple[int, int], size) -> None:
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        flows = app.screen.query_one(FlowList)
        assert flows.total == 5
        rows = [flows.row(index) for index in range(5)]
        assert [(cells[0], cells[2], cells[3], cells[6], cells[12]) for cells in (row_cells(r, NOW) for r in rows)] == [
            ("1", "GET", "⇅ /v1/responses", "101", ""),
            ("2", "WS", "⇅#1 /v1/responses", "200", ""),
            ("3", "WS", "⇅#1 /v1/responses", "200", ""),
            ("4", "WS", "⇅#1 /v1/responses", "200", "✖2"),
            ("5", "GET", "⇅ /v1/realtime", "101", "✖1"),
        ]


@pytest.mark.parametrize("size", SIZES)
async def test_enter_on_a_socket_shows_its_frames(store: Store, sockets: tuple[int, int], size) -> None:
    app = make_app(store)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        flows = app.screen.query_one(FlowList)
        assert flows.select_id(sockets[1])
        await pilot.press("enter")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, FramesScreen) and screen.view is not None
        frames = screen.query_one("#frames", LineViewer)
        assert frames.lines == [
            "   0 → +   0.250s     66 B  session.update",
            "   1 ← +   0.500s  31.3 KB  response.output_audio.delta  audio 23.4 KB 0.50s",
            "   2 → +   0.750s    116 B  conversation.item.create  call call_9\\x1b[2J",
        ]
        assert frames.marks == {2: "error"}
        raw = screen.query_one("#frame-raw", LineViewer)
        await pilot.press("j")
        await pilot.pause()
        assert raw.lines == ["{", '  "type": "response.output_audio.delta",', '  "response_id": "resp_1",',
                             '  "delta": "<24000 bytes of audio>"', "}"]
        assert raw.border_title == "Frame 1"
        await pilot.press("j")
        await pilot.pause()
        assert raw.lines[:2] == ["RT-01 error /2/item/call_id: function_call_output for call_id "
                                 "'call_9\\x1b[2J', which no function_call of this session announced", ""]
        assert not any(PCM[:64] in line for line in frames.lines + raw.lines)
        stacked = size[0] < 100
        assert (raw.region.y > frames.region.y) is stacked
        await pilot.press("escape")
        await pilot.pause()
        # A turn opens as the flow it is.
        assert flows.select_id(sockets[0] + 3)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, FlowScreen) and app.screen.view is not None
        assert [(v.rule, v.pointer) for v in app.screen.view.analysis.violations] == [("OR-08", "/input/0/call_id"),
                                                                                   ("OR-08", "/previous_response_id")]
