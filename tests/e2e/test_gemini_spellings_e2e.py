"""google-genai declaring a tool with `parameters_json_schema` (as ADK and pydantic-ai do) through the
forwarder in `gemini:openai-chat` mode: the Chat upstream receives the tool's properties, and the
model's calls come back to the SDK with their arguments (GM-16)."""

from __future__ import annotations

import orjson
import pytest
from google import genai
from google.genai import types

from inspector.wire.check import check_request
from inspector.wire.dialect import Dialect
from inspector.wire.violations import Severity

from .test_translate_e2e import Rig, chat_upstream, rig  # noqa: F401  (rig is the fixture)

SCHEMA = {"type": "object", "properties": {"city": {"type": "string", "description": "City name"},
                                           "days": {"anyOf": [{"type": "integer"}, {"type": "null"}]}},
          "required": ["city"], "additionalProperties": False}


@pytest.mark.parametrize("rig", [("gemini:openai-chat", chat_upstream)], indirect=True)
def test_parameters_json_schema_reaches_a_chat_upstream_and_calls_keep_their_arguments(rig: Rig) -> None:
    client = genai.Client(api_key="gm-test-spelling", http_options=types.HttpOptions(base_url=rig.forwarder.base_url))
    declaration = types.FunctionDeclaration(name="get_weather", description="Weather by city",
                                            parameters_json_schema=SCHEMA)
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[declaration])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
    answer = client.models.generate_content(model="gemini-2.5-flash", contents="Weather in Paris and Oslo?",
                                            config=config)
    assert [(c.name, c.args) for c in answer.function_calls] == [
        ("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})]
    streamed = [(f.name, f.args) for chunk in client.models.generate_content_stream(
        model="gemini-2.5-flash", contents="Weather in Paris and Oslo?", config=config)
        for f in (chunk.function_calls or [])]
    assert streamed == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})]
    client.close()
    assert [payload["tools"] for _, payload in rig.upstream.received] == [
        [{"type": "function", "function": {"name": "get_weather", "description": "Weather by city",
                                           "parameters": SCHEMA}}]] * 2
    for _, payload in rig.upstream.received:
        assert [v for v in check_request(payload, Dialect.OPENAI_CHAT) if v.severity is Severity.ERROR] == []
    flows = rig.flows(2)
    sent = orjson.loads(flows[0].request_body)
    # What the SDK really sends: the declaration's own field in snake_case inside camelCase messages.
    assert [set(d) for d in sent["tools"][0]["functionDeclarations"]] == [
        {"name", "description", "parameters_json_schema"}]
