"""A socket while it is open, through a real forwarder and a real WebSocket upstream: each Responses
turn is a row as soon as it ends (not when the socket closes), and the socket's frames leave the
forwarder's memory once they are on disk, so a long session holds a window of them, not all."""

from __future__ import annotations

import json

import orjson
from websockets.sync.client import connect

from inspector.flow import FlowState
from inspector.wire.frames import Direction

from tests.websocket.test_relay import BETA, KEY, TOOLS, ws_url
from tests.websocket.test_store_frames import wait_until

ASK = {"type": "message", "role": "user", "content": "read the readme"}


def read_turn(ws, create: dict) -> dict:
    ws.send(json.dumps(create))
    while True:
        event = json.loads(ws.recv(timeout=10))
        if event["type"] == "response.completed":
            return event["response"]


def test_each_turn_is_a_row_while_its_socket_is_still_open(upstream, store, forwarder, events):
    with connect(ws_url(forwarder.base_url, "/v1/responses"),
                 additional_headers={"Authorization": f"Bearer {KEY}", "OpenAI-Beta": BETA}) as ws:
        first = read_turn(ws, {"type": "response.create", "model": "gpt-test", "tools": TOOLS, "input": [ASK]})
        (saved,) = events.turns(1)
        assert (saved.flow.id, saved.row.socket_of, saved.row.method, saved.row.state) == (2, 1, "WS", "complete")
        rows = store.rows()
        assert [(r.id, r.method, r.state, r.socket_of, r.tool_calls) for r in rows] == [
            (1, "GET", "pending", None, 0), (2, "WS", "complete", 1, 1)]
        call = first["output"][0]
        read_turn(ws, {"type": "response.create", "model": "gpt-test", "tools": TOOLS,
                       "previous_response_id": first["id"],
                       "input": [{"type": "function_call_output", "call_id": call["call_id"], "output": "# hi"}]})
        second = events.turns(2)[1]
        assert (second.row.id, second.row.continues, second.row.errors) == (3, 2, 0)
        assert store.get(1).state is FlowState.PENDING  # the socket is still open
        ws.close(code=1000, reason="done")
    events.completed(1)
    store.flush()
    assert [(r.id, r.method, r.state, r.socket_of, r.continues) for r in store.rows()] == [
        (1, "GET", "complete", None, None), (2, "WS", "complete", 1, None), (3, "WS", "complete", 1, 2)]
    assert len(events.turns(2)) == 2  # no turn written twice


def test_a_long_sockets_frames_leave_memory_once_on_disk_and_are_all_in_the_final_flow(upstream, store, forwarder,
                                                                                     events):
    count = 3000
    with connect(ws_url(forwarder.base_url, "/v1/responses"), additional_headers={"Authorization": f"Bearer {KEY}"}) as ws:
        live = events.started(1)[0].flow  # the forwarder's own flow, as it relays
        for burst in range(2):
            ws.send(json.dumps({"type": "burst", "count": count}))
            while json.loads(ws.recv(timeout=10))["type"] != "burst.done":
                pass
            # Nothing more passes until the next burst: the writer takes every frame it wrote.
            wait_until(lambda: not live.chunks)
            assert len(store.frames(1)) == (burst + 1) * (count + 2)
        ws.close(code=1000, reason="done")
    events.completed(1)
    frames = store.frames(1)
    assert len(frames) == 2 * (count + 2)
    burst = [{"type": "burst", "count": count}] + [{"type": "burst.delta", "n": n} for n in range(count)] + [
        {"type": "burst.done", "count": count}]
    assert [orjson.loads(f.payload) for f in frames] == burst * 2
    assert [f.direction for f in frames[:2]] == [Direction.CLIENT, Direction.SERVER]
    flow = store.get(1)
    assert flow.response_body == b"".join(chunk.data for chunk in flow.chunks)
    assert (flow.state, len(flow.chunks), flow.notes) == (FlowState.COMPLETE, 2 * (count + 2),
                                                          ["client closed the socket: 1000 'done'"])
