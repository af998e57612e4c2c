"""A fake model's answer as Bedrock Converse writes it: a ConverseResponse, or its stream events."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from ...canned import Call, split

_USAGE = {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}


def converse_response(text: str | None = None, calls: Iterable[Call] = ()) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if text is not None:
        content.append({"text": text})
    for call in calls:
        content.append({"toolUse": {"toolUseId": call.id, "name": call.name, "input": orjson.loads(call.arguments)}})
    return {"output": {"message": {"role": "assistant", "content": content}},
            "stopReason": "tool_use" if any("toolUse" in block for block in content) else "end_turn",
            "usage": dict(_USAGE), "metrics": {"latencyMs": 12}}


def converse_stream(text: str | None = None, calls: Iterable[Call] = (), pieces: int = 3) -> list[dict[str, Any]]:
    final = converse_response(text, calls)
    events: list[dict[str, Any]] = [{"messageStart": {"role": "assistant"}}]
    for index, block in enumerate(final["output"]["message"]["content"]):
        if "text" in block:
            events += [{"contentBlockDelta": {"delta": {"text": piece}, "contentBlockIndex": index}}
                       for piece in split(block["text"], pieces)]
        else:
            use = block["toolUse"]
            events.append({"contentBlockStart": {"start": {"toolUse": {"toolUseId": use["toolUseId"],
                                                                       "name": use["name"]}},
                                                 "contentBlockIndex": index}})
            events += [{"contentBlockDelta": {"delta": {"toolUse": {"input": piece}}, "contentBlockIndex": index}}
                       for piece in split(orjson.dumps(use["input"]).decode(), pieces)]
        events.append({"contentBlockStop": {"contentBlockIndex": index}})
    events.append({"messageStop": {"stopReason": final["stopReason"]}})
    events.append({"metadata": {"usage": dict(_USAGE), "metrics": {"latencyMs": 12}}})
    return events


def converse_error(message: str, pointer: str) -> dict[str, Any]:
    """The 400 body Bedrock sends for a request it refuses (a ValidationException; botocore reads its
    type from the x-amzn-ErrorType header and the message from the body)."""
    return {"message": message}
