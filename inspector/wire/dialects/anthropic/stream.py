"""Anthropic streams: content blocks and their deltas joined into the final `message`, checked on the way
(AN-13); a documented mid-stream `event: error` ends the stream as the provider's verdict.

`reassemble(events, profile, report)` is this dialect's stream builder (see `wire.streams`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...pointer import join
from ...profiles import Profile
from ...rules.arguments import decode
from ...rules.base import Report, as_dict, as_list, short
from ...violations import Severity
from . import rules as anthropic


@dataclass(slots=True)
class _Block:
    block: dict[str, Any]
    where: str
    parts: list[str] = field(default_factory=list)
    open: bool = True


def reassemble(events: list[Any], profile: Profile, report: Report) -> dict[str, Any] | None:
    message: dict[str, Any] | None = None
    blocks: dict[int, _Block] = {}
    stop_where = ""
    ids: dict[str, str] = {}
    errored = False
    for number, event in enumerate(events):
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        where = join("", number)
        if kind == "message_start":
            anthropic.check_usage(report, as_dict(event.get("message")), join(where, "message", "usage"))
            message = dict(as_dict(event.get("message")))
            message["content"] = []
            continue
        if kind == "message_delta":
            delta = as_dict(event.get("delta"))
            if message is None:
                message = {"type": "message", "role": "assistant", "content": []}
            for key in ("stop_reason", "stop_sequence"):
                if key in delta:
                    message[key] = delta[key]
                    stop_where = join(where, "delta", "stop_reason") if key == "stop_reason" else stop_where
            anthropic.check_usage(report, event, join(where, "usage"))
            if isinstance(event.get("usage"), dict):
                message["usage"] = {**as_dict(message.get("usage")), **event["usage"]}
            continue
        if kind == "error":
            # The documented mid-stream failure (e.g. overloaded_error): the provider ends the stream
            # here, so open blocks and the missing stop_reason are its verdict, not a broken stream.
            errored = True
            continue
        if kind not in ("content_block_start", "content_block_delta", "content_block_stop"):
            continue
        index = event.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            report.add("AN-13", join(where, "index"), f"{kind} has no content-block index")
            continue
        state = blocks.get(index)
        if kind == "content_block_start":
            if state is not None:
                report.add("AN-13", join(where, "index"), f"content block {index} is started twice")
            block = dict(as_dict(event.get("content_block")))
            blocks[index] = _Block(block, where)
            continue
        if state is None or not state.open:
            report.add("AN-13", join(where, "index"), f"{kind} for content block {index}, which is "
                       + ("not open" if state is not None else "never started"))
            continue
        if kind == "content_block_stop":
            state.open = False
            _finish_block(report, profile, state, where, ids)
            continue
        delta = as_dict(event.get("delta"))
        delta_type = delta.get("type")
        block_type = state.block.get("type")
        if delta_type == "input_json_delta":
            if block_type not in ("tool_use", "server_tool_use", "mcp_tool_use"):
                report.add("AN-13", join(where, "delta", "type"), f"input_json_delta for a {short(block_type)} block")
            elif isinstance(delta.get("partial_json"), str):
                state.parts.append(delta["partial_json"])
        elif delta_type == "text_delta":
            if block_type != "text":
                report.add("AN-13", join(where, "delta", "type"), f"text_delta for a {short(block_type)} block")
            elif isinstance(delta.get("text"), str):
                state.block["text"] = str(state.block.get("text", "")) + delta["text"]
        elif delta_type == "thinking_delta" and isinstance(delta.get("thinking"), str):
            state.block["thinking"] = str(state.block.get("thinking", "")) + delta["thinking"]
        elif delta_type == "signature_delta" and isinstance(delta.get("signature"), str):
            state.block["signature"] = str(state.block.get("signature", "")) + delta["signature"]
        elif delta_type == "citations_delta" and "citation" in delta:
            state.block["citations"] = [*as_list(state.block.get("citations")), delta["citation"]]
    for index, state in blocks.items():
        if state.open:
            if not errored:
                report.add("AN-13", state.where, f"content block {index} is never stopped")
            _finish_block(Report(response=True) if errored else report, profile, state, state.where, ids)
    if message is None and not blocks:
        return None
    if message is None:
        message = {"type": "message", "role": "assistant"}
    message["content"] = [blocks[index].block for index in sorted(blocks)]
    calls = sum(1 for state in blocks.values() if state.block.get("type") == "tool_use")
    if message.get("stop_reason") is None:
        if not errored:
            report.add("AN-13", "", "the stream ended without a stop_reason", Severity.WARNING)
    else:
        anthropic.check_stop_reason(report, message["stop_reason"], calls, stop_where)
    return message


def _finish_block(report: Report, profile: Profile, state: _Block, where: str, ids: dict[str, str]) -> None:
    block = state.block
    if block.get("type") not in ("tool_use", "server_tool_use", "mcp_tool_use"):
        return
    # Only deltas that carried text count: a tool without arguments streams partial_json "", and
    # the SDK then keeps the input {} of content_block_start.
    text = "".join(state.parts)
    if text:
        decoded = decode(text)
        if decoded.ok:
            block["input"] = decoded.value
        else:
            message = f"joined partial_json of block {block.get('id', '?')} is {decoded.describe()}: {short(text)}"
            if anthropic.FINE_GRAINED_TOOL_STREAMING in profile.betas:
                report.add("AN-13", where, message, Severity.WARNING, why=_UNVALIDATED, hint=_UNVALIDATED_FIX)
            else:
                report.add("AN-13", where, message)
            block["input"] = text
    elif not isinstance(block.get("input"), dict):
        block["input"] = {}
    if block.get("type") == "tool_use":
        inner = Report("stream", report.document, response=True)
        anthropic.check_tool_use(inner, profile, block, state.where + "/content_block", ids)
        report.violations.extend(v for v in inner.violations if not v.pointer.endswith("/input"))


_UNVALIDATED = (f"With fine-grained tool streaming (anthropic-beta: {anthropic.FINE_GRAINED_TOOL_STREAMING}) Anthropic "
                "streams tool input without buffering or validating it, and documents that the joined input may be "
                "invalid or partial JSON, above all when the turn stops at max_tokens: the client cannot run this "
                "call as it is.")
_UNVALIDATED_FIX = ("Answer the call with an is_error tool_result that quotes the input inside a JSON object, or retry "
                    "the turn with a larger max_tokens.")


def is_final(event: Any) -> bool | None:
    """Whether a client that read `event` had the whole answer (dialects.Home.is_final): the
    message_delta that carries stop_reason is the last content event, and clients such as LiteLLM's
    hang up after it, before message_stop (issue 18)."""
    if not isinstance(event, dict):
        return False
    kind = event.get("type")
    if kind == "ping":
        return None
    return kind == "message_stop" or (kind == "message_delta" and as_dict(event.get("delta")).get("stop_reason")
                                      is not None)
