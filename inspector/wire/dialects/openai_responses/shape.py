"""Where a request goes, and how to tell a Responses result from a request: `object: response`, or its
`output`."""

from __future__ import annotations

from typing import Any


def is_response(payload: dict[str, Any]) -> bool:
    return payload.get("object") == "response" or "output" in payload


# The endpoint under an API prefix ("/v1", an Azure deployment's path, a gateway's).
ENDPOINT = "/responses"


def request_path(prefix: str, model: str, stream: bool) -> str:
    return prefix + ENDPOINT
