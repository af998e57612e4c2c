"""Passthrough for the other dialects: the official anthropic and google-genai SDKs -> the forwarder
-> the mock upstream speaking their dialect, JSON and streamed, with tool calls. The SDKs parse
every answer; the store holds the exact bytes; the keys are nowhere on disk."""

from __future__ import annotations

from pathlib import Path

import anthropic
import httpx
import pytest
from google import genai
from google.genai import types

from inspector.analysis import analyse
from inspector.mock import MockUpstream, gemini_json_stream, json_response, sse_response
from inspector.wire.canned import Call
from inspector.wire.dialects.anthropic.mock import anthropic_message, anthropic_stream
from inspector.wire.dialects.gemini.mock import gemini_response, gemini_stream
from inspector.store import Store

from .conftest import sent_bytes

ANTHROPIC_KEY = "sk-ant-e2e-5b1c0f9d3e"
GEMINI_KEY = "AIza-e2e-7c2e4a90b1"
CALLS = [Call("get_weather", '{"city": "Paris"}', "toolu_1"), Call("get_weather", '{"city": "Oslo"}', "toolu_2")]




@pytest.fixture
def env(passthrough):
    return passthrough




def relays_key(received, key: str) -> bool:
    """The upstream got the key in whichever auth header this SDK version uses."""
    return any(value in (key, f"Bearer {key}") for _, value in received.headers)


def assert_exact_and_secret_free(store: Store, mock: MockUpstream, rows, canned_list, secret: str) -> None:
    for row, received, canned in zip(rows, mock.received, canned_list, strict=True):
        flow = store.get(row.id)
        assert flow.request_body == received.body
        assert flow.response_body == sent_bytes(canned)
    store.flush()
    for path in (store.path, Path(f"{store.path}-wal")):
        assert secret.encode() not in path.read_bytes()


def test_anthropic_sdk_json_and_stream_with_tool_use(env):
    mock, store, forwarder, completed = env
    canned = [json_response(anthropic_message("Checking.", CALLS)),
              sse_response(anthropic_stream("Checking both.", CALLS))]
    mock.push(*canned)
    client = anthropic.Anthropic(base_url=forwarder.base_url, api_key=ANTHROPIC_KEY, max_retries=0)
    tools = [{"name": "get_weather", "description": "Weather by city",
              "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]
    messages = [{"role": "user", "content": "Weather in Paris and Oslo?"}]

    message = client.messages.create(model="claude-sonnet-4-6", max_tokens=256, messages=messages, tools=tools)
    assert message.content[0].text == "Checking."
    assert [(b.id, b.name, b.input) for b in message.content[1:]] == [
        ("toolu_1", "get_weather", {"city": "Paris"}), ("toolu_2", "get_weather", {"city": "Oslo"})]
    assert message.stop_reason == "tool_use"

    with client.messages.stream(model="claude-sonnet-4-6", max_tokens=256, messages=messages, tools=tools) as stream:
        final = stream.get_final_message()
    assert final.content[0].text == "Checking both."
    assert [(b.id, b.input) for b in final.content[1:]] == [("toolu_1", {"city": "Paris"}), ("toolu_2", {"city": "Oslo"})]
    client.close()

    rows = completed.wait(2)
    assert [(r.dialect, r.model, r.status, r.state, r.streamed, r.tools, r.tool_calls) for r in rows] == [
        ("anthropic", "claude-sonnet-4-6", 200, "complete", False, 1, 2),
        ("anthropic", "claude-sonnet-4-6", 200, "complete", True, 1, 2)]
    assert all(relays_key(received, ANTHROPIC_KEY) for received in mock.received)
    assert_exact_and_secret_free(store, mock, rows, canned, ANTHROPIC_KEY)


def test_genai_sdk_json_and_sse_stream_with_function_calls(env):
    mock, store, forwarder, completed = env
    canned = [json_response(gemini_response("Looking.", CALLS)), sse_response(gemini_stream("Looking both up.", CALLS))]
    mock.push(*canned)
    client = genai.Client(api_key=GEMINI_KEY, http_options=types.HttpOptions(base_url=forwarder.base_url))
    declaration = types.FunctionDeclaration(
        name="get_weather", description="Weather by city",
        parameters=types.Schema(type=types.Type.OBJECT, required=["city"],
                                properties={"city": types.Schema(type=types.Type.STRING)}))
    config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=[declaration])],
                                         automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))

    answer = client.models.generate_content(model="gemini-2.5-flash", contents="Weather?", config=config)
    assert answer.text == "Looking."
    assert [(c.name, c.args) for c in answer.function_calls] == [
        ("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})]

    chunks = list(client.models.generate_content_stream(model="gemini-2.5-flash", contents="Weather?", config=config))
    assert "".join(p.text for c in chunks for p in c.candidates[0].content.parts if p.text) == "Looking both up."
    assert [(f.name, f.args) for c in chunks for f in (c.function_calls or [])] == [
        ("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})]
    client.close()

    rows = completed.wait(2)
    assert [(r.path, r.dialect, r.model, r.status, r.streamed, r.tools, r.tool_calls) for r in rows] == [
        ("/v1/models/gemini-2.5-flash:generateContent", "gemini", "gemini-2.5-flash", 200, False, 1, 2),
        ("/v1/models/gemini-2.5-flash:streamGenerateContent", "gemini", "gemini-2.5-flash", 200, True, 1, 2)]
    assert mock.received[1].query == "alt=sse"
    assert all(relays_key(received, GEMINI_KEY) for received in mock.received)
    assert_exact_and_secret_free(store, mock, rows, canned, GEMINI_KEY)


def test_gemini_json_array_stream_is_recorded_and_reassembled(env):
    mock, store, forwarder, completed = env
    canned = gemini_json_stream(gemini_stream("Hi there.", CALLS[:1]))
    mock.push(canned)
    path = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    with httpx.stream("POST", forwarder.base_url + path, json={"contents": [{"role": "user", "parts": [{"text": "x"}]}]},
                      headers={"x-goog-api-key": GEMINI_KEY}) as response:
        body = b"".join(response.iter_raw())
    assert body == sent_bytes(canned)
    (row,) = completed.wait(1)
    flow = store.get(row.id)
    assert (flow.streamed, row.tool_calls) == (True, 1)
    assert b"".join(c.data for c in flow.chunks) == body
    assert analyse(flow).response["candidates"][0]["content"]["parts"][-1] == {
        "functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}


def test_anthropic_beta_header_decides_what_the_endpoint_accepts(env):
    """A thinking budget above max_tokens is refused (AN-16) unless the request opts into interleaved
    thinking with the anthropic-beta header, as the SDK sends `betas=[...]`: the same body judged by the
    header it travelled with."""
    mock, store, forwarder, completed = env
    mock.push(json_response(anthropic_message("Checking.", CALLS[:1])),
              json_response(anthropic_message("Checking.", CALLS[:1])))
    client = anthropic.Anthropic(base_url=forwarder.base_url, api_key=ANTHROPIC_KEY, max_retries=0)
    body = {"model": "claude-sonnet-4-6", "max_tokens": 2048, "thinking": {"type": "enabled", "budget_tokens": 8000},
            "messages": [{"role": "user", "content": "Weather in Paris?"}],
            "tools": [{"name": "get_weather", "input_schema": {"type": "object", "properties": {}}}]}

    client.messages.create(**body)
    client.beta.messages.create(**body, betas=["interleaved-thinking-2025-05-14"])
    client.close()

    rows = completed.wait(2)
    assert [header for _, header in mock.received[1].headers if _.lower() == "anthropic-beta"] == [
        "interleaved-thinking-2025-05-14"]
    assert [[(v.rule, v.pointer, v.severity.value) for v in analyse(store.get(row.id)).violations]
            for row in rows] == [[("AN-16", "/max_tokens", "error")], []]
