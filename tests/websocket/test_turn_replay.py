"""A seeded violation in a recorded Codex-shaped socket (a function_call_output for a call no turn
made), end to end through a real forwarder and a real WebSocket upstream: caught on its turn's row,
replayed on a socket of its own as recorded and fixed (the history it continued sent as full input),
each replay recorded and linked to the turn."""

from __future__ import annotations

import json
import ssl

import orjson
from websockets.sync.client import connect

from inspector.flow import FIXED_REPLAY_NOTE, ReplayKind
from inspector.proxy import Forwarder
from inspector.proxy.ca import LocalCA
from inspector.proxy.options import Options, ProxyOptions
from inspector.replay import replay_stored
from inspector.wire.fix import UNAVAILABLE

from tests.websocket.test_relay import BETA, KEY, TOOLS, ws_url

ASK = {"type": "message", "role": "user", "content": "read the readme"}


def seeded_session(url: str, **options) -> None:
    """Codex's loop, but the tool result answers call_unknown: the call the model made was call_1."""
    with connect(url, additional_headers={"Authorization": f"Bearer {KEY}", "OpenAI-Beta": BETA}, **options) as ws:
        def turn(create: dict) -> dict:
            ws.send(json.dumps(create))
            while True:
                event = json.loads(ws.recv(timeout=10))
                if event["type"] == "response.completed":
                    return event["response"]

        first = turn({"type": "response.create", "model": "gpt-test", "tools": TOOLS, "input": [ASK]})
        turn({"type": "response.create", "model": "gpt-test", "tools": TOOLS, "previous_response_id": first["id"],
              "input": [{"type": "function_call_output", "call_id": "call_unknown", "output": "# readme"}]})
        ws.close(code=1000, reason="done")


def last_create(upstream) -> dict:
    return orjson.loads(upstream.received[-1][1])


def test_a_seeded_orphan_output_is_caught_and_replayed_as_recorded_and_fixed(upstream, store, forwarder, events):
    seeded_session(ws_url(forwarder.base_url, "/v1/responses"))
    events.completed(1)
    store.flush()
    assert [(r.id, r.method, r.socket_of, r.continues, r.errors) for r in store.rows()] == [
        (1, "GET", None, None, 0), (2, "WS", 1, None, 0), (3, "WS", 1, 2, 2)]
    turn = store.get(3)
    assert [(v.rule, v.pointer) for v in store.analysis(turn).violations] == [("OR-08", "/input/0/call_id"),
                                                                                ("OR-08", "/previous_response_id")]
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read_file",
            "arguments": '{"path": "README.md"}', "status": "completed"}

    replayed = replay_stored(store, forwarder, 3)
    # Its own socket, its own handshake; the history as full input, no previous_response_id.
    assert len(upstream.handshakes) == 2
    assert upstream.handshakes[1]["authorization"] == f"Bearer {KEY}"  # the forwarder kept the socket's key
    assert last_create(upstream) == {"type": "response.create", "model": "gpt-test", "tools": TOOLS, "input": [
        ASK, call, {"type": "function_call_output", "call_id": "call_unknown", "output": "# readme"}]}
    events.completed(2)
    store.flush()
    assert (store.get(replayed).replay_of, store.get(replayed).websocket) == (3, True)
    (again,) = [r for r in store.rows() if r.socket_of == replayed]
    assert (again.replay_of, again.errors) == (3, 2)

    fixed = replay_stored(store, forwarder, 3, kind=ReplayKind.FIXED)
    # Fixed as the server reads it: the orphan dropped, the call the model made answered.
    assert last_create(upstream) == {"type": "response.create", "model": "gpt-test", "tools": TOOLS, "input": [
        ASK, call, {"type": "function_call_output", "call_id": "call_1", "output": UNAVAILABLE}]}
    events.completed(3)
    store.flush()
    (mended,) = [r for r in store.rows() if r.socket_of == fixed]
    assert (mended.replay_of, mended.replay_fixed, mended.errors) == (3, True, 0)
    assert FIXED_REPLAY_NOTE in store.get(fixed).notes


def test_a_turn_of_a_socket_recorded_in_a_proxy_tunnel_is_replayed_through_that_tunnel(upstream, store, events,
                                                                                         tmp_path):
    """Codex in proxy mode (CONNECT, TLS intercepted with the local CA, then the upgrade): its turn is
    replayed the way it came, on a socket of its own through a tunnel to the same host."""
    options = Options("http://127.0.0.1:9", port=0, proxy=ProxyOptions(
        intercept=(f"api.openai.com={upstream.base_url}",), ca_dir=str(tmp_path / "ca")))
    with Forwarder(options, store=store, on_event=events) as forwarder:
        LocalCA(tmp_path / "ca", forwarder.connect.intercepts.hosts)
        trusted = ssl.create_default_context(cafile=str(tmp_path / "ca" / "toolwire-ca.pem"))
        seeded_session("wss://api.openai.com/v1/responses", proxy=forwarder.base_url, ssl=trusted)
        events.completed(1)
        store.flush()
        assert [(r.id, r.method, r.socket_of, r.continues, r.errors) for r in store.rows()] == [
            (1, "GET", None, None, 0), (2, "WS", 1, None, 0), (3, "WS", 1, 2, 2)]

        replayed = replay_stored(store, forwarder, 3, kind=ReplayKind.FIXED)
        events.completed(2)
        store.flush()
    assert len(upstream.handshakes) == 2
    assert (upstream.handshakes[1]["authorization"], upstream.handshakes[1]["host"]) == (
        f"Bearer {KEY}", f"127.0.0.1:{upstream.port}")
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read_file",
            "arguments": '{"path": "README.md"}', "status": "completed"}
    assert last_create(upstream) == {"type": "response.create", "model": "gpt-test", "tools": TOOLS, "input": [
        ASK, call, {"type": "function_call_output", "call_id": "call_1", "output": UNAVAILABLE}]}
    socket = store.get(replayed)
    assert (socket.websocket, socket.replay_of, socket.route, socket.upstream_url) == (
        True, 3, "", f"{upstream.base_url}/v1/responses")
    assert ("host", "api.openai.com") in socket.request_headers
    (mended,) = [r for r in store.rows() if r.socket_of == replayed]
    assert (mended.replay_of, mended.replay_fixed, mended.errors) == (3, True, 0)
