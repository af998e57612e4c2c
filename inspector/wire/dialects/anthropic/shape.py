"""How to tell an Anthropic message from a request: `type: message`, or its `stop_reason`."""

from __future__ import annotations

from typing import Any


def is_response(payload: dict[str, Any]) -> bool:
    return payload.get("type") == "message" or "stop_reason" in payload
