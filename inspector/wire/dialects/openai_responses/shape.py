"""How to tell a Responses result from a request: `object: response`, or its `output`."""

from __future__ import annotations

from typing import Any


def is_response(payload: dict[str, Any]) -> bool:
    return payload.get("object") == "response" or "output" in payload
