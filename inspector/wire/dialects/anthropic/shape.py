"""Where a request goes, and how to tell an Anthropic message from a request: `type: message`, or its
`stop_reason`."""

from __future__ import annotations

from typing import Any


def is_response(payload: dict[str, Any]) -> bool:
    return payload.get("type") == "message" or "stop_reason" in payload


# The endpoint under an API prefix ("/v1", an Azure deployment's path, a gateway's).
ENDPOINT = "/messages"


def request_path(prefix: str, model: str, stream: bool) -> str:
    return prefix + ENDPOINT
