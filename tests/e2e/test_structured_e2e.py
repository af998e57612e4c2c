"""Structured output through the real forwarder in translate mode: each official SDK asks for an
answer of a declared shape in its own way, the upstream of another dialect receives that schema in
its own field, and the SDK parses the JSON text the upstream answers into the declared type."""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import orjson
import pytest
from google import genai
from google.genai import types
from pydantic import BaseModel

from inspector.wire.dialect import Dialect

from .test_translate_e2e import Rig, _no_errors, rig  # noqa: F401  (rig is the fixture)

ANSWER = '{"city":"Paris","temp":21.5}'


class Weather(BaseModel):
    city: str
    temp: float


def anthropic_text(payload: dict[str, Any]) -> tuple[str, Any]:
    return "json", {"id": "msg_e2e", "type": "message", "role": "assistant", "model": payload["model"],
                    "content": [{"type": "text", "text": ANSWER}], "stop_reason": "end_turn", "stop_sequence": None,
                    "usage": {"input_tokens": 12, "output_tokens": 9}}


def chat_text(payload: dict[str, Any]) -> tuple[str, Any]:
    return "json", {"id": "chatcmpl-e2e", "object": "chat.completion", "created": 1, "model": payload["model"],
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": ANSWER}}],
                    "usage": {"prompt_tokens": 12, "completion_tokens": 9, "total_tokens": 21}}


@pytest.mark.parametrize("rig", [("openai-chat:anthropic", anthropic_text)], indirect=True)
def test_openai_parse_reaches_anthropic_as_output_config(rig: Rig) -> None:
    client = openai.OpenAI(base_url=f"{rig.forwarder.base_url}/v1", api_key="sk-test-structured", max_retries=0)
    answer = client.chat.completions.parse(model="claude-sonnet-4-5", response_format=Weather,
                                           messages=[{"role": "user", "content": "Weather in Paris?"}])
    client.close()
    assert answer.choices[0].message.parsed == Weather(city="Paris", temp=21.5)
    client_side = orjson.loads(rig.flows(1)[0].request_body)["response_format"]
    assert client_side["type"] == "json_schema" and client_side["json_schema"]["name"] == "Weather"
    (path, sent), = rig.upstream.received
    assert path == "/v1/messages"
    assert sent["output_config"] == {"format": {"type": "json_schema", "schema": client_side["json_schema"]["schema"]}}
    _no_errors(sent, Dialect.ANTHROPIC)
    assert [note for note in rig.flows(1)[0].notes if "response_format" in note] == [
        "dropped /response_format/json_schema/name: anthropic takes no name for the response schema"]


@pytest.mark.parametrize("rig", [("anthropic:openai-chat", chat_text)], indirect=True)
def test_anthropic_output_config_reaches_chat_as_response_format(rig: Rig) -> None:
    client = anthropic.Anthropic(base_url=rig.forwarder.base_url, api_key="sk-ant-test-structured", max_retries=0)
    schema = {"type": "object", "properties": {"city": {"type": "string"}, "temp": {"type": "number"}},
              "required": ["city", "temp"], "additionalProperties": False}
    message = client.messages.create(model="gpt-4.1", max_tokens=256, output_config={
        "format": {"type": "json_schema", "schema": schema}}, messages=[{"role": "user", "content": "Weather?"}])
    client.close()
    assert Weather.model_validate_json(message.content[0].text) == Weather(city="Paris", temp=21.5)
    (_, sent), = rig.upstream.received
    assert sent["response_format"] == {"type": "json_schema", "json_schema": {"name": "response", "schema": schema}}
    _no_errors(sent, Dialect.OPENAI_CHAT)


@pytest.mark.parametrize("rig", [("gemini:openai-chat", chat_text)], indirect=True)
def test_genai_response_schema_reaches_chat_as_response_format(rig: Rig) -> None:
    client = genai.Client(api_key="gm-test-structured", http_options=types.HttpOptions(base_url=rig.forwarder.base_url))
    config = types.GenerateContentConfig(response_mime_type="application/json", response_schema=Weather)
    answer = client.models.generate_content(model="gemini-2.5-flash", contents="Weather in Paris?", config=config)
    client.close()
    assert answer.parsed == Weather(city="Paris", temp=21.5)
    (_, sent), = rig.upstream.received
    fmt = sent["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "response"
    schema = fmt["json_schema"]["schema"]
    assert (schema["type"], schema["required"], {k: v["type"] for k, v in schema["properties"].items()}) == (
        "object", ["city", "temp"], {"city": "string", "temp": "number"})
    _no_errors(sent, Dialect.OPENAI_CHAT)


def gemini_text(payload: dict[str, Any]) -> tuple[str, Any]:
    return "json", {"candidates": [{"index": 0, "finishReason": "STOP", "content": {
        "role": "model", "parts": [{"text": ANSWER}]}}],
        "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 9, "totalTokenCount": 21}}


@pytest.mark.parametrize("rig", [("openai-responses:openai-chat", chat_text)], indirect=True)
def test_openai_responses_parse_reaches_chat_as_response_format(rig: Rig) -> None:
    client = openai.OpenAI(base_url=f"{rig.forwarder.base_url}/v1", api_key="sk-test-structured", max_retries=0)
    answer = client.responses.parse(model="gpt-4.1", input="Weather in Paris?", text_format=Weather)
    client.close()
    assert answer.output_parsed == Weather(city="Paris", temp=21.5)
    client_side = orjson.loads(rig.flows(1)[0].request_body)["text"]["format"]
    (_, sent), = rig.upstream.received
    assert sent["response_format"] == {"type": "json_schema", "json_schema": {
        "name": client_side["name"], "schema": client_side["schema"], "strict": True}}
    _no_errors(sent, Dialect.OPENAI_CHAT)


@pytest.mark.parametrize("rig", [("openai-chat:gemini", gemini_text)], indirect=True)
def test_openai_parse_reaches_gemini_as_response_json_schema(rig: Rig) -> None:
    client = openai.OpenAI(base_url=f"{rig.forwarder.base_url}/v1", api_key="sk-test-structured", max_retries=0)
    answer = client.chat.completions.parse(model="gemini-2.5-flash", response_format=Weather,
                                           messages=[{"role": "user", "content": "Weather in Paris?"}])
    client.close()
    assert answer.choices[0].message.parsed == Weather(city="Paris", temp=21.5)
    client_side = orjson.loads(rig.flows(1)[0].request_body)["response_format"]["json_schema"]
    (path, sent), = rig.upstream.received
    assert path == "/v1beta/models/gemini-2.5-flash:generateContent"
    assert sent["generationConfig"] == {"responseMimeType": "application/json",
                                        "responseJsonSchema": client_side["schema"]}
    _no_errors(sent, Dialect.GEMINI)
