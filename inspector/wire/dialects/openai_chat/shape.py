"""Where a request goes, and how to tell a Chat response from a request: `choices` without `messages`."""

from __future__ import annotations

from typing import Any


def is_response(payload: dict[str, Any]) -> bool:
    return "choices" in payload and "messages" not in payload


# The endpoint under an API prefix ("/v1", an Azure deployment's path, a gateway's).
ENDPOINT = "/chat/completions"


def request_path(prefix: str, model: str, stream: bool) -> str:
    return prefix + ENDPOINT
