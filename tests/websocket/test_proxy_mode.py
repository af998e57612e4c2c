"""WebSockets inside intercepted proxy-mode tunnels: Codex's `wss://api.openai.com/v1/responses`,
ChatGPT-login Codex's `/backend-api/codex/responses` and Gemini Live's BidiGenerateContent (its key
in `?key=`), each reached through CONNECT and the local CA, relayed to a local WebSocket upstream
and recorded; the key never reaches disk."""

from __future__ import annotations

import asyncio
import json
import ssl

import orjson
import pytest
from websockets.sync.client import connect

from inspector.proxy import Forwarder
from inspector.proxy.ca import LocalCA
from inspector.proxy.options import Options, ProxyOptions
from inspector.wire.frames import Direction

KEY = "AIzaSyWsRelayTestKey0123456789abcdefgh"
LIVE = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
HOSTS = ("api.openai.com", "chatgpt.com", "generativelanguage.googleapis.com")


@pytest.fixture
def proxy(upstream, store, events, tmp_path):
    intercept = tuple(f"{host}={upstream.base_url}" for host in HOSTS)
    options = Options("http://127.0.0.1:9", port=0, proxy=ProxyOptions(intercept=intercept, ca_dir=str(tmp_path / "ca")))
    with Forwarder(options, store=store, on_event=events) as forwarder:
        LocalCA(tmp_path / "ca", forwarder.connect.intercepts.hosts)
        yield forwarder, ssl.create_default_context(cafile=str(tmp_path / "ca" / "toolwire-ca.pem"))


@pytest.mark.parametrize(("host", "path"), [("api.openai.com", "/v1/responses"),
                                            ("chatgpt.com", "/backend-api/codex/responses"),
                                            ("generativelanguage.googleapis.com", f"{LIVE}?key={KEY}")])
def test_sockets_in_intercepted_tunnels_are_relayed_and_recorded(upstream, store, events, proxy, tmp_path, host, path):
    forwarder, trusted = proxy
    sent = json.dumps({"type": "echo", "note": f"key {KEY}"})
    with connect(f"wss://{host}{path}", proxy=forwarder.base_url, ssl=trusted,
                 additional_headers={"Authorization": f"Bearer {KEY}"}) as ws:
        ws.send(sent)
        assert ws.recv(timeout=10) == sent
    events.completed(1)
    (handshake,) = upstream.handshakes
    assert (handshake["authorization"], handshake["host"]) == (f"Bearer {KEY}", f"127.0.0.1:{upstream.port}")
    flow = store.get(1)
    shown_path, _, query = path.partition("?")
    assert (flow.websocket, flow.status, flow.path, flow.state.value, flow.mode.value) == (
        True, 101, shown_path, "complete", "passthrough")
    assert flow.query == ("key=[redacted]" if query else "")
    scrubbed = b'{"type": "echo", "note": "key [redacted]"}'
    assert [(f.direction, f.payload) for f in store.frames(1)] == [(Direction.CLIENT, scrubbed),
                                                                   (Direction.SERVER, scrubbed)]
    assert orjson.loads(scrubbed)["note"] == "key [redacted]"
    for file in tmp_path.iterdir():
        if file.is_file():
            assert KEY.encode() not in file.read_bytes(), file


def test_a_closed_socket_gives_its_tunnels_place_back(upstream, store, events, tmp_path):
    intercept = (f"api.openai.com={upstream.base_url}",)
    proxy = ProxyOptions(intercept=intercept, ca_dir=str(tmp_path / "ca"), max_tunnels=1)
    with Forwarder(Options("http://127.0.0.1:9", port=0, proxy=proxy), store=store, on_event=events) as forwarder:
        LocalCA(tmp_path / "ca", forwarder.connect.intercepts.hosts)
        trusted = ssl.create_default_context(cafile=str(tmp_path / "ca" / "toolwire-ca.pem"))
        for n in range(3):  # one tunnel at most: each session must have given its place back
            with connect("wss://api.openai.com/v1/responses", proxy=forwarder.base_url, ssl=trusted) as ws:
                ws.send('{"type": "echo"}')
                assert ws.recv(timeout=10) == '{"type": "echo"}'
            events.completed(n + 1)
        loop = forwarder._server.loop
        assert asyncio.run_coroutine_threadsafe(_open_tunnels(forwarder), loop).result(10) == 0
    assert [row.status for row in store.rows()] == [101, 101, 101]


async def _open_tunnels(forwarder) -> int:
    return forwarder.connect.open_tunnels


def test_the_openai_sdk_responses_socket_runs_a_tool_loop_in_proxy_mode(upstream, store, events, proxy, tmp_path,
                                                                        monkeypatch):
    """The SDK given only HTTPS_PROXY and the CA (SSL_CERT_FILE), talking to api.openai.com as it
    would in production: the socket goes through CONNECT and the local CA, each turn a row."""
    from openai import OpenAI

    from .test_relay import KEY as SDK_KEY
    from .test_relay import assert_sdk_loop_recorded, sdk_tool_loop

    forwarder, _ = proxy
    for name in ("HTTP_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", forwarder.base_url)
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca" / "toolwire-ca.pem"))
    completed = sdk_tool_loop(OpenAI(api_key=SDK_KEY, base_url="https://api.openai.com/v1"))
    events.completed(1)
    assert_sdk_loop_recorded(completed, store, upstream)
    assert store.get(1).upstream_url.startswith(f"{upstream.base_url}/v1/responses")
