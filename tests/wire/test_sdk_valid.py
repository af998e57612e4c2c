"""Requests built with the official SDKs' own types (openai, anthropic, google-genai) for tool-calling
conversations are clean. The SDKs send them to a real recording server on a loopback port, so what
is checked is exactly what each SDK serialises."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anthropic
import openai
import orjson
import pytest
from google import genai
from google.genai import types
from pydantic import BaseModel

from inspector.wire import check
from inspector.wire.dialect import from_path

REPLIES = {
    "/v1/chat/completions": {"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}]},
    "/v1/responses": {"id": "resp_1", "object": "response", "created_at": 1, "model": "m", "status": "completed",
                      "output": [], "parallel_tool_calls": True, "tool_choice": "auto", "tools": []},
    "/v1/messages": {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "stop_reason": "end_turn",
                     "stop_sequence": None, "content": [{"type": "text", "text": "ok"}],
                     "usage": {"input_tokens": 1, "output_tokens": 1}},
    "gemini": {"candidates": [{"index": 0, "finishReason": "STOP",
                               "content": {"role": "model", "parts": [{"text": "ok"}]}}]},
}


class Recorder(BaseHTTPRequestHandler):
    bodies: list[tuple[str, Any]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        path = self.path.split("?", 1)[0]
        type(self).bodies.append((path, orjson.loads(body)))
        reply = orjson.dumps(REPLIES.get(path, REPLIES["gemini"]))
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server():
    Recorder.bodies = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", Recorder.bodies
    httpd.shutdown()
    httpd.server_close()


class Weather(BaseModel):
    city: str
    days: int | None = None


def test_openai_chat_with_sdk_types(server):
    url, bodies = server
    client = openai.OpenAI(api_key="sk-test", base_url=f"{url}/v1", max_retries=0)
    call = {"id": "call_1", "type": "function", "function": {"name": "Weather", "arguments": '{"city":"Oslo"}'}}
    client.chat.completions.create(
        model="gpt-test",
        tools=[openai.pydantic_function_tool(Weather), openai.pydantic_function_tool(Weather, name="forecast")],
        tool_choice={"type": "function", "function": {"name": "forecast"}},
        parallel_tool_calls=False,
        messages=[
            {"role": "user", "content": "Weather in Oslo?"},
            {"role": "assistant", "tool_calls": [call, {**call, "id": "call_2",
                                                        "function": {**call["function"], "name": "forecast"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "4°C"},
            {"role": "tool", "tool_call_id": "call_2", "content": [{"type": "text", "text": "sunny"}]},
        ])
    (path, body), = bodies
    assert body["tools"][0]["function"]["strict"] is True
    # No errors; the one finding is the fact that the SDK leaves out content on a tool-call message.
    assert [(v.rule, v.severity.value, v.pointer) for v in check.check_request(body, from_path(path))] == [
        ("OC-12", "info", "/messages/1/content")]


def test_openai_responses_with_sdk_types(server):
    url, bodies = server
    client = openai.OpenAI(api_key="sk-test", base_url=f"{url}/v1", max_retries=0)
    client.responses.create(
        model="gpt-test",
        tools=[{"type": "function", "name": "weather", "strict": True, "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
            "additionalProperties": False}}, {"type": "web_search"}],
        tool_choice={"type": "function", "name": "weather"},
        input=[
            {"role": "user", "content": "Weather in Oslo?"},
            {"type": "function_call", "call_id": "call_1", "name": "weather", "arguments": '{"city":"Oslo"}'},
            {"type": "function_call_output", "call_id": "call_1", "output": "4°C"},
        ])
    (path, body), = bodies
    assert check.check_request(body, from_path(path)) == []


def test_anthropic_with_sdk_types(server):
    url, bodies = server

    @anthropic.beta_tool
    def weather(city: str, days: int = 1) -> str:
        """Weather for a city.

        Args:
            city: the city
            days: how many days
        """
        return "4°C"

    client = anthropic.Anthropic(api_key="sk-ant-test", base_url=url, max_retries=0)
    client.messages.create(
        model="claude-test", max_tokens=64,
        tools=[weather.to_dict(), {"type": "web_search_20250305", "name": "web_search", "max_uses": 1}],
        tool_choice={"type": "tool", "name": "weather"},
        messages=[
            {"role": "user", "content": "Weather in Oslo?"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "weather",
                                               "input": {"city": "Oslo"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "4°C"},
                                         {"type": "text", "text": "And Rome?"}]},
        ])
    (path, body), = bodies
    assert body["tools"][0]["input_schema"]["type"] == "object"
    assert check.check_request(body, from_path(path)) == []


def test_google_genai_with_sdk_types(server):
    url, bodies = server
    client = genai.Client(api_key="test-key", http_options=types.HttpOptions(base_url=url))

    def weather(city: str, days: int) -> str:
        """Weather for a city."""
        return "4°C"

    declaration = types.FunctionDeclaration.from_callable(client=client, callable=weather)
    schema_declaration = types.FunctionDeclaration(name="search", description="Search", parameters=types.Schema(
        type=types.Type.OBJECT, properties={"q": types.Schema(type=types.Type.STRING, nullable=True)},
        property_ordering=["q"]))
    client.models.generate_content(
        model="gemini-2.5-flash",
        contents=[
            types.Content(role="user", parts=[types.Part.from_text(text="Weather in Oslo?")]),
            types.Content(role="model", parts=[types.Part.from_function_call(name="weather", args={"city": "Oslo",
                                                                                                   "days": 1})]),
            types.Content(role="user", parts=[types.Part.from_function_response(name="weather",
                                                                                 response={"output": "4°C"})]),
        ],
        config=types.GenerateContentConfig(
            tools=[types.Tool(function_declarations=[declaration, schema_declaration])],
            tool_config=types.ToolConfig(function_calling_config=types.FunctionCallingConfig(
                mode=types.FunctionCallingConfigMode.ANY, allowed_function_names=["weather"])),
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True)))
    (path, body), = bodies
    assert path.endswith(":generateContent")
    assert json.dumps(body).count("functionDeclarations") == 1
    assert check.check_request(body, "gemini") == []
