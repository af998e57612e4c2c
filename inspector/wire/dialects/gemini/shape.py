"""Where a request goes, and how to tell a Gemini response from a request: its `candidates`."""

from __future__ import annotations

import re
from typing import Any

from ...profiles import Profile
from ...naming import NameRule
from ...profiles import inside
from ...rules.base import as_dict, as_list
from .. import gist

# Gemini API error text says 64, the 2026 SDK docstring 128: 64 (GM-02 in docs/rules.md).
NAMES = NameRule("a-zA-Z0-9_.:-", 64, "start with a letter or _, then a-z A-Z 0-9 _ . : -", first="a-zA-Z_")
IDS = (re.compile(r"[\x21-\x7e]{1,64}"), 64)  # free-form and optional
JUDGED = {"request": ("contents", "tools", "toolConfig", "tool_config", "systemInstruction", "system_instruction"),
          "response": ("candidates",)}
_PATH = re.compile(r":(stream)?[gG]enerateContent$")


# Gemini Code Assist's envelope (providers.py): the request under "request", the answer and each
# streamed chunk under "response". The flow list, the chunk view and the hang-up judge read a flow
# without its profile, so they look inside it wherever a document wears it.
ENVELOPE = ("request", "response")


def unwrapped(payload: Any, kind: str) -> Any:
    return inside(payload, ENVELOPE, kind)[0]


def is_response(payload: dict[str, Any]) -> bool:
    return "candidates" in unwrapped(payload, "response")


ENDPOINT = ""  # the path names the model and the call, not a fixed endpoint


def request_path(prefix: str, model: str, stream: bool) -> str:
    """Gemini's path names the model and whether to stream; the client's prefix does not carry over."""
    return f"/v1beta/models/{model}:streamGenerateContent?alt=sse" if stream else f"/v1beta/models/{model}:generateContent"


# The version segment before the resource the call names: /v1beta/models/…, /v1/projects/…/publishers/…,
# Vertex express mode's /v1/publishers/…, tuned models; a relay's own prefix before it is skipped.
_VERSION = re.compile(r"/(v1(?:alpha|beta1?)?)/(?:models|tunedModels|projects|publishers)/")


def api_version(path: str) -> str:
    """The API version the path names ("v1", "v1beta", "v1alpha", Vertex AI's "v1beta1"), or ""."""
    found = _VERSION.findall(path.split("?", 1)[0])
    return found[-1] if found else ""


def claims(path: str) -> bool:
    return _PATH.search(path) is not None


def stream_path(path: str) -> bool:
    return ":streamGenerateContent" in path.split("?", 1)[0]


def stream_event(event: dict[str, Any]) -> bool:
    return "candidates" in unwrapped(event, "response")


def marks(document: dict[str, Any]) -> int:
    """contents, candidates, or a tool of functionDeclarations."""
    tools = document.get("tools")
    return 2 if "contents" in document or "candidates" in document or (
        isinstance(tools, list) and any(isinstance(t, dict) and "functionDeclarations" in t for t in tools)) else 0


def describe(event: dict[str, Any]) -> str | None:
    """A candidate: the text its parts add."""
    event = unwrapped(event, "response")
    if not isinstance(event.get("candidates"), list) or not event["candidates"]:
        return None
    content = as_dict(as_dict(event["candidates"][0]).get("content"))
    parts = as_list(content.get("parts"))
    delta = "".join(part["text"] for part in parts if isinstance(part, dict) and isinstance(part.get("text"), str))
    return gist("candidate", event.get("index", event.get("output_index")), delta or None)


def api(profile: Profile) -> str:
    """Which Google API answers: the vendored types serve both, and each takes fields the other
    refuses (the spec's `only`, from the SDK's own words)."""
    return "Vertex AI" if profile.vertex else "the Gemini API"
