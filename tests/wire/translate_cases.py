"""Shared material for the translation tests: one tool-calling turn in every dialect, as an
upstream would answer it (JSON and streamed), and helpers to run a stream through a bridge."""

from __future__ import annotations

from typing import Any

import orjson

from inspector.wire.dialect import Dialect
from inspector.wire.dialects.bedrock.stream import encode_event
from inspector.wire.sse import parse_all
from inspector.wire.streams import parse_events


def sse(*events: Any, named: bool = False, done: bool = False) -> bytes:
    out = b""
    for event in events:
        head = b"event: " + event["type"].encode() + b"\n" if named else b""
        out += head + b"data: " + orjson.dumps(event) + b"\n\n"
    return out + (b"data: [DONE]\n\n" if done else b"")


def events(body: bytes, dialect: Dialect | None = None) -> list[Any]:
    """The JSON data of every SSE event ("[DONE]" kept as a string); with `dialect`, the events as
    its framing reads them (Bedrock's event-stream frames)."""
    if dialect is not None:
        return parse_events(body, dialect)
    return [e.data if e.data == "[DONE]" else orjson.loads(e.data) for e in parse_all(body)]


def run_stream(translator: Any, body: bytes, size: int) -> tuple[bytes, list[bytes]]:
    """Feed `body` in pieces of `size` bytes; (whole output, output of each feed)."""
    outputs = [translator.feed(body[i:i + size]) for i in range(0, len(body), size)]
    outputs.append(translator.close())
    return b"".join(outputs), outputs


# --- one answer with text and two parallel calls, as each upstream dialect streams it -----------

CHAT_STREAM = sse(
    {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
     "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]},
    {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
     "choices": [{"index": 0, "delta": {"content": "Checking both."}, "finish_reason": None}]},
    {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
     "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                                                        "function": {"name": "get_weather", "arguments": ""}}]},
                  "finish_reason": None}]},
    {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
     "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"city\":"}}]},
                  "finish_reason": None}]},
    {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
     "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "id": "call_b", "type": "function",
                                                        "function": {"name": "get_time", "arguments": ""}}]},
                  "finish_reason": None}]},
    {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
     "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "\"Paris\"}"}}]},
                  "finish_reason": None}]},
    {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
     "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "function": {"arguments": "{\"tz\":\"CET\"}"}}]},
                  "finish_reason": None}]},
    {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
     "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [],
     "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}},
    done=True,
)

CHAT_RESPONSE = {
    "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": "Checking both.",
        "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
            {"id": "call_b", "type": "function", "function": {"name": "get_time", "arguments": "{\"tz\":\"CET\"}"}}]}}],
    "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
}


def _resp_item(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, **fields}


RESPONSES_STREAM = sse(
    {"type": "response.created", "sequence_number": 0,
     "response": {"id": "resp_1", "object": "response", "model": "m", "status": "in_progress", "output": []}},
    {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
     "item": {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress", "content": []}},
    {"type": "response.output_text.delta", "sequence_number": 2, "item_id": "msg_1", "output_index": 0,
     "content_index": 0, "delta": "Checking both."},
    {"type": "response.output_item.done", "sequence_number": 3, "output_index": 0,
     "item": {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
              "content": [{"type": "output_text", "text": "Checking both.", "annotations": []}]}},
    {"type": "response.output_item.added", "sequence_number": 4, "output_index": 1,
     "item": {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "get_weather", "arguments": ""}},
    {"type": "response.output_item.added", "sequence_number": 5, "output_index": 2,
     "item": {"type": "function_call", "id": "fc_2", "call_id": "call_b", "name": "get_time", "arguments": ""}},
    {"type": "response.function_call_arguments.delta", "sequence_number": 6, "item_id": "fc_1", "output_index": 1,
     "delta": "{\"city\":"},
    {"type": "response.function_call_arguments.delta", "sequence_number": 7, "item_id": "fc_2", "output_index": 2,
     "delta": "{\"tz\":\"CET\"}"},
    {"type": "response.function_call_arguments.delta", "sequence_number": 8, "item_id": "fc_1", "output_index": 1,
     "delta": "\"Paris\"}"},
    {"type": "response.output_item.done", "sequence_number": 9, "output_index": 1,
     "item": {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "get_weather",
              "arguments": "{\"city\":\"Paris\"}", "status": "completed"}},
    {"type": "response.output_item.done", "sequence_number": 10, "output_index": 2,
     "item": {"type": "function_call", "id": "fc_2", "call_id": "call_b", "name": "get_time",
              "arguments": "{\"tz\":\"CET\"}", "status": "completed"}},
    {"type": "response.completed", "sequence_number": 11,
     "response": {"id": "resp_1", "object": "response", "model": "m", "status": "completed",
                  "output": [{"type": "function_call"}], "usage": {"input_tokens": 11, "output_tokens": 7}}},
    named=True,
)

RESPONSES_RESPONSE = {
    "id": "resp_1", "object": "response", "created_at": 1, "model": "m", "status": "completed",
    "output": [
        {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "Checking both.", "annotations": []}]},
        {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "get_weather",
         "arguments": "{\"city\":\"Paris\"}", "status": "completed"},
        {"type": "function_call", "id": "fc_2", "call_id": "call_b", "name": "get_time",
         "arguments": "{\"tz\":\"CET\"}", "status": "completed"}],
    "usage": {"input_tokens": 11, "output_tokens": 7, "total_tokens": 18},
}

ANTHROPIC_STREAM = sse(
    {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                                          "content": [], "stop_reason": None, "usage": {"input_tokens": 11,
                                                                                         "output_tokens": 1}}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Checking both."}},
    {"type": "content_block_stop", "index": 0},
    {"type": "content_block_start", "index": 1,
     "content_block": {"type": "tool_use", "id": "toolu_a", "name": "get_weather", "input": {}}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"city\":"}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "\"Paris\"}"}},
    {"type": "content_block_stop", "index": 1},
    {"type": "content_block_start", "index": 2,
     "content_block": {"type": "tool_use", "id": "toolu_b", "name": "get_time", "input": {}}},
    {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"tz\":\"CET\"}"}},
    {"type": "content_block_stop", "index": 2},
    {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": 7}},
    {"type": "message_stop"},
    named=True,
)

ANTHROPIC_RESPONSE = {
    "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
    "content": [{"type": "text", "text": "Checking both."},
                {"type": "tool_use", "id": "toolu_a", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "toolu_b", "name": "get_time", "input": {"tz": "CET"}}],
    "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 11, "output_tokens": 7},
}

GEMINI_STREAM = sse(
    {"candidates": [{"content": {"role": "model", "parts": [{"text": "Checking both."}]}, "index": 0}],
     "modelVersion": "m", "responseId": "r1"},
    {"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
        {"functionCall": {"name": "get_time", "args": {"tz": "CET"}}}]}, "finishReason": "STOP", "index": 0}],
     "usageMetadata": {"promptTokenCount": 11, "candidatesTokenCount": 7, "totalTokenCount": 18},
     "modelVersion": "m", "responseId": "r1"},
)

GEMINI_RESPONSE = {
    "candidates": [{"content": {"role": "model", "parts": [
        {"text": "Checking both."},
        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
        {"functionCall": {"name": "get_time", "args": {"tz": "CET"}}}]}, "finishReason": "STOP", "index": 0}],
    "usageMetadata": {"promptTokenCount": 11, "candidatesTokenCount": 7, "totalTokenCount": 18},
    "modelVersion": "m", "responseId": "r1",
}

# ConverseStream: one content block per text run and per call, in the order they close (Bedrock
# does not interleave blocks), as event-stream frames.
BEDROCK_STREAM = b"".join(encode_event(event) for event in (
    {"messageStart": {"role": "assistant"}},
    {"contentBlockDelta": {"delta": {"text": "Checking both."}, "contentBlockIndex": 0}},
    {"contentBlockStop": {"contentBlockIndex": 0}},
    {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "tooluse_a", "name": "get_weather"}},
                           "contentBlockIndex": 1}},
    {"contentBlockDelta": {"delta": {"toolUse": {"input": "{\"city\":"}}, "contentBlockIndex": 1}},
    {"contentBlockDelta": {"delta": {"toolUse": {"input": "\"Paris\"}"}}, "contentBlockIndex": 1}},
    {"contentBlockStop": {"contentBlockIndex": 1}},
    {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "tooluse_b", "name": "get_time"}},
                           "contentBlockIndex": 2}},
    {"contentBlockDelta": {"delta": {"toolUse": {"input": "{\"tz\":\"CET\"}"}}, "contentBlockIndex": 2}},
    {"contentBlockStop": {"contentBlockIndex": 2}},
    {"messageStop": {"stopReason": "tool_use"}},
    {"metadata": {"usage": {"inputTokens": 11, "outputTokens": 7, "totalTokens": 18}, "metrics": {"latencyMs": 40}}},
))

BEDROCK_RESPONSE = {
    "output": {"message": {"role": "assistant", "content": [
        {"text": "Checking both."},
        {"toolUse": {"toolUseId": "tooluse_a", "name": "get_weather", "input": {"city": "Paris"}}},
        {"toolUse": {"toolUseId": "tooluse_b", "name": "get_time", "input": {"tz": "CET"}}}]}},
    "stopReason": "tool_use", "usage": {"inputTokens": 11, "outputTokens": 7, "totalTokens": 18},
    "metrics": {"latencyMs": 40},
}
