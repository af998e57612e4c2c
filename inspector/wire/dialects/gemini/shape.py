"""Where a request goes, and how to tell a Gemini response from a request: its `candidates`."""

from __future__ import annotations

from typing import Any


def is_response(payload: dict[str, Any]) -> bool:
    return "candidates" in payload


ENDPOINT = ""  # the path names the model and the call, not a fixed endpoint


def request_path(prefix: str, model: str, stream: bool) -> str:
    """Gemini's path names the model and whether to stream; the client's prefix does not carry over."""
    return f"/v1beta/models/{model}:streamGenerateContent?alt=sse" if stream else f"/v1beta/models/{model}:generateContent"
