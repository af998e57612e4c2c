"""Where a Converse request goes (the model and the stream are in the path), and how to tell a
Converse response from a request: its `output` and `stopReason`.

The shapes are botocore's service model `bedrock-runtime` (data/bedrock-runtime/*/service-2.json),
which ships with botocore: ToolName, ToolUseId, ConverseRequest, ConverseStreamOutput."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote, unquote

from ...naming import NameRule
from ...rules.base import as_dict
from .. import gist

NAMES = NameRule("a-zA-Z0-9_-", 64, "^[a-zA-Z0-9_-]{1,64}$")  # ToolName
IDS = (re.compile(r"[a-zA-Z0-9_.:-]{1,64}"), 64)  # ToolUseId
JUDGED = {"request": ("messages", "toolConfig", "system"), "response": ("output", "stopReason")}
_PATH = re.compile(r"/model/([^/]+)/converse(-stream)?$")
ENDPOINT = ""  # the path names the model and the call, not a fixed endpoint
# Every event a ConverseStream answer may carry (ConverseStreamOutput), and those of them that are
# exceptions delivered inside the HTTP 200.
EVENTS = ("messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata")
EXCEPTIONS = ("internalServerException", "modelStreamErrorException", "validationException", "throttlingException",
              "serviceUnavailableException")


def is_response(payload: dict[str, Any]) -> bool:
    return "stopReason" in payload or "output" in payload


def model_of(path: str) -> str:
    """The modelId of a Converse path; botocore sends it percent-encoded (`anthropic.claude…-v1%3A0`)."""
    match = _PATH.search(path.split("?", 1)[0].rstrip("/"))
    return unquote(match.group(1)) if match else ""


# A cross-region inference profile's geography before the model id (us.anthropic.claude-…); an ARN's
# resource before it (…:inference-profile/us.anthropic.claude-…, …:foundation-model/amazon.nova-…).
_GEOGRAPHY = re.compile(r"^(?:us|us-gov|eu|apac|jp|au|ca|global)\.")


def base_model(model: str) -> str:
    """The foundation model a modelId names, lower-cased (`anthropic.claude-sonnet-4-5-…`, `amazon.nova-…`),
    whether it is the model's own id, an inference profile's or an ARN of either; an application
    inference profile's ARN names no model (its id is opaque) and gives its id, which matches no family."""
    return _GEOGRAPHY.sub("", model.rsplit("/", 1)[-1].lower())


def request_path(prefix: str, model: str, stream: bool) -> str:
    """Bedrock's path names the model and whether to stream; the client's prefix does not carry over."""
    return f"/model/{quote(model, safe='')}/converse" + ("-stream" if stream else "")


def claims(path: str) -> bool:
    return _PATH.search(path) is not None


def stream_path(path: str) -> bool:
    return path.split("?", 1)[0].rstrip("/").endswith("/converse-stream")


def stream_event(event: dict[str, Any]) -> bool:
    return isinstance(event.get("messageStart"), dict)


# Converse's request fields no other dialect has, and its content blocks: a block is an object of
# one of these keys, with no `type` (every other dialect types its blocks).
_REQUEST_FIELDS = ("inferenceConfig", "toolConfig", "additionalModelRequestFields", "guardrailConfig",
                   "promptVariables", "additionalModelResponseFieldPaths", "performanceConfig", "requestMetadata")
_BLOCKS = frozenset({"text", "image", "document", "video", "toolUse", "toolResult", "guardContent", "reasoningContent",
                     "cachePoint", "citationsContent"})


def marks(document: dict[str, Any]) -> int:
    """Converse's own request fields, its untyped content blocks, or its answer (output.message, stopReason)."""
    if any(key in document for key in _REQUEST_FIELDS) or "stopReason" in document or (
            isinstance(document.get("output"), dict) and "message" in document["output"]):
        return 2
    messages, system = document.get("messages"), document.get("system")
    blocks: list[Any] = list(system) if isinstance(system, list) else []
    for message in messages if isinstance(messages, list) else ():
        content = message.get("content") if isinstance(message, dict) else None
        blocks += content if isinstance(content, list) else ()
    return 2 if blocks and all(_untyped_block(block) for block in blocks) else 0


def _untyped_block(block: Any) -> bool:
    return isinstance(block, dict) and "type" not in block and len(block) == 1 and next(iter(block)) in _BLOCKS


def describe(event: dict[str, Any]) -> str | None:
    """One ConverseStream event: its type, its content block index, the text or input it adds."""
    if len(event) != 1:
        return None
    kind, body = next(iter(event.items()))
    if kind not in EVENTS and kind not in EXCEPTIONS:
        return None
    body = as_dict(body)
    delta = as_dict(body.get("delta"))
    added = delta.get("text", as_dict(delta.get("toolUse")).get("input"))
    return gist(kind, body.get("contentBlockIndex"), added if isinstance(added, str) else None)
