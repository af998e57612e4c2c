"""A fake model's answer as Chat writes it: a `chat.completion`, or the `data:` payloads of its stream."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...canned import Call, split
from ...pointer import split as split_pointer


def chat_completion(text: str | None = None, calls: Iterable[Call] = (), model: str = "gpt-4o-mini") -> dict[str, Any]:
    calls = list(calls)
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in calls
        ]
    return {
        "id": "chatcmpl-mock", "object": "chat.completion", "created": 1700000000, "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def chat_stream(text: str | None = None, calls: Iterable[Call] = (), model: str = "gpt-4o-mini",
                pieces: int = 3) -> list[Any]:
    """The `data:` payloads of a streamed chat completion, `[DONE]` included."""
    calls = list(calls)
    base = {"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1700000000, "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    events: list[Any] = [chunk({"role": "assistant", "content": "" if text is not None else None})]
    for part in split(text or "", pieces):
        events.append(chunk({"content": part}))
    for index, call in enumerate(calls):
        events.append(chunk({"tool_calls": [{"index": index, "id": call.id, "type": "function",
                                             "function": {"name": call.name, "arguments": ""}}]}))
        for part in split(call.arguments, pieces):
            events.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]}))
    events.append(chunk({}, "tool_calls" if calls else "stop"))
    events.append("[DONE]")
    return events


def openai_param(pointer: str) -> str | None:
    """A JSON pointer as OpenAI names the place in its errors' `param`: `messages[2].content`."""
    text = ""
    for token in split_pointer(pointer):
        text += f"[{token}]" if token.isdigit() else (f".{token}" if text else token)
    return text or None


def openai_error(message: str, pointer: str) -> dict[str, Any]:
    """The 400 body both OpenAI APIs send for a request they refuse."""
    return {"error": {"message": message, "type": "invalid_request_error", "param": openai_param(pointer),
                      "code": None}}
