"""Where a request goes, and how to tell an Anthropic message from a request: `type: message`, or its
`stop_reason`."""

from __future__ import annotations

import re
from typing import Any

from ...naming import NameRule
from .. import gist

# The API accepts up to 128 since mid-2025 (AN-02 in docs/rules.md).
NAMES = NameRule("a-zA-Z0-9_-", 128, "^[a-zA-Z0-9_-]{1,128}$")
IDS = (re.compile(r"[A-Za-z0-9_-]{1,64}"), 64)  # a tool_use id
JUDGED = {"request": ("messages", "tools", "tool_choice", "system"), "response": ("content",)}
# OpenAI's message sub-collections (Assistants threads, stored chat completions) end like Anthropic's path.
_OPENAI_MESSAGES = re.compile(r"/(threads|chat/completions)/[^/]+/messages$")


def is_response(payload: dict[str, Any]) -> bool:
    return payload.get("type") == "message" or "stop_reason" in payload


# The endpoint under an API prefix ("/v1", an Azure deployment's path, a gateway's).
ENDPOINT = "/messages"


def request_path(prefix: str, model: str, stream: bool) -> str:
    return prefix + ENDPOINT


# Claude on Vertex AI: the model and whether to stream are in the path, not the body
# (/v1/projects/{p}/locations/{l}/publishers/anthropic/models/{m}:rawPredict, :streamRawPredict).
_VERTEX = re.compile(r"/publishers/anthropic/models/([^/:]+):(stream)?[rR]awPredict$")


def claims(path: str) -> bool:
    return (path.endswith("/messages") and not _OPENAI_MESSAGES.search(path)) or _VERTEX.search(path) is not None


def stream_path(path: str) -> bool:
    """Claude on Vertex streams when the path says so (:streamRawPredict); the Messages API when the
    body does."""
    found = _VERTEX.search(path.split("?", 1)[0])
    return found is not None and found.group(2) is not None


def model_of(path: str) -> str:
    found = _VERTEX.search(path.split("?", 1)[0])
    return found.group(1) if found else ""


def stream_event(event: dict[str, Any]) -> bool:
    return event.get("type") == "message_start"


def describe(event: dict[str, Any]) -> str | None:
    """Text, partial-JSON and thinking deltas: the text they add to their content block."""
    block = event.get("delta")
    if not isinstance(block, dict):
        return None
    delta = next((block[key] for key in ("text", "partial_json", "thinking") if isinstance(block.get(key), str)), None)
    return gist(str(event.get("type") or ""), event.get("index", event.get("output_index")), delta)
