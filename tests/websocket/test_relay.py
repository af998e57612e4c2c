"""WebSocket sessions through a real forwarder, a route and the 426 and Origin refusals, with real
clients (the openai SDK's Responses WebSocket client, a Codex-shaped `websockets` client) against a
real aiohttp WebSocket upstream; every frame recorded in order, secrets scrubbed on disk."""

from __future__ import annotations

import json

import orjson
import pytest
from openai import OpenAI
from websockets.exceptions import ConnectionClosedError, ConnectionClosedOK, InvalidStatus
from websockets.sync.client import connect

from inspector.mock import MockUpstream
from inspector.proxy import Forwarder
from inspector.proxy.options import Options
from inspector.proxy.routes import open_forwarder, resolve
from inspector.wire.frames import Direction

KEY = "sk-proj-wsrelaytestkey0123456789abcdefghij"
BETA = "responses_websockets=2026-02-06"
TOOLS = [{"type": "function", "name": "read_file", "description": "read a file", "strict": False,
          "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}]


def ws_url(base: str, path: str) -> str:
    return base.replace("http://", "ws://", 1) + path


def codex_turns(url: str, **options) -> tuple[list[dict], object]:
    """What Codex sends: its headers, a prewarm (`generate: false`), then a tool-calling loop
    continued by `previous_response_id`. The server events it read, and the handshake response."""
    events: list[dict] = []
    with connect(url, additional_headers={"Authorization": f"Bearer {KEY}", "OpenAI-Beta": BETA},
                 **options) as ws:
        def turn(create: dict) -> dict:
            ws.send(json.dumps(create))
            while True:
                event = json.loads(ws.recv(timeout=10))
                events.append(event)
                if event["type"] == "response.completed":
                    return event["response"]

        warm = turn({"type": "response.create", "model": "gpt-test", "generate": False, "tools": TOOLS, "input": []})
        first = turn({"type": "response.create", "model": "gpt-test", "tools": TOOLS, "previous_response_id": warm["id"],
                      "input": [{"type": "message", "role": "user", "content": "read the readme"}]})
        call = first["output"][0]
        turn({"type": "response.create", "model": "gpt-test", "tools": TOOLS, "previous_response_id": first["id"],
              "input": [{"type": "function_call_output", "call_id": call["call_id"], "output": "# readme"}]})
        ws.close(code=1000, reason="done")
        return events, ws.response


def test_a_codex_shaped_session_is_relayed_frame_by_frame_and_recorded_in_order(upstream, store, forwarder, events):
    read, response = codex_turns(ws_url(forwarder.base_url, "/v1/responses"), subprotocols=["chosen.v1"])
    assert [e["type"] for e in read] == ["response.created", "response.completed"] + [
        "response.created", "response.output_item.added", "response.output_item.done", "response.completed"] * 2
    assert [e["response"]["previous_response_id"] for e in read if e["type"] == "response.completed"] == [
        None, "resp_1", "resp_2"]
    assert (response.headers["sec-websocket-protocol"], response.headers["x-request-id"]) == ("chosen.v1", "req_upstream")
    (handshake,) = upstream.handshakes
    assert (handshake["authorization"], handshake["openai-beta"], handshake["sec-websocket-protocol"]) == (
        f"Bearer {KEY}", BETA, "chosen.v1")
    assert "origin" not in handshake
    events.completed(1)  # the close goes on to the upstream, whose reply ends the flow
    frames = store.frames(1)
    sent = [payload for text, payload in upstream.received]
    assert [(f.direction, f.text) for f in frames][:3] == [(Direction.CLIENT, True), (Direction.SERVER, True),
                                                           (Direction.SERVER, True)]
    assert [f.payload for f in frames if f.direction is Direction.CLIENT] == sent
    assert [orjson.loads(f.payload) for f in frames if f.direction is Direction.SERVER] == read
    assert [f.at for f in frames] == sorted(f.at for f in frames)
    flow = store.get(1)
    assert (flow.websocket, flow.status, flow.method, flow.path, flow.state.value, flow.error) == (
        True, 101, "GET", "/v1/responses", "complete", None)
    assert flow.notes == ["client closed the socket: 1000 'done'"]
    assert ("authorization", "[redacted]") in flow.request_headers
    assert upstream.closes == [(1000, "done")]  # the client's code and reason, relayed


def sdk_tool_loop(client: OpenAI) -> list:
    """The openai SDK's Responses WebSocket client in a two-turn tool loop (a call, its output, the
    answer) continued by previous_response_id; the responses it completed."""
    completed = []
    with client.responses.connect(extra_headers={"OpenAI-Beta": BETA}) as connection:
        previous = None
        for given in ([{"type": "message", "role": "user", "content": "read the readme"}], None):
            if given is None:
                given = [{"type": "function_call_output", "call_id": completed[-1].output[0].call_id, "output": "# hi"}]
            connection.send({"type": "response.create", "model": "gpt-test", "tools": TOOLS, "input": given,
                             **({"previous_response_id": previous} if previous else {})})
            for event in connection:
                if event.type == "response.completed":
                    completed.append(event.response)
                    previous = event.response.id
                    break
    return completed


def assert_sdk_loop_recorded(completed: list, store, upstream) -> None:
    assert [r.id for r in completed] == ["resp_1", "resp_2"]
    assert (completed[0].output[0].type, completed[1].output[0].type) == ("function_call", "message")
    frames = store.frames(1)
    assert [f.direction for f in frames] == [Direction.CLIENT] + [Direction.SERVER] * 4 + [Direction.CLIENT] + [
        Direction.SERVER] * 4
    assert [orjson.loads(f.payload)["type"] for f in frames][:2] == ["response.create", "response.created"]
    assert upstream.handshakes[0]["authorization"] == f"Bearer {KEY}"
    # Each turn is a row of its own, linked to its socket, the second continuing the first; neither has a finding.
    store.flush()
    turns = sorted((row for row in store.rows() if row.socket_of == 1), key=lambda row: row.id)
    assert [(row.dialect, row.tools, row.tool_calls, row.errors, row.warnings) for row in turns] == [
        ("openai-responses", 1, 1, 0, 0), ("openai-responses", 1, 0, 0, 0)]
    assert [row.continues for row in turns] == [None, turns[0].id]


def test_the_openai_sdk_responses_socket_runs_a_tool_loop_through_the_forwarder(upstream, store, forwarder, events):
    completed = sdk_tool_loop(OpenAI(api_key=KEY, base_url=forwarder.base_url + "/v1"))
    events.completed(1)
    assert_sdk_loop_recorded(completed, store, upstream)


def test_the_openai_sdk_responses_socket_runs_a_tool_loop_through_a_route(upstream, store, events, tmp_path):
    with open_forwarder(resolve(routes=[f"oa={upstream.base_url}"], cwd=tmp_path), Options(port=0), store=store,
                        on_event=events) as router:
        completed = sdk_tool_loop(OpenAI(api_key=KEY, base_url=router.base_url + "/r/oa/v1"))
        events.completed(1)
    assert_sdk_loop_recorded(completed, store, upstream)
    assert store.get(1).route == "oa"


def test_a_route_relays_sockets_below_its_prefix(upstream, store, events):
    with open_forwarder(resolve(routes=[f"oa={upstream.base_url}"]), Options(port=0), store=store,
                        on_event=events) as router:
        read, _ = codex_turns(ws_url(router.base_url, "/r/oa/v1/responses"))
        events.completed(1)
    assert len(read) == 10
    flow = store.get(1)
    assert (flow.route, flow.path, flow.status, flow.websocket) == ("oa", "/v1/responses", 101, True)
    assert len(store.frames(1)) == 13


@pytest.mark.parametrize("translate", ["openai-responses:openai-chat", None])
def test_a_mode_that_cannot_take_sockets_answers_426_and_records_it(upstream, store, events, translate):
    options = Options(upstream.base_url, port=0, translate=translate, repair=translate is None)
    with Forwarder(options, store=store, on_event=events) as forwarder:
        with pytest.raises(InvalidStatus) as refused:
            codex_turns(ws_url(forwarder.base_url, "/v1/responses"))
        events.completed(1)
    assert refused.value.response.status_code == 426
    body = orjson.loads(refused.value.response.body)
    what = f"translates {translate}" if translate else "repairs requests"
    message = f"WebSockets are not relayed here: this route {what}, which frames cannot go through; use HTTP"
    assert body == {"error": {"type": "toolwire_websocket_refused", "message": message, "code": 426}}
    assert upstream.handshakes == []
    (row,) = store.rows()
    assert (row.status, row.state, row.error, row.websocket) == (426, "error", message, True)


def test_an_upstream_that_serves_http_only_gets_the_client_a_426_so_it_falls_back(store, events):
    with MockUpstream() as http_only, Forwarder(Options(http_only.base_url, port=0), store=store,
                                                 on_event=events) as forwarder:
        with pytest.raises(InvalidStatus) as refused:
            codex_turns(ws_url(forwarder.base_url, "/v1/responses"))
        events.completed(1)
    assert refused.value.response.status_code == 426
    (row,) = store.rows()
    assert (row.status, row.state, row.websocket, row.error) == (
        426, "error", True, f"upstream answered the WebSocket upgrade with 404: it takes no sockets at /v1/responses "
                            f"({http_only.base_url}); use HTTP")


def test_an_upstream_426_is_relayed_so_the_client_falls_back(upstream, store, forwarder, events):
    with pytest.raises(InvalidStatus) as refused:
        codex_turns(ws_url(forwarder.base_url, "/v1/refuse"))
    assert refused.value.response.status_code == 426
    events.completed(1)
    (row,) = store.rows()
    assert (row.status, row.state, row.websocket, row.error) == (
        426, "error", True, f"upstream answered the WebSocket upgrade with 426: it takes no sockets at /v1/refuse "
                            f"({upstream.base_url}); use HTTP")


def test_an_upgrade_from_a_web_page_is_refused_and_counted(upstream, store, forwarder):
    with pytest.raises(InvalidStatus) as refused:
        codex_turns(ws_url(forwarder.base_url, "/v1/responses"), origin="https://evil.example")
    assert refused.value.response.status_code == 403
    assert orjson.loads(refused.value.response.body)["error"]["type"] == "toolwire_origin_not_allowed"
    assert (forwarder.access.refused, forwarder.access.kinds["toolwire_origin_not_allowed"]) == (1, 1)
    assert upstream.handshakes == []
    store.flush()
    assert store.rows() == []  # a page that may not use the forwarder may not write flows either


def test_pings_and_pongs_are_relayed_end_to_end_both_ways(upstream, store, forwarder, events):
    """A real client's ping reaches the upstream and only the upstream's pong answers it; the
    upstream's ping reaches the client, whose pong reaches the upstream. Control frames are no
    frame records."""
    with connect(ws_url(forwarder.base_url, "/v1/responses"), ping_interval=None) as ws:
        answered = ws.ping(b"held:probe")
        assert json.loads(ws.recv(timeout=10)) == {"type": "pinged", "data": "held:probe"}
        # The upstream holds its pong: nobody on the way answered for it.
        assert not answered.is_set()
        ws.send('{"type": "pong_now"}')
        assert answered.wait(10)
        assert ws.ping(b"quick").wait(10)
        assert json.loads(ws.recv(timeout=10)) == {"type": "pinged", "data": "quick"}
        ws.send('{"type": "ping_me", "data": "are you there"}')
        assert json.loads(ws.recv(timeout=10)) == {"type": "ponged", "data": "are you there"}
        ws.close(code=4000, reason="bye now")
    events.completed(1)
    assert (upstream.pings, upstream.pongs) == ([b"held:probe", b"quick"], [b"are you there"])
    assert upstream.closes == [(4000, "bye now")]
    flow = store.get(1)
    assert flow.notes == ["client closed the socket: 4000 'bye now'"]
    assert [orjson.loads(f.payload)["type"] for f in store.frames(1)] == [
        "pinged", "pong_now", "pinged", "ping_me", "ponged"]


def test_close_codes_and_binary_frames_pass_both_ways(upstream, store, forwarder, events):
    with connect(ws_url(forwarder.base_url, "/v1/realtime?model=gpt-realtime")) as ws:
        ws.send(b"\x00\x01\x02")
        assert ws.recv(timeout=10) == b"\x02\x01\x00"
        ws.send('{"type": "close_me"}')
        with pytest.raises(ConnectionClosedError):
            ws.recv(timeout=10)
        assert (ws.close_code, ws.close_reason) == (4001, "asked to")
    events.completed(1)
    flow = store.get(1)
    assert [(f.direction, f.text, f.payload) for f in store.frames(1)] == [
        (Direction.CLIENT, False, b"\x00\x01\x02"), (Direction.SERVER, False, b"\x02\x01\x00"),
        (Direction.CLIENT, True, b'{"type": "close_me"}')]
    assert (flow.notes, flow.state.value, flow.query) == (["upstream closed the socket: 4001 'asked to'"], "complete",
                                                          "model=gpt-realtime")


def test_a_frame_carrying_the_key_is_scrubbed_on_disk(upstream, store, forwarder, events, tmp_path):
    with connect(ws_url(forwarder.base_url, "/v1/responses"), additional_headers={"Authorization": f"Bearer {KEY}"}) as ws:
        ws.send(json.dumps({"type": "echo", "api_key": KEY, "note": f"my key is {KEY}"}))
        assert KEY in ws.recv(timeout=10)
    events.completed(1)
    assert [f.payload for f in store.frames(1)] == [
        b'{"type": "echo", "api_key": "[redacted]", "note": "my key is [redacted]"}',
        b'{"type": "echo", "api_key": "[redacted]", "note": "my key is [redacted]"}']
    for path in tmp_path.iterdir():
        assert KEY.encode() not in path.read_bytes(), path


def test_an_upgrade_for_no_route_is_answered_404_and_recorded(upstream, store, events):
    with open_forwarder(resolve(routes=[f"oa={upstream.base_url}"]), Options(port=0), store=store,
                        on_event=events) as router:
        with pytest.raises(InvalidStatus) as refused:
            codex_turns(ws_url(router.base_url, "/v1/responses"))
        events.completed(1)
    assert refused.value.response.status_code == 404
    (row,) = store.rows()
    assert (row.status, row.websocket, row.route, row.path, row.error) == (
        404, True, "", "/v1/responses", "no route for '/v1/responses': paths start with one of /r/oa/")
    assert upstream.handshakes == []


def test_stopping_the_forwarder_mid_session_closes_both_sides_and_records_the_frames(upstream, store, events):
    forwarder = Forwarder(Options(upstream.base_url, port=0), store=store, on_event=events)
    forwarder.start()
    with connect(ws_url(forwarder.base_url, "/v1/responses")) as ws:
        ws.send('{"type": "echo"}')
        assert ws.recv(timeout=10) == '{"type": "echo"}'
        forwarder.stop()
        with pytest.raises(ConnectionClosedOK):  # 1001, going away: a clean close to the client
            ws.recv(timeout=10)
        assert (ws.close_code, ws.close_reason) == (1001, "forwarder stopped")
    events.completed(1)
    flow = store.get(1)
    assert (flow.state.value, flow.error, len(store.frames(1))) == ("error", "forwarder stopped after 2 frames", 2)


def test_an_unreachable_upstream_answers_502_and_records_why(store, events):
    with Forwarder(Options("http://127.0.0.1:9", port=0), store=store, on_event=events) as forwarder:
        with pytest.raises(InvalidStatus) as refused:
            codex_turns(ws_url(forwarder.base_url, "/v1/responses"))
        events.completed(1)
    assert refused.value.response.status_code == 502
    (row,) = store.rows()
    assert (row.status, row.websocket, row.error) == (
        502, True, "upstream unreachable: http://127.0.0.1:9: connection refused")


def test_a_key_sent_as_a_realtime_subprotocol_is_relayed_and_never_stored(upstream, store, forwarder, events,
                                                                          tmp_path):
    # A browser's WebSocket cannot set headers: OpenAI Realtime takes its key from the subprotocol list,
    # there an ephemeral client secret, which no shape names as a key.
    secret = "ek_68b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5"
    offered = ["realtime", f"openai-insecure-api-key.{secret}", "openai-beta.realtime-v1"]
    with connect(ws_url(forwarder.base_url, "/v1/realtime?model=gpt-realtime"), subprotocols=offered) as ws:
        ws.send(json.dumps({"type": "echo", "seen": secret}))
        assert secret in ws.recv(timeout=10)
    events.completed(1)
    assert upstream.handshakes[0]["sec-websocket-protocol"] == ",".join(offered)
    shown = "realtime, openai-insecure-api-key.[redacted], openai-beta.realtime-v1"
    flow = store.get(1)
    assert (dict(flow.request_headers)["sec-websocket-protocol"], dict(flow.upstream_request_headers).get(
        "sec-websocket-protocol")) == (shown, None)
    assert [f.payload for f in store.frames(1)] == [b'{"type": "echo", "seen": "[redacted]"}'] * 2
    for path in tmp_path.iterdir():
        assert secret.encode() not in path.read_bytes(), path
