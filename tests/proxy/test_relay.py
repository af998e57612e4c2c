"""A correct relay: a stream whose final event arrived is complete even when the client hangs up
first; MCP's push stream is never cut for being idle; a body translated whole is translated
before the status goes out; a huge response is relayed whole but recorded bounded."""

from __future__ import annotations

import threading

import httpx
import openai
import orjson
import pytest

from inspector.mock import Canned, gemini_json_stream, json_response, sse_response
from inspector.wire.dialects.anthropic.mock import anthropic_message, anthropic_stream
from inspector.wire.dialects.gemini.mock import gemini_stream
from inspector.wire.dialects.openai_chat.mock import chat_stream
from inspector.wire.dialects.openai_responses.mock import responses_stream

CHAT = "/v1/chat/completions"
BODY = b'{"model": "gpt-4o-mini", "stream": true, "messages": [{"role": "user", "content": "hi"}]}'


def _kept_open(canned: Canned) -> tuple[Canned, threading.Event]:
    """The upstream keeps its connection open after the last event until `release` is set (or
    the forwarder closes it), as providers do for a few ms."""
    release = threading.Event()
    canned.chunks.append((0.0, b""))
    canned.hold, canned.hold_after = release, len(canned.chunks) - 1
    return canned, release


def test_sync_openai_sdk_hanging_up_after_done_leaves_complete_flows(rig):
    """The sync SDK closes the response on [DONE], while the upstream still holds it open."""
    client = openai.OpenAI(base_url=f"{rig.url}/v1", api_key="sk-test", max_retries=0)
    releases = []
    try:
        for _ in range(5):
            canned, release = _kept_open(sse_response(chat_stream("Hello there.")))
            releases.append(release)
            rig.mock.push(canned)
            stream = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}],
                                                    stream=True)
            assert "".join(c.choices[0].delta.content or "" for c in stream) == "Hello there."
        rows = [event.row for event in rig.events.completed(5)]
        assert [(r.state, r.error) for r in rows] == [("complete", None)] * 5
        sent = b"".join(data for _, data in canned.chunks)
        assert rig.store.get(rows[-1].id).response_body == sent
    finally:
        client.close()
        for release in releases:
            release.set()


FINAL = {
    "responses": ("/v1/responses", lambda: sse_response(responses_stream("Hi."))),
    "anthropic": ("/v1/messages", lambda: sse_response(anthropic_stream("Hi."))),
    "gemini sse": ("/v1beta/models/g:streamGenerateContent?alt=sse", lambda: sse_response(gemini_stream("Hi."))),
    "gemini array": ("/v1beta/models/g:streamGenerateContent", lambda: gemini_json_stream(gemini_stream("Hi."))),
    "mcp": ("/mcp", lambda: sse_response([{"jsonrpc": "2.0", "method": "notifications/progress",
                                           "params": {"progress": 1}},
                                          {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}])),
}


def _hang_up_once_received(rig, path: str, sent: bytes) -> None:
    """Read the stream until everything the upstream sent has arrived, then hang up while the
    upstream still holds the connection open."""
    with rig.client.stream("POST", path, content=BODY) as response:
        got = b""
        for data in response.iter_raw():
            got += data
            if got == sent:
                break


@pytest.mark.parametrize("kind", list(FINAL))
def test_a_client_hanging_up_once_it_has_the_final_event_leaves_a_complete_flow(rig, kind):
    path, make = FINAL[kind]
    canned, release = _kept_open(make())
    sent = b"".join(data for _, data in canned.chunks)
    rig.mock.push(canned)
    try:
        _hang_up_once_received(rig, path, sent)
        (event,) = rig.events.completed()
        assert (event.row.state, event.row.error) == ("complete", None)
        assert rig.store.get(event.flow.id).response_body == sent
    finally:
        release.set()


# The stream's last content event decides (issue 18): LiteLLM's Anthropic client stops reading after
# the message_delta that carries stop_reason, before message_stop; a Chat client may stop after the
# finish_reason chunk (or the usage chunk after it), before [DONE].
LAST_CONTENT = {
    "anthropic after message_delta": ("/v1/messages", lambda: anthropic_stream("Hi.")[:-1]),
    "anthropic after a ping past message_delta": (
        "/v1/messages", lambda: [*anthropic_stream("Hi.")[:-1], ("ping", {"type": "ping"})]),
    "chat after the finish_reason chunk": (CHAT, lambda: chat_stream("Hi.")[:-1]),
    "chat after the usage chunk": (CHAT, lambda: [*chat_stream("Hi.")[:-1],
                                                  {"id": "chatcmpl-mock", "choices": [], "usage": {"total_tokens": 3}}]),
    "gemini array before the closing bracket": (
        "/v1beta/models/g:streamGenerateContent", None),
}


@pytest.mark.parametrize("kind", list(LAST_CONTENT))
def test_a_client_hanging_up_after_the_last_content_event_leaves_a_complete_flow(rig, kind):
    path, events = LAST_CONTENT[kind]
    if events is None:
        canned = gemini_json_stream(gemini_stream("Hi."))
        canned.chunks.pop()  # the "]" never comes
    else:
        canned = sse_response(events())
    canned, release = _kept_open(canned)
    sent = b"".join(data for _, data in canned.chunks)
    rig.mock.push(canned)
    try:
        _hang_up_once_received(rig, path, sent)
        (event,) = rig.events.completed()
        assert (event.row.state, event.row.error) == ("complete", None)
        assert rig.store.get(event.flow.id).response_body == sent
    finally:
        release.set()


BEFORE_LAST_CONTENT = {
    # message_delta (stop_reason) and message_stop never come: the answer may go on
    "anthropic before message_delta": ("/v1/messages", lambda: anthropic_stream("Hi.")[:-2]),
    # a message_delta without stop_reason says nothing of the end
    "anthropic after a message_delta without stop_reason": (
        "/v1/messages", lambda: [*anthropic_stream("Hi.")[:-2], ("message_delta", {
            "type": "message_delta", "delta": {"stop_reason": None}, "usage": {"output_tokens": 1}})]),
    "chat before the finish_reason chunk": (CHAT, lambda: chat_stream("Hi.")[:-2]),
}


@pytest.mark.parametrize("kind", list(BEFORE_LAST_CONTENT))
def test_a_client_hanging_up_before_the_last_content_event_is_still_an_error(rig, kind):
    path, events = BEFORE_LAST_CONTENT[kind]
    canned, release = _kept_open(sse_response(events()))
    sent = b"".join(data for _, data in canned.chunks)
    rig.mock.push(canned)
    try:
        _hang_up_once_received(rig, path, sent)
        (event,) = rig.events.completed()
        assert event.row.state == "error"
        assert event.row.error.startswith("client disconnected after ")
    finally:
        release.set()


PUSH_HEADERS = {"accept": "text/event-stream", "mcp-session-id": "s1"}
PING = b'data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n\n'


def test_mcp_push_stream_idle_longer_than_the_timeout_is_not_cut(make_rig):
    rig = make_rig(timeout=0.2)
    canned = Canned(headers=[("content-type", "text/event-stream")], chunks=[(0.0, PING), (0.6, PING)])
    rig.mock.push(canned)
    with rig.client.stream("GET", "/mcp", headers=PUSH_HEADERS) as response:
        assert b"".join(response.iter_raw()) == PING * 2
    (event,) = rig.events.completed()
    assert (event.row.state, event.row.error) == ("complete", None)
    # Anything else still gets the timeout.
    rig.mock.push(Canned(headers=[("content-type", "text/event-stream")], chunks=[(0.0, PING), (0.6, PING)]))
    with pytest.raises(httpx.RemoteProtocolError):
        with rig.client.stream("POST", "/mcp", headers=PUSH_HEADERS, content=b"{}") as response:
            b"".join(response.iter_raw())
    assert rig.events.completed(2)[1].row.error == "upstream went silent for 0.2 s after 1 chunks"


def test_mcp_push_stream_closed_by_the_client_is_complete(rig):
    canned, release = _kept_open(Canned(headers=[("content-type", "text/event-stream")], chunks=[(0.0, PING)]))
    rig.mock.push(canned)
    try:
        with rig.client.stream("GET", "/mcp", headers=PUSH_HEADERS) as response:
            assert next(response.iter_raw()) == PING
        (event,) = rig.events.completed()
        assert (event.row.state, event.row.error) == ("complete", None)
        assert rig.mock.wait_answered(1)
    finally:
        release.set()


def test_mcp_push_stream_ended_by_the_server_is_complete(rig):
    canned = Canned(headers=[("content-type", "text/event-stream")], chunks=[(0.0, PING), (0.0, PING)], cut_after=1)
    rig.mock.push(canned)
    with rig.client.stream("GET", "/mcp", headers=PUSH_HEADERS) as response:
        assert b"".join(response.iter_raw()) == PING  # ended as the server ended it
    (event,) = rig.events.completed()
    assert (event.row.state, event.row.error) == ("complete", None)
    assert rig.store.get(event.flow.id).response_body == PING


TRANSLATED = b'{"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}'


def test_an_untranslatable_json_response_becomes_a_recorded_502(make_rig):
    rig = make_rig(translate="openai-chat:anthropic")
    rig.mock.push(Canned(body=b'{"type": "message", "content": '))
    response = rig.client.post(CHAT, content=TRANSLATED)
    assert response.status_code == 502
    error = response.json()["error"]
    assert (error["type"], error["code"]) == ("toolwire_translate_error", 502)
    assert error["message"].startswith("cannot translate response: ")
    (event,) = rig.events.completed()
    assert (event.row.state, event.row.status, event.row.error) == ("error", 502, error["message"])
    flow = rig.store.get(event.flow.id)
    assert flow.upstream_response_body == b'{"type": "message", "content": '
    assert flow.response_body == response.content


def test_a_translated_json_response_goes_out_whole_with_its_length(make_rig):
    rig = make_rig(translate="openai-chat:anthropic")
    rig.mock.push(json_response(anthropic_message("Hi.")))
    response = rig.client.post(CHAT, content=TRANSLATED)
    assert response.status_code == 200
    assert response.json()["choices"][0]["message"]["content"] == "Hi."
    assert response.headers["content-length"] == str(len(response.content))
    (event,) = rig.events.completed()
    assert (event.row.state, event.row.error) == ("complete", None)


def test_a_json_response_too_large_to_translate_becomes_a_recorded_502(make_rig):
    rig = make_rig(translate="openai-chat:anthropic", max_body=1000)
    rig.mock.push(json_response(anthropic_message("x" * 5000)))
    response = rig.client.post(CHAT, content=TRANSLATED)
    assert response.status_code == 502
    message = "upstream response larger than 1000 bytes: too large to translate whole"
    assert response.json()["error"]["message"] == message
    (event,) = rig.events.completed()
    assert (event.row.state, event.row.error) == ("error", message)


def test_a_stream_beyond_the_recording_limit_is_relayed_whole_and_recorded_bounded(make_rig):
    rig = make_rig(max_body=1000)
    canned = sse_response([f"{n:0>94}" for n in range(50)])  # 50 events of 100 bytes
    sent = b"".join(data for _, data in canned.chunks)
    rig.mock.push(canned)
    with rig.client.stream("POST", CHAT, content=BODY) as response:
        assert b"".join(response.iter_raw()) == sent
    (event,) = rig.events.completed()
    assert (event.row.state, event.row.error) == ("complete", None)
    flow = rig.store.get(event.flow.id)
    assert flow.response_body == sent[:1000]
    assert b"".join(c.data for c in flow.chunks) == sent[:1000]
    assert flow.notes == [f"response of {len(sent)} bytes: only its first 1000 bytes are recorded (all of it was relayed)"]


def test_a_json_body_beyond_the_recording_limit_is_relayed_whole_and_recorded_bounded(make_rig):
    rig = make_rig(max_body=1000)
    body = orjson.dumps({"content": "y" * 5000})
    rig.mock.push(Canned(body=body))
    response = rig.client.post(CHAT, content=BODY)
    assert response.content == body
    (event,) = rig.events.completed()
    flow = rig.store.get(event.flow.id)
    assert flow.response_body == body[:1000]
    assert flow.notes == [f"response of {len(body)} bytes: only its first 1000 bytes are recorded "
                          "(all of it was relayed)"]


def test_chunk_timings_of_an_endless_stream_are_bounded(make_rig, monkeypatch):
    rig = make_rig()
    monkeypatch.setattr("inspector.proxy.exchange.MAX_CHUNK_TIMINGS", 5)
    canned = sse_response([str(n) for n in range(20)], interval=0.002)
    rig.mock.push(canned)
    with rig.client.stream("POST", CHAT, content=BODY) as response:
        b"".join(response.iter_raw())
    (event,) = rig.events.completed()
    flow = rig.store.get(event.flow.id)
    assert len(flow.chunks) == 5
    assert flow.notes == ["only the first 5 chunk timings are recorded"]


@pytest.mark.parametrize("kind", ["json", "stream"])
def test_a_large_response_leaves_no_read_timeout_armed_on_its_pooled_connection(make_rig, kind):
    """aiohttp 3.14.0-3.14.x re-armed the read timeout while the relay drained a body already
    buffered whole, after the connection went back to the pool: the timer fired there, and the
    next request on that connection got '504 upstream sent nothing' within milliseconds."""
    rig = make_rig(timeout=0.3)
    big = {"choices": [{"message": {"content": "x" * (8 << 20)}}]}
    for _ in range(3):
        rig.mock.push(json_response(big) if kind == "json" else sse_response(["x" * (1 << 20)] * 8))
        rig.mock.push(json_response({"choices": []}))
        assert rig.client.post(CHAT, content=BODY).status_code == 200
        # The connection idles in the pool for longer than the read timeout: that idle time is
        # the condition under test, not a wait for something to happen.
        threading.Event().wait(0.6)
        response = rig.client.post(CHAT, content=BODY)
        assert (response.status_code, response.content) == (200, b'{"choices":[]}')
    rows = [event.row for event in rig.events.completed(6)]
    assert [(r.state, r.error) for r in rows] == [("complete", None)] * 6
