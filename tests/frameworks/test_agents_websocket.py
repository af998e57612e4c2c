"""openai-agents' Responses-over-WebSocket session (`agents.responses_websocket_session`) running a
multi-turn tool-calling loop through the forwarder, against the fake WebSocket upstream of
tests/websocket: through the base URL, a route, and proxy mode (`wss://api.openai.com` reached by
CONNECT through the forwarder, TLS with the local CA). Its one socket is a flow, and each of its
turns a row of its own linked to it, with the findings of a clean loop (none).

Opt-in with the other framework tests (`pytest -m frameworks`): openai-agents is heavy."""

from __future__ import annotations

import asyncio

import orjson
import pytest

from inspector.proxy import Forwarder
from inspector.proxy.ca import LocalCA
from inspector.proxy.options import Options, ProxyOptions
from inspector.proxy.routes import open_forwarder, resolve

from tests.websocket.conftest import events, store, upstream  # noqa: F401  (the fixtures)

pytest.importorskip("agents")

pytestmark = pytest.mark.frameworks

KEY = "sk-proj-agentswebsockettest0123456789abcd"
read: list[str] = []


def read_file(path: str) -> str:
    """Read a file of the project."""
    read.append(path)
    return f"# {path}"


async def two_questions(base_url: str | None) -> list[str]:
    """Two runs on one shared socket, each a tool call and its answer."""
    from agents import Agent, function_tool, responses_websocket_session, set_tracing_disabled

    set_tracing_disabled(True)  # traces would go to api.openai.com
    agent = Agent(name="reader", instructions="Answer with the tool.", tools=[function_tool(read_file)],
                  model="gpt-test")
    answers = []
    async with responses_websocket_session(api_key=KEY, base_url=base_url) as session:
        for question in ("What is in the readme?", "And now?"):
            result = await session.run(agent, question)
            answers.append(result.final_output)
    return answers


def assert_recorded(store, upstream, socket_id: int = 1) -> None:
    rows = store.rows()
    assert [(r.id, r.method, r.dialect, r.model, r.state, r.status, r.socket_of, r.tools, r.tool_calls, r.errors,
             r.warnings) for r in rows] == [
        (socket_id, "GET", "openai-responses", "", "complete", 101, None, 0, 0, 0, 0),
        *[(socket_id + n, "WS", "openai-responses", "gpt-test", "complete", 200, socket_id, 1, calls, 0, 0)
          for n, calls in ((1, 1), (2, 0), (3, 1), (4, 0))]]
    assert [[(v.rule, v.pointer) for v in store.analysis(store.get(r.id)).violations] for r in rows] == [[]] * 5
    (handshake,) = upstream.handshakes  # one socket for both runs
    assert handshake["authorization"] == f"Bearer {KEY}"
    # Each turn sends its whole conversation (the SDK continues no previous_response_id).
    turns = [orjson.loads(store.get(r.id).request_body) for r in rows[1:]]
    assert [(turn["model"], turn["stream"], "previous_response_id" in turn) for turn in turns] == [
        ("gpt-test", True, False)] * 4
    assert [[(item.get("type"), item.get("role"), item.get("call_id")) for item in turn["input"]] for turn in turns] == [
        [(None, "user", None)],
        [(None, "user", None), ("function_call", None, "call_1"), ("function_call_output", None, "call_1")],
        [(None, "user", None)],
        [(None, "user", None), ("function_call", None, "call_3"), ("function_call_output", None, "call_3")]]

def test_the_agents_websocket_session_runs_a_tool_loop_through_the_base_url(upstream, store, events):
    read.clear()
    with Forwarder(Options(upstream.base_url, port=0), store=store, on_event=events) as forwarder:
        answers = asyncio.run(two_questions(f"{forwarder.base_url}/v1"))
        events.completed(1)
    assert (answers, read) == (["done", "done"], ["README.md", "README.md"])
    store.flush()
    assert_recorded(store, upstream)


def test_the_agents_websocket_session_runs_a_tool_loop_through_a_route(upstream, store, events):
    read.clear()
    with open_forwarder(resolve(routes=[f"oa={upstream.base_url}"]), Options(port=0), store=store,
                        on_event=events) as router:
        answers = asyncio.run(two_questions(f"{router.base_url}/r/oa/v1"))
        events.completed(1)
    assert answers == ["done", "done"]
    store.flush()
    assert_recorded(store, upstream)
    assert store.get(1).route == "oa"


def test_the_agents_websocket_session_runs_a_tool_loop_through_proxy_mode(upstream, store, events, tmp_path,
                                                                         monkeypatch):
    read.clear()
    options = Options("http://127.0.0.1:9", port=0, proxy=ProxyOptions(
        intercept=(f"api.openai.com={upstream.base_url}",), ca_dir=str(tmp_path / "ca")))
    with Forwarder(options, store=store, on_event=events) as forwarder:
        LocalCA(tmp_path / "ca", forwarder.connect.intercepts.hosts)
        # What a user of proxy mode sets: the proxy, and the local CA trusted.
        for name in ("NO_PROXY", "no_proxy", "OPENAI_BASE_URL", "OPENAI_WEBSOCKET_BASE_URL"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTPS_PROXY", forwarder.base_url)
        monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca" / "toolwire-ca.pem"))
        answers = asyncio.run(two_questions(None))  # the SDK's own https://api.openai.com/v1
        events.completed(1)
    assert answers == ["done", "done"]
    store.flush()
    assert_recorded(store, upstream)
    socket = store.get(1)
    assert (socket.route, ("host", "api.openai.com") in socket.request_headers) == ("", True)
