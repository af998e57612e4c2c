"""The built-in demo: a scripted agent's turns, each with the answer the fake upstream gives.

Realistic tool-calling traffic with the defects the seeds describe, so a new user sees every part
of the product work with no API key and no network."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

DEMO_API_KEY = "sk-demo-not-a-real-key-0000"

# The demo's routes beside passthrough, each a mode of the forwarder (`--route-mode NAME=MODE`),
# all to the demo's one fake upstream: so the list shows original-vs-translated and
# original-vs-repaired flows too.
ROUTES: dict[str, str] = {"claude": "translate:openai-chat:anthropic", "fixer": "repair"}


@dataclass(frozen=True, slots=True)
class Turn:
    title: str
    path: str
    request: dict[str, Any]
    # A JSON body, or for streams the list of SSE `data:` payloads (dicts, or "[DONE]").
    response: dict[str, Any] | list[Any]
    stream: bool = False
    status: int = 200
    # The demo route (ROUTES) the turn goes through; None: passthrough at `/`. A routed turn's
    # `response` is what the upstream answers, in the upstream's dialect.
    route: str | None = None

    @property
    def body(self) -> bytes:
        return orjson.dumps(self.request)


WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
            "required": ["city"],
        },
    },
}

# Seed 000: a genai Schema serialised as-is, upper-case types and all.
GENAI_SCHEMA_TOOL = {
    "type": "function",
    "function": {
        "name": "scrape_webpage",
        "description": "Fetch a page and return its text.",
        "parameters": {
            "type": "OBJECT",
            "properties": {"url": {"type": "STRING"}, "render_js": {"type": "BOOLEAN", "nullable": True}},
            "required": ["url"],
            "propertyOrdering": ["url", "render_js"],
        },
    },
}

LIST_ISSUES = {
    "type": "function",
    "function": {
        "name": "list_issues",
        "description": "List open issues of a repository.",
        "parameters": {"type": "object", "properties": {"repo": {"type": "string"}}, "required": ["repo"]},
    },
}


def _chat_response(message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-demo",
        "object": "chat.completion",
        "created": 1767225600,
        "model": "gpt-4.1-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 18, "total_tokens": 138},
    }


def _chat_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-demo-stream",
        "object": "chat.completion.chunk",
        "created": 1767225600,
        "model": "gpt-4.1-mini",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _weather_stream() -> list[Any]:
    first = {"index": 0, "id": "call_wx_1", "type": "function", "function": {"name": "get_weather", "arguments": ""}}
    pieces = ['{"ci', 'ty": "Ly', 'on", "un', 'it": "c"}']
    return (
        [_chat_chunk({"role": "assistant", "content": None, "tool_calls": [first]})]
        + [_chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in pieces]
        + [_chat_chunk({}, "tool_calls"), "[DONE]"]
    )


TURNS: list[Turn] = [
    Turn(
        "a clean streamed tool call",
        "/v1/chat/completions",
        {
            "model": "gpt-4.1-mini",
            "stream": True,
            "messages": [
                {"role": "system", "content": "You are a helpful travel agent."},
                {"role": "user", "content": "What's the weather in Lyon?"},
            ],
            "tools": [WEATHER_TOOL],
        },
        _weather_stream(),
        stream=True,
    ),
    Turn(
        "the tool result goes back",
        "/v1/chat/completions",
        {
            "model": "gpt-4.1-mini",
            "messages": [
                {"role": "user", "content": "What's the weather in Lyon?"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_wx_1", "type": "function",
                     "function": {"name": "get_weather", "arguments": "{\"city\": \"Lyon\", \"unit\": \"c\"}"}}]},
                {"role": "tool", "tool_call_id": "call_wx_1", "content": "{\"temp_c\": 14, \"sky\": \"overcast\"}"},
            ],
            "tools": [WEATHER_TOOL],
        },
        _chat_response({"content": "It is 14 °C and overcast in Lyon."}, "stop"),
    ),
    Turn(
        "seed 000: a genai schema sent as-is (upper-case types)",
        "/v1/chat/completions",
        {
            "model": "gpt-4.1-mini",
            "messages": [{"role": "user", "content": "Summarise https://example.org"}],
            "tools": [GENAI_SCHEMA_TOOL],
        },
        {"error": {"message": "Invalid schema for function 'scrape_webpage': 'OBJECT' is not valid under any of "
                              "the given schemas.", "type": "invalid_request_error", "param": "tools[0]",
                   "code": "invalid_function_parameters"}},
        status=400,
    ),
    Turn(
        "seed 003: tool message lost its content, arguments double-encoded",
        "/v1/chat/completions",
        {
            "model": "gpt-4.1-mini",
            "messages": [
                {"role": "user", "content": "Read the README of toolwire/inspect"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_rd_1", "type": "function",
                     "function": {"name": "read_file", "arguments": "\"{\\\"path\\\": \\\"README.md\\\"}\""}}]},
                {"role": "tool", "tool_call_id": "call_rd_1"},
            ],
            "tools": [{"type": "function", "function": {
                "name": "read_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}],
        },
        {"error": {"message": "Missing required parameter: 'messages[2].content'.",
                   "type": "invalid_request_error", "param": "messages[2].content", "code": "missing_required_parameter"}},
        status=400,
    ),
    Turn(
        "seed 000: one MCP server registered twice, dotted tool names",
        "/v1/chat/completions",
        {
            "model": "gpt-4.1-mini",
            "messages": [{"role": "user", "content": "Any open bugs in toolwire/inspect?"}],
            "tools": [LIST_ISSUES, LIST_ISSUES, {"type": "function", "function": {
                "name": "github.search_code", "parameters": {"type": "object", "properties": {}}}}],
        },
        {"error": {"message": "Invalid 'tools[2].function.name': string does not match pattern. Expected a string "
                              "that matches the pattern '^[a-zA-Z0-9_-]+$'.", "type": "invalid_request_error",
                   "param": "tools[2].function.name", "code": "invalid_value"}},
        status=400,
    ),
    Turn(
        "an orphan tool result and a call left unanswered",
        "/v1/chat/completions",
        {
            "model": "gpt-4.1-mini",
            "messages": [
                {"role": "user", "content": "Book the 9:40 train"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_bk_1", "type": "function",
                     "function": {"name": "book_train", "arguments": "{\"time\": \"09:40\"}"}}]},
                {"role": "user", "content": "Actually, make it 10:10"},
                {"role": "tool", "tool_call_id": "call_bk_1", "content": "booked"},
            ],
            "tools": [{"type": "function", "function": {
                "name": "book_train", "parameters": {"type": "object", "properties": {"time": {"type": "string"}}}}}],
        },
        {"error": {"message": "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                              "message with 'tool_calls'.", "type": "invalid_request_error",
                   "param": "messages.[3].role", "code": None}},
        status=400,
    ),
    Turn(
        "a Responses call with a built-in tool",
        "/v1/responses",
        {
            "model": "gpt-4.1-mini",
            "input": [{"role": "user", "content": "Find the latest Textual release and check the weather in Oslo."}],
            "tools": [
                {"type": "web_search"},
                {"type": "function", "name": "get_weather", "strict": False,
                 "parameters": WEATHER_TOOL["function"]["parameters"]},
            ],
        },
        {
            "id": "resp_demo",
            "object": "response",
            "created_at": 1767225600,
            "status": "completed",
            "model": "gpt-4.1-mini",
            "output": [
                {"type": "function_call", "id": "fc_demo_1", "call_id": "call_os_1", "name": "get_weather",
                 "arguments": "{\"city\": \"Oslo\"}", "status": "completed"},
            ],
        },
    ),
]

TURNS += [
    Turn(
        "Anthropic: a tool_use answered in the next user turn",
        "/v1/messages",
        {
            "model": "claude-sonnet-4-5",
            "max_tokens": 1024,
            "tools": [{"name": "get_weather", "description": "Current weather for a city.",
                       "input_schema": WEATHER_TOOL["function"]["parameters"]}],
            "messages": [
                {"role": "user", "content": "Weather in Kyoto?"},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Let me check."},
                    {"type": "tool_use", "id": "toolu_demo_1", "name": "get_weather", "input": {"city": "Kyoto"}}]},
                {"role": "user", "content": [
                    {"type": "text", "text": "(also, in Celsius please)"},
                    {"type": "tool_result", "tool_use_id": "toolu_demo_1", "content": "18 C, clear"}]},
            ],
        },
        {"type": "error", "error": {"type": "invalid_request_error", "message":
            "messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message. Messages following "
            "`tool_use` blocks must begin with a matching number of `tool_result` blocks."}},
        status=400,
    ),
    Turn(
        "Gemini: a function call with its thought signature",
        "/v1beta/models/gemini-2.5-flash:generateContent",
        {
            "contents": [{"role": "user", "parts": [{"text": "Weather in Quito?"}]}],
            "tools": [{"functionDeclarations": [{
                "name": "get_weather", "description": "Current weather for a city.",
                "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}, "required": ["city"]}}]}],
        },
        {
            "candidates": [{
                "content": {"role": "model", "parts": [
                    {"functionCall": {"name": "get_weather", "args": {"city": "Quito"}}, "thoughtSignature": "c2lnLWRlbW8="}]},
                "finishReason": "STOP", "index": 0}],
            "modelVersion": "gemini-2.5-flash",
        },
    ),
]

TURNS += [
    Turn(
        "translate: an OpenAI Chat client talks to an Anthropic upstream",
        "/v1/chat/completions",
        {
            "model": "claude-sonnet-4-5",
            "max_tokens": 512,
            "seed": 7,
            "parallel_tool_calls": False,
            "messages": [
                {"role": "system", "content": "You are a helpful travel agent."},
                {"role": "user", "content": "Weather in Kyoto?"},
            ],
            "tools": [WEATHER_TOOL],
        },
        {
            "id": "msg_demo_kyoto",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": "toolu_demo_2", "name": "get_weather", "input": {"city": "Kyoto", "unit": "c"}},
            ],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 312, "output_tokens": 41},
        },
        route="claude",
    ),
    Turn(
        "repair: the genai schema of seed 000, fixed on the way up",
        "/v1/chat/completions",
        {
            "model": "gpt-4.1-mini",
            "messages": [{"role": "user", "content": "Summarise https://example.org"}],
            "tools": [GENAI_SCHEMA_TOOL],
        },
        _chat_response({"content": None, "tool_calls": [
            {"id": "call_sc_1", "type": "function",
             "function": {"name": "scrape_webpage", "arguments": "{\"url\": \"https://example.org\"}"}}]},
            "tool_calls"),
        route="fixer",
    ),
]
