"""The official openai SDK -> the real forwarder on a loopback port -> the mock upstream on another:
what crossed the wire is what was stored, byte for byte, and the API key is stored nowhere."""

from __future__ import annotations

import json
from pathlib import Path

import openai
import pytest

from inspector.analysis import analyse
from inspector.formats.fixture import dumps, fixture, write_fixture
from inspector.mock import FixtureRoute, MockUpstream, json_response, sse_response
from inspector.wire.canned import Call
from inspector.wire.dialects.openai_chat.mock import chat_completion, chat_stream
from inspector.wire.dialects.openai_responses.mock import responses_result, responses_stream
from inspector.replay import replay
from inspector.store import Store

from .conftest import sent_bytes

API_KEY = "sk-test-e2e-9f3a7c51d2b84e06"
WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Weather for a city.",
                                            "parameters": {"type": "object",
                                                           "properties": {"city": {"type": "string"}},
                                                           "required": ["city"]}}}
MESSAGES = [{"role": "user", "content": "Weather in Paris and Oslo?"}]
CALLS = [Call("get_weather", '{"city": "Paris"}', "call_a"), Call("get_weather", '{"city": "Oslo"}', "call_b")]




@pytest.fixture
def env(passthrough):
    mock, store, forwarder, completed = passthrough
    client = openai.OpenAI(base_url=f"{forwarder.base_url}/v1", api_key=API_KEY, max_retries=0)
    yield mock, store, forwarder, client, completed
    client.close()




def assert_wire_equals_store(store, mock, rows, canned_list):
    for row, received, canned in zip(rows, mock.received, canned_list, strict=True):
        flow = store.get(row.id)
        assert flow.request_body == received.body
        assert flow.sent_upstream == received.body
        assert flow.response_body == sent_bytes(canned)


def test_chat_plain_streamed_tool_calls_and_responses(env):
    mock, store, forwarder, client, completed = env
    canned = [
        json_response(chat_completion("Hello!")),
        sse_response(chat_stream("Hello, streamed world.")),
        json_response(chat_completion(None, CALLS)),
        sse_response(chat_stream(None, CALLS)),
        json_response(responses_result("Done.", CALLS[:1])),
        sse_response(responses_stream("Done.", CALLS[:1])),
    ]
    mock.push(*canned)

    reply = client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    assert reply.choices[0].message.content == "Hello!"

    stream = client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, stream=True)
    assert "".join(c.choices[0].delta.content or "" for c in stream) == "Hello, streamed world."

    reply = client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, tools=[WEATHER])
    assert [(c.id, c.function.name, c.function.arguments) for c in reply.choices[0].message.tool_calls] == [
        ("call_a", "get_weather", '{"city": "Paris"}'), ("call_b", "get_weather", '{"city": "Oslo"}')]

    arguments: dict[int, str] = {}
    for chunk in client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, tools=[WEATHER],
                                                stream=True):
        for call in chunk.choices[0].delta.tool_calls or []:
            arguments[call.index] = arguments.get(call.index, "") + (call.function.arguments or "")
    assert arguments == {0: '{"city": "Paris"}', 1: '{"city": "Oslo"}'}

    tool = {"type": "function", "name": "get_weather", "parameters": WEATHER["function"]["parameters"]}
    response = client.responses.create(model="gpt-4o-mini", input="Weather in Paris?", tools=[tool])
    assert response.output_text == "Done."
    assert response.output[1].call_id == "call_a"

    with client.responses.stream(model="gpt-4o-mini", input="Weather in Paris?", tools=[tool]) as events:
        final = events.get_final_response()
    assert final.output_text == "Done."

    rows = completed.wait(6)
    assert [(r.path, r.dialect, r.status, r.state, r.streamed) for r in rows] == [
        ("/v1/chat/completions", "openai-chat", 200, "complete", False),
        ("/v1/chat/completions", "openai-chat", 200, "complete", True),
        ("/v1/chat/completions", "openai-chat", 200, "complete", False),
        ("/v1/chat/completions", "openai-chat", 200, "complete", True),
        ("/v1/responses", "openai-responses", 200, "complete", False),
        ("/v1/responses", "openai-responses", 200, "complete", True),
    ]
    assert [(r.model, r.tools, r.tool_calls) for r in rows] == [
        ("gpt-4o-mini", 0, 0), ("gpt-4o-mini", 0, 0), ("gpt-4o-mini", 1, 2), ("gpt-4o-mini", 1, 2),
        ("gpt-4o-mini", 1, 1), ("gpt-4o-mini", 1, 1)]
    assert_wire_equals_store(store, mock, rows, canned)
    assert all(received.header("authorization") == f"Bearer {API_KEY}" for received in mock.received)


def _files_of(store: Store) -> list[Path]:
    return [p for p in (store.path, Path(f"{store.path}-wal"), Path(f"{store.path}-shm")) if p.exists()]


def test_api_key_is_nowhere_on_disk_nor_in_the_export(env, tmp_path):
    mock, store, forwarder, client, completed = env
    mock.push(json_response(chat_completion("Hi")), sse_response(chat_stream("Hi")))
    client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    list(client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, stream=True))
    rows = completed.wait(2)
    store.flush()
    files = _files_of(store)
    assert Path(f"{store.path}-wal") in files  # the live WAL is scanned too
    for path in files:
        data = path.read_bytes()
        assert API_KEY.encode() not in data, path
        assert b"e2e-9f3a7c51" not in data, path
    for row in rows:
        exported = write_fixture(store.get(row.id), tmp_path / f"{row.id}.json").read_bytes()
        assert API_KEY.encode() not in exported
        assert b'"authorization: [redacted]"' in exported.lower()


def test_replay_creates_a_linked_flow_with_credentials_from_memory(env):
    mock, store, forwarder, client, completed = env
    first = json_response(chat_completion(None, CALLS))
    again = json_response(chat_completion("Replayed."))
    mock.push(first, again)
    client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, tools=[WEATHER])
    (original,) = completed.wait(1)
    flow = store.get(original.id)

    new_id = replay(flow, via=forwarder, credentials=forwarder.credentials(flow.id))
    rows = completed.wait(2)
    assert new_id == rows[1].id == original.id + 1
    assert rows[1].replay_of == original.id
    replayed = store.get(new_id)
    assert replayed.replay_of == original.id
    assert replayed.request_body == flow.request_body == mock.received[1].body
    assert replayed.response_body == again.body
    assert mock.received[1].header("authorization") == f"Bearer {API_KEY}"
    assert mock.received[1].header("x-toolwire-replay-of") is None


def test_export_is_byte_identical_and_the_mock_serves_it_back(env, tmp_path):
    mock, store, forwarder, client, completed = env
    canned = sse_response(chat_stream(None, CALLS))
    mock.push(canned)
    chunks = list(client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, tools=[WEATHER],
                                                 stream=True))
    (row,) = completed.wait(1)
    one = write_fixture(store.get(row.id), tmp_path / "one.json").read_bytes()
    two = write_fixture(store.get(row.id), tmp_path / "two.json").read_bytes()
    assert one == two
    assert str(forwarder.port).encode() not in one and str(mock.port).encode() not in one
    data = json.loads(one)
    assert data["upstream_request"]["url"] == "{upstream}/v1/chat/completions"
    # How the bytes were cut into chunks is up to TCP; their sum is exact.
    assert "".join(c["text"] for c in data["response"]["chunks"]) == sent_bytes(canned).decode()

    # Offline: a mock serving only the fixture answers the same request with the same stream.
    with MockUpstream(fixtures=FixtureRoute.load(tmp_path / "one.json"), realtime=False) as offline:
        replay_client = openai.OpenAI(base_url=f"{offline.base_url}/v1", api_key="unused", max_retries=0)
        again = list(replay_client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES,
                                                           tools=[WEATHER], stream=True))
        replay_client.close()
    assert [c.model_dump() for c in again] == [c.model_dump() for c in chunks]


def test_fixture_records_violations(env):
    mock, store, forwarder, client, completed = env
    mock.push(json_response(chat_completion("ok")))
    upper = {"type": "function", "function": {"name": "get_weather",
                                              "parameters": {"type": "OBJECT",
                                                             "properties": {"city": {"type": "STRING"}}}}}
    client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, tools=[upper])
    (row,) = completed.wait(1)
    flow = store.get(row.id)
    data = fixture(flow, analyse(flow))
    rules = {(v["where"], v["rule"], v["pointer"]) for v in data["violations"]}
    assert ("request", "OC-05", "/tools/0/function/parameters/type") in rules
    assert row.errors == sum(1 for v in data["violations"] if v["severity"] == "error")
    assert dumps(data) == dumps(fixture(flow, analyse(flow)))
