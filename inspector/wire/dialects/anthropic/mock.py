"""A fake model's answer as Anthropic writes it: a `message`, or its named stream events."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from ...canned import Call, split


def anthropic_message(text: str | None = None, calls: Iterable[Call] = (),
                      model: str = "claude-sonnet-4-6") -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if text is not None:
        content.append({"type": "text", "text": text})
    for call in calls:
        content.append({"type": "tool_use", "id": call.id, "name": call.name, "input": orjson.loads(call.arguments)})
    return {
        "id": "msg_mock", "type": "message", "role": "assistant", "model": model, "content": content,
        "stop_reason": "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn",
        "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def anthropic_stream(text: str | None = None, calls: Iterable[Call] = (), model: str = "claude-sonnet-4-6",
                     pieces: int = 3) -> list[tuple[str, dict[str, Any]]]:
    final = anthropic_message(text, calls, model)
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start",
                           "message": {**final, "content": [], "stop_reason": None,
                                       "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    ]
    for index, block in enumerate(final["content"]):
        if block["type"] == "text":
            events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {"type": "text", "text": ""}}))
            events += [("content_block_delta", {"type": "content_block_delta", "index": index,
                                                "delta": {"type": "text_delta", "text": p}})
                       for p in split(block["text"], pieces)]
        else:
            events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {**block, "input": {}}}))
            events += [("content_block_delta", {"type": "content_block_delta", "index": index,
                                                "delta": {"type": "input_json_delta", "partial_json": p}})
                       for p in split(orjson.dumps(block["input"]).decode(), pieces)]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": final["stop_reason"], "stop_sequence": None},
                                     "usage": {"output_tokens": 5}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def anthropic_error(message: str, pointer: str) -> dict[str, Any]:
    """The 400 body Anthropic sends for a request it refuses (its messages name the place themselves)."""
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
