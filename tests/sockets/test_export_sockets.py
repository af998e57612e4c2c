"""A recorded socket exported: the json fixture and HAR carry its frames (HAR in the
`_webSocketMessages` convention Chrome and mitmproxy write), and `open` reads both back to the same
frames, split into the same turns; a HAR another tool wrote with WebSocket messages is read too."""

from __future__ import annotations

import base64
import json

import orjson

from inspector.flow import frames
from inspector.formats import fixture, registry
from inspector.sockets import turn_flows
from inspector.store import Store
from inspector.wire.frames import Direction
from tests.sockets.recorded import STARTED, record_socket, seeded


def exported(store: Store, flow_id: int, name: str) -> bytes:
    return registry.render(name, [fixture.from_store(store, store.get(flow_id))])


def test_a_socket_s_frames_go_out_as_websocket_messages_and_come_back(tmp_path):
    with Store(tmp_path / "s.db") as store:
        socket = record_socket(store, seeded() + [["server", b"\x00\xffaudio"]])
        recorded = store.frames(socket.id)
        har = json.loads(exported(store, socket.id, "har"))
        (entry,) = har["log"]["entries"]
        messages = entry["_webSocketMessages"]
        assert messages[:2] == [
            {"type": "send", "time": STARTED + 0.25, "opcode": 1, "data": recorded[0].payload.decode()},
            {"type": "receive", "time": STARTED + 0.5, "opcode": 1, "data": recorded[1].payload.decode()}]
        assert messages[-1] == {"type": "receive", "time": STARTED + 3.75, "opcode": 2,
                                "data": base64.b64encode(b"\x00\xffaudio").decode()}
        assert len(messages) == len(recorded) == 15
        assert "frames" not in entry["_toolwire"]["fixture"]["response"]  # carried once
        for name in ("har", "json"):
            (turn,) = registry.load_bytes(exported(store, socket.id, name), f"socket.{name}")
            back = frames(turn.flow)
            assert turn.flow.websocket
            assert [(f.direction, f.text, f.payload) for f in back] == [(f.direction, f.text, f.payload)
                                                                        for f in recorded]
            assert [round(f.at - turn.flow.started_at, 6) for f in back] == [
                round(f.at - STARTED, 6) for f in recorded]
            assert [orjson.loads(t.request_body) for t in turn_flows(turn.flow, back, iter(range(9)).__next__)] == [
                orjson.loads(t.request_body) for t in turn_flows(socket, recorded, iter(range(9)).__next__)]


def test_a_har_another_tool_wrote_with_websocket_messages_is_a_socket():
    create = '{"type":"response.create","model":"gpt-5","input":"hi","api_key":"sk-proj-0123456789abcdefghijklmnop"}'
    entry = {"startedDateTime": "2026-12-02T03:00:00.000Z", "time": 10,
             "request": {"method": "GET", "url": "https://api.openai.com/v1/responses", "httpVersion": "HTTP/1.1",
                         "headers": [{"name": "Authorization", "value": "Bearer sk-proj-0123456789abcdefghijklmnop"}],
                         "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
             "response": {"status": 101, "statusText": "Switching Protocols", "httpVersion": "HTTP/1.1",
                          "headers": [], "cookies": [], "content": {"size": 0, "mimeType": ""}, "redirectURL": "",
                          "headersSize": -1, "bodySize": 0},
             "cache": {}, "timings": {"send": 0, "wait": 10, "receive": 0},
             "_webSocketMessages": [
                 {"type": "send", "time": 1796180400.5, "opcode": 1, "data": create},
                 {"type": "receive", "time": 1796180400.75, "opcode": 1, "data": '{"type":"response.created"}'},
                 {"type": "receive", "time": 1796180401.0, "opcode": 9, "data": ""}]}
    (turn,) = registry.load_bytes(json.dumps({"log": {"version": "1.2", "entries": [entry]}}).encode(), "chrome.har")
    found = frames(turn.flow)
    assert [(f.direction, f.at - turn.flow.started_at) for f in found] == [(Direction.CLIENT, 0.5),
                                                                          (Direction.SERVER, 0.75)]
    assert b"sk-proj-0123456789abcdefghijklmnop" not in found[0].payload
    assert (turn.flow.websocket, turn.flow.status, turn.flow.path) == (True, 101, "/v1/responses")
