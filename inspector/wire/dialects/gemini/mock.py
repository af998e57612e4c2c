"""A fake model's answer as Gemini writes it: a `GenerateContentResponse`, or its stream's chunks."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from ...canned import Call, split


def gemini_response(text: str | None = None, calls: Iterable[Call] = (), model: str = "gemini-2.5-flash") -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if text is not None:
        parts.append({"text": text})
    for call in calls:
        parts.append({"functionCall": {"name": call.name, "args": orjson.loads(call.arguments)}})
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": model,
    }


def gemini_stream(text: str | None = None, calls: Iterable[Call] = (), model: str = "gemini-2.5-flash",
                  pieces: int = 3) -> list[dict[str, Any]]:
    """Gemini streams whole candidates: text in pieces, each function call in one part."""
    events = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": p}]}, "index": 0}], "modelVersion": model}
        for p in split(text or "", pieces)
    ]
    last = gemini_response(None, calls, model)
    events.append(last)
    return events


def gemini_error(message: str, pointer: str) -> dict[str, Any]:
    """The 400 body Google's API sends for a request it refuses."""
    return {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}
