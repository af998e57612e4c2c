"""Where a request goes, and how to tell a Chat response from a request: `choices` without `messages`."""

from __future__ import annotations

import re
from typing import Any

from ...naming import NameRule
from ...rules.base import as_dict, as_list
from .. import gist

# OpenAI's name pattern, also Responses' (OC-02 in docs/rules.md).
NAMES = NameRule("a-zA-Z0-9_-", 64, "^[a-zA-Z0-9_-]+$")
# Chat's 40 is the strictest endpoint seen (OC-16).
IDS = (re.compile(r"[\x21-\x7e]{1,40}"), 40)
JUDGED = {"request": ("messages", "tools", "functions", "tool_choice", "function_call"), "response": ("choices",)}


# The schema sent for a function that takes no argument: OpenAI refuses an object schema without
# `properties` at the root (OC-05), so `{}` is spelled out.
NO_ARGUMENTS = {"type": "object", "properties": {}}


def lacks_root_properties(parameters: dict[str, Any]) -> bool:
    """Whether OpenAI answers 400 "In context=(), object schema missing properties" to these function
    parameters: an object root with no `properties`, and nothing (a `$ref`, a combinator) that could
    supply them. Only the root: nested free-form objects are accepted. A genai root ("OBJECT") is the
    schema walk's finding, whose fix converts the schema first."""
    return (parameters.get("type") == "object" and "properties" not in parameters
            and not any(key in parameters for key in ("$ref", "anyOf", "oneOf", "allOf")))


def with_root_properties(parameters: dict[str, Any]) -> dict[str, Any]:
    """The parameters as OpenAI takes them: an empty `properties` added where the root lacks one."""
    return {**parameters, "properties": {}} if lacks_root_properties(parameters) else parameters


def is_response(payload: dict[str, Any]) -> bool:
    return "choices" in payload and "messages" not in payload


# The endpoint under an API prefix ("/v1", an Azure deployment's path, a gateway's).
ENDPOINT = "/chat/completions"


def request_path(prefix: str, model: str, stream: bool) -> str:
    return prefix + ENDPOINT


def claims(path: str) -> bool:
    return path.endswith("/chat/completions")


# Azure OpenAI names the model by its deployment, in the path; a body's `model` comes first.
_DEPLOYMENT = re.compile(r"/openai/deployments/([^/]+)/")


def deployment(path: str) -> str:
    found = _DEPLOYMENT.search(path.split("?", 1)[0])
    return found.group(1) if found else ""


def stream_event(event: dict[str, Any]) -> bool:
    return event.get("object") == "chat.completion.chunk"


def marks(document: dict[str, Any]) -> int:
    """A chat.completion (or its chunk), or choices; messages or legacy functions fit too, but
    other dialects also have messages: only a surer claim wins over them."""
    if document.get("object") in ("chat.completion", "chat.completion.chunk") or "choices" in document:
        return 2
    # Messages with roles: a transcript of another kind (the Claude Agent SDK's, `direction` and
    # `message`) has a messages list too.
    messages = document.get("messages")
    entries = [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []
    roles = "messages" in document and (not entries or any("role" in m for m in entries))
    return 1 if roles or "functions" in document else 0


def describe(event: dict[str, Any]) -> str | None:
    """A chunk has no type; "chunk" names it, with the finish reason when it has one."""
    if not isinstance(event.get("choices"), list) or not event["choices"]:
        return None
    choice = event["choices"][0] if isinstance(event["choices"][0], dict) else {}
    kind = "chunk" + (f" finish={choice['finish_reason']}" if choice.get("finish_reason") else "")
    body = as_dict(choice.get("delta"))
    calls = as_list(body.get("tool_calls"))
    call = as_dict(calls[0]) if calls else {}
    function = as_dict(call.get("function"))
    delta = body.get("content") if isinstance(body.get("content"), str) else function.get("arguments")
    return gist(kind, call.get("index"), delta)

