"""Valid tool-calling payloads for every dialect: the baselines that rule tests mutate (one defect at a
time) and the property test's generator builds on. Each builder returns a fresh object."""

from __future__ import annotations

from typing import Any

import orjson


def chat_request() -> dict[str, Any]:
    return {
        "model": "gpt-test",
        "tools": [
            {"type": "function", "function": {
                "name": "get_weather", "description": "Weather for a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"},
                                                                "days": {"type": "integer"}},
                               "required": ["city"]}}},
            {"type": "function", "function": {"name": "search_docs",
                                              "parameters": {"type": "object", "properties": {
                                                  "q": {"type": "string"}}}}},
        ],
        "tool_choice": "auto",
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Weather in Oslo and Rome?"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'}},
                {"id": "call_2", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Rome"}'}},
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "4°C"},
            {"role": "tool", "tool_call_id": "call_2", "content": "18°C"},
            {"role": "assistant", "content": "Oslo 4°C, Rome 18°C."},
            {"role": "user", "content": "Thanks"},
        ],
    }


def chat_response() -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-test", "choices": [
        {"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_9", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'}}]}}]}


def sse(events: list[Any], done: bool = False) -> bytes:
    body = b"".join(b"data: " + orjson.dumps(event) + b"\n\n" for event in events)
    return body + (b"data: [DONE]\n\n" if done else b"")


def named_sse(events: list[dict[str, Any]]) -> bytes:
    return b"".join(b"event: " + str(e.get("type", "")).encode() + b"\ndata: " + orjson.dumps(e) + b"\n\n"
                    for e in events)


def chat_chunks() -> list[dict[str, Any]]:
    """Two parallel calls interleaved by index, id/name on the first delta only."""
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return [
        chunk({"role": "assistant", "content": None}),
        chunk({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                               "function": {"name": "get_weather", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 1, "id": "call_b", "type": "function",
                               "function": {"name": "get_weather", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"city":'}}]}),
        chunk({"tool_calls": [{"index": 1, "function": {"arguments": '{"city":"Rome"}'}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"Oslo"}'}}]}),
        chunk({}, "tool_calls"),
    ]


def responses_request() -> dict[str, Any]:
    return {
        "model": "gpt-test",
        "tools": [
            {"type": "function", "name": "get_weather", "description": "Weather", "strict": False,
             "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
            {"type": "web_search"},
        ],
        "tool_choice": {"type": "function", "name": "get_weather"},
        "input": [
            {"role": "user", "content": "Weather in Oslo?"},
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
             "arguments": '{"city":"Oslo"}'},
            {"type": "function_call_output", "call_id": "call_1", "output": "4°C"},
            {"role": "assistant", "content": "It is 4°C."},
            {"role": "user", "content": "Thanks"},
        ],
    }


def responses_response() -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "status": "completed", "output": [
        {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "get_weather",
         "arguments": '{"city":"Rome"}', "status": "completed"}]}


def responses_events() -> list[dict[str, Any]]:
    item = {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "get_weather", "arguments": ""}
    done = {**item, "arguments": '{"city":"Rome"}', "status": "completed"}
    return [
        {"type": "response.created", "sequence_number": 0, "response": {"id": "resp_1", "object": "response",
                                                                        "status": "in_progress", "output": []}},
        {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": item},
        {"type": "response.function_call_arguments.delta", "sequence_number": 2, "item_id": "fc_2",
         "output_index": 0, "delta": '{"city":'},
        {"type": "response.function_call_arguments.delta", "sequence_number": 3, "item_id": "fc_2",
         "output_index": 0, "delta": '"Rome"}'},
        {"type": "response.function_call_arguments.done", "sequence_number": 4, "item_id": "fc_2",
         "output_index": 0, "name": "get_weather", "arguments": '{"city":"Rome"}'},
        {"type": "response.output_item.done", "sequence_number": 5, "output_index": 0, "item": done},
        {"type": "response.completed", "sequence_number": 6, "response": {
            "id": "resp_1", "object": "response", "status": "completed", "output": [done]}},
    ]


def anthropic_request() -> dict[str, Any]:
    return {
        "model": "claude-test", "max_tokens": 100,
        "tools": [{"name": "get_weather", "description": "Weather",
                   "input_schema": {"type": "object", "properties": {"city": {"type": "string"}},
                                    "required": ["city"]}},
                  {"type": "web_search_20250305", "name": "web_search", "max_uses": 2}],
        "tool_choice": {"type": "auto"},
        "messages": [
            {"role": "user", "content": "Weather in Oslo and Rome?"},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}},
                {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"city": "Rome"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "4°C"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": [{"type": "text", "text": "18°C"}]},
                {"type": "text", "text": "And tomorrow?"}]},
        ],
    }


def anthropic_response() -> dict[str, Any]:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [{"type": "text", "text": "Checking."},
                        {"type": "tool_use", "id": "toolu_9", "name": "get_weather", "input": {"city": "Oslo"}}],
            "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}


def anthropic_events() -> list[dict[str, Any]]:
    return [
        {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                                              "model": "claude-test", "content": [], "stop_reason": None,
                                              "usage": {"input_tokens": 1, "output_tokens": 0}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_a",
                                                                      "name": "get_weather", "input": {}}},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_b",
                                                                      "name": "get_weather", "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"city":'}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '{"city":'}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '"Rome"}'}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '"Oslo"}'}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
         "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]


def bedrock_request() -> dict[str, Any]:
    """A Converse request (the model is in the path) in the middle of a tool-use loop."""
    return {
        "toolConfig": {"tools": [{"toolSpec": {"name": "get_weather", "description": "Weather", "inputSchema": {
            "json": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}}],
            "toolChoice": {"auto": {}}},
        "inferenceConfig": {"maxTokens": 100, "temperature": 0.5},
        "system": [{"text": "Be brief."}],
        "messages": [
            {"role": "user", "content": [{"text": "Weather in Oslo and Rome?"}]},
            {"role": "assistant", "content": [
                {"text": "Checking."},
                {"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather", "input": {"city": "Oslo"}}},
                {"toolUse": {"toolUseId": "tooluse_2", "name": "get_weather", "input": {"city": "Rome"}}}]},
            {"role": "user", "content": [
                {"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "4°C"}]}},
                {"toolResult": {"toolUseId": "tooluse_2", "content": [{"json": {"celsius": 18}}], "status": "success"}},
                {"text": "And tomorrow?"}]},
        ],
    }


def bedrock_response() -> dict[str, Any]:
    return {"output": {"message": {"role": "assistant", "content": [
                {"text": "Checking."},
                {"toolUse": {"toolUseId": "tooluse_9", "name": "get_weather", "input": {"city": "Oslo"}}}]}},
            "stopReason": "tool_use", "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
            "metrics": {"latencyMs": 10}}


def bedrock_events() -> list[dict[str, Any]]:
    return [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "tooluse_a", "name": "get_weather"}},
                               "contentBlockIndex": 0}},
        {"contentBlockDelta": {"delta": {"toolUse": {"input": '{"city":'}}, "contentBlockIndex": 0}},
        {"contentBlockDelta": {"delta": {"toolUse": {"input": '"Oslo"}'}}, "contentBlockIndex": 0}},
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"messageStop": {"stopReason": "tool_use"}},
        {"metadata": {"usage": {"inputTokens": 1, "outputTokens": 9, "totalTokens": 10}, "metrics": {"latencyMs": 5}}},
    ]


def gemini_request() -> dict[str, Any]:
    return {
        "tools": [{"functionDeclarations": [
            {"name": "get_weather", "description": "Weather",
             "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}, "required": ["city"]}},
            {"name": "mcp.search", "parameters": {"type": "object", "properties": {"q": {"type": "string",
                                                                                          "nullable": True}}}},
        ]}],
        "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
        "contents": [
            {"role": "user", "parts": [{"text": "Weather in Oslo and Rome?"}]},
            {"role": "model", "parts": [
                {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}, "id": "c1"}},
                {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}, "id": "c2"}}]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "get_weather", "id": "c1", "response": {"output": "4°C"}}},
                {"functionResponse": {"name": "get_weather", "id": "c2", "response": {"output": "18°C"}}}]},
            {"role": "model", "parts": [{"text": "Oslo 4°C, Rome 18°C."}]},
            {"role": "user", "parts": [{"text": "Thanks"}]},
        ],
    }


def gemini_response() -> dict[str, Any]:
    return {"candidates": [{"index": 0, "finishReason": "STOP", "content": {"role": "model", "parts": [
        {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}, "id": "c9"}}]}}],
        "usageMetadata": {"totalTokenCount": 3}}


def gemini_chunks() -> list[dict[str, Any]]:
    return [
        {"candidates": [{"index": 0, "content": {"role": "model", "parts": [{"text": "Check"}]}}]},
        {"candidates": [{"index": 0, "content": {"role": "model", "parts": [{"text": "ing."}]}}]},
        {"candidates": [{"index": 0, "content": {"role": "model", "parts": [
            {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}, "id": "a"}}]}}]},
        {"candidates": [{"index": 0, "finishReason": "STOP", "content": {"role": "model", "parts": [
            {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}, "id": "b"}}]}}],
         "usageMetadata": {"totalTokenCount": 7}},
    ]


def mcp_list_result() -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "result": {"tools": [
        {"name": "get_weather", "description": "Weather",
         "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
         "outputSchema": {"type": "object", "properties": {"celsius": {"type": "number"}}, "required": ["celsius"]},
         "annotations": {"readOnlyHint": True}},
        {"name": "ping", "inputSchema": {"type": "object", "additionalProperties": False}},
    ]}}


def mcp_call_request() -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "get_weather", "arguments": {"city": "Oslo"}}}


def mcp_call_result() -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 2, "result": {
        "content": [{"type": "text", "text": '{"celsius": 4}'}], "structuredContent": {"celsius": 4},
        "isError": False}}
