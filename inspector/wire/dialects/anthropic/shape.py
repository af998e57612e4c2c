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


def claims(path: str) -> bool:
    """The Messages API's own path; the body says whether to stream and names the model."""
    return path.endswith("/messages") and not _OPENAI_MESSAGES.search(path)


def stream_event(event: dict[str, Any]) -> bool:
    return event.get("type") == "message_start"


def marks(document: dict[str, Any]) -> int:
    """Messages beside a top-level system (Converse's is a list of untyped blocks) or holding
    Anthropic's own blocks; a message object (`type: message`)."""
    if "messages" in document:
        system = document.get("system")
        converse = isinstance(system, list) and system and not any(
            isinstance(block, dict) and "type" in block for block in system)
        return 2 if ("system" in document and not converse) or _anthropic_blocks(document["messages"]) else 0
    return 2 if document.get("type") == "message" and "content" in document and "role" in document else 0


def _anthropic_blocks(messages: Any) -> bool:
    if not isinstance(messages, list):
        return False
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") in ("tool_use", "tool_result", "thinking", "image"):
                    if block.get("type") != "image" or "source" in block:
                        return True
    return False


def describe(event: dict[str, Any]) -> str | None:
    """Text, partial-JSON and thinking deltas: the text they add to their content block."""
    block = event.get("delta")
    if not isinstance(block, dict):
        return None
    delta = next((block[key] for key in ("text", "partial_json", "thinking") if isinstance(block.get(key), str)), None)
    return gist(str(event.get("type") or ""), event.get("index", event.get("output_index")), delta)
