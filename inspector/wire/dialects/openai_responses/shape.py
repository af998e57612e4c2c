"""Where a request goes, and how to tell a Responses result from a request: `object: response`, or its
`output`."""

from __future__ import annotations

import re
from typing import Any

from .. import gist

IDS = (re.compile(r"[\x21-\x7e]{1,64}"), 64)
JUDGED = {"request": ("input", "tools", "tool_choice", "previous_response_id", "prompt", "conversation", "model",
                      "instructions"),
          "response": ("output",)}


def is_response(payload: dict[str, Any]) -> bool:
    return payload.get("object") == "response" or "output" in payload


# The endpoint under an API prefix ("/v1", an Azure deployment's path, a gateway's).
ENDPOINT = "/responses"


def request_path(prefix: str, model: str, stream: bool) -> str:
    return prefix + ENDPOINT


def claims(path: str) -> bool:
    return path.endswith("/responses")


def stream_event(event: dict[str, Any]) -> bool:
    kind = event.get("type")
    return isinstance(kind, str) and kind.startswith("response.")


def marks(document: dict[str, Any]) -> int:
    """A response object, input, an output list, or history kept server-side; a stored prompt
    template (an object: the legacy completions API's prompt is text) stands for input."""
    return 2 if document.get("object") == "response" or isinstance(document.get("output"), list) or any(
        key in document for key in ("input", "previous_response_id", "conversation")) \
        or isinstance(document.get("prompt"), dict) else 0


def describe(event: dict[str, Any]) -> str | None:
    """Output-text and function-call-argument deltas: the text they add."""
    if not isinstance(event.get("delta"), str):
        return None
    return gist(str(event.get("type") or ""), event.get("index", event.get("output_index")), event["delta"])
