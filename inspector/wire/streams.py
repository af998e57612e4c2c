"""Streamed responses: parse the relayed bytes into events, check them, and rebuild the final response
a client would hold, for each dialect. One pass over the events for both.

Events are the parsed `data:` payloads of an SSE body (a string where the data is not JSON, such as
Chat's "[DONE]"), or the elements of Gemini's JSON-array stream; a stream violation's pointer is
`/<event index>/…` into that list."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from .dialect import Dialect
from .profiles import Profile
from .dialects.anthropic import rules as anthropic
from .dialects.gemini import rules as gemini
from .dialects.mcp import rules as mcp
from .dialects.openai_chat import rules as openai_chat
from .rules.arguments import decode
from .pointer import join
from .rules.base import Report, as_dict, as_list, short
from .sse import parse_all
from .violations import Severity, Violation


def parse_events(body: bytes, dialect: Dialect) -> list[Any]:
    """The events of a streamed body. Gemini streams without alt=sse are one JSON array, possibly cut
    short; the whole elements before the cut are kept."""
    stripped = body.lstrip()
    if dialect is Dialect.GEMINI and stripped[:1] == b"[":
        try:
            events = orjson.loads(stripped)
            return events if isinstance(events, list) else [events]
        except orjson.JSONDecodeError:
            return _array_prefix(stripped.decode("utf-8", "replace"))
    events: list[Any] = []
    for event in parse_all(body):
        try:
            events.append(orjson.loads(event.data))
        except orjson.JSONDecodeError:
            events.append(event.data)
    return events


def _array_prefix(text: str) -> list[Any]:
    decoder = json.JSONDecoder()
    events: list[Any] = []
    position = 1
    while True:
        while position < len(text) and text[position] in " \t\r\n,":
            position += 1
        if position >= len(text) or text[position] == "]":
            return events
        try:
            value, position = decoder.raw_decode(text, position)
        except ValueError:
            return events
        events.append(value)


# The events after which a dialect's stream has nothing more to say.
_FINAL_TYPES = {
    Dialect.ANTHROPIC: frozenset({"message_stop"}),
    Dialect.OPENAI_RESPONSES: frozenset({"response.completed", "response.incomplete", "response.failed"}),
}


def ends_complete(body: bytes, dialect: Dialect | None) -> bool:
    """Whether a streamed body ends with its dialect's final event, so a client that hangs up
    after it had the whole answer. Only the last event is parsed."""
    stripped = body.rstrip()
    if dialect is Dialect.GEMINI and body.lstrip()[:1] == b"[":
        return stripped.endswith(b"]")
    if dialect is None or not body.endswith((b"\n\n", b"\r\n\r\n", b"\r\r")):
        return False  # the last event was never closed by its blank line: the client never had it
    start = max(stripped.rfind(b"\n\n"), stripped.rfind(b"\r\n\r\n"), stripped.rfind(b"\r\r"), 0)
    events = parse_events(stripped[start:] + b"\n\n", dialect)
    if not events:
        return False
    last = events[-1]
    if dialect is Dialect.OPENAI_CHAT:
        return last == "[DONE]"
    if not isinstance(last, dict):
        return False
    if dialect is Dialect.GEMINI:
        return any(isinstance(c, dict) and c.get("finishReason") for c in as_list(last.get("candidates")))
    if dialect is Dialect.MCP:  # the JSON-RPC answer to the request ends its stream
        return "id" in last and ("result" in last or "error" in last)
    return last.get("type") in _FINAL_TYPES[dialect]


def check_and_reassemble(body: bytes, dialect: Dialect, profile: Profile) -> tuple[list[Any], Report, Any | None]:
    """(events, violations found, the reassembled response or None)."""
    events = parse_events(body, dialect)
    report = Report("stream")
    builder = _BUILDERS[dialect]
    final = builder(events, profile, report) if events else None
    return events, report, final


# --- OpenAI Chat --------------------------------------------------------------------------------------


# Where a tool-call delta sits: (event number, choice position, slot in delta.tool_calls). Kept as a
# tuple on the hot path; turned into a pointer only when something is reported.
_Slot = tuple[int, int, int]


def _where(slot: _Slot) -> str:
    return join("", slot[0], "choices", slot[1], "delta", "tool_calls", slot[2])


@dataclass(slots=True)
class _Call:
    index: int
    id: Any
    name: Any
    type: Any
    parts: list[str] = field(default_factory=list)
    length: int = 0
    last: _Slot = (0, 0, 0)  # the last delta that carried arguments

    def add(self, fragment: str, slot: _Slot) -> None:
        self.parts.append(fragment)
        self.length += len(fragment)
        self.last = slot


@dataclass(slots=True)
class _Choice:
    content: list[str] = field(default_factory=list)
    refusal: list[str] = field(default_factory=list)
    calls: dict[int, _Call] = field(default_factory=dict)
    function_call: dict[str, Any] | None = None
    finish_reason: Any = None
    finish_where: str = ""
    role: str = "assistant"


def _chat(events: list[Any], profile: Profile, report: Report) -> dict[str, Any]:
    choices: dict[int, _Choice] = {}
    head: dict[str, Any] = {}
    usage = None
    ids: dict[str, str] = {}
    for number, event in enumerate(events):
        if not isinstance(event, dict):
            continue
        if len(head) < 5:
            for key in _HEAD_KEYS:
                if key in event and key not in head:
                    head[key] = event[key]
        event_usage = event.get("usage")
        if event_usage is not None:
            usage = event_usage
        raw_choices = event.get("choices")
        if not isinstance(raw_choices, list):
            continue
        if not raw_choices and event_usage is None:
            report.add("OC-23", join("", number, "choices"), "chunk with choices: [] and no usage")
        for position, raw in enumerate(raw_choices):
            if not isinstance(raw, dict):
                continue
            index = raw.get("index", position)
            state = choices.get(index) if isinstance(index, int) else choices.get(position)
            if state is None:
                state = choices[index if isinstance(index, int) else position] = _Choice()
            delta = raw.get("delta")
            if isinstance(delta, dict) and delta:
                _chat_delta(report, state, delta, number, position, ids)
            if raw.get("finish_reason") is not None:
                state.finish_reason = raw["finish_reason"]
                state.finish_where = join("", number, "choices", position, "finish_reason")
    out_choices = []
    for index in sorted(choices):
        state = choices[index]
        tool_calls = []
        for call in sorted(state.calls.values(), key=lambda c: c.index):
            arguments = "".join(call.parts)
            if call.parts:
                openai_chat.check_arguments_text(report, profile, arguments, f"{_where(call.last)}/function/arguments")
            tool_calls.append({"id": call.id, "type": call.type or "function",
                               "function": {"name": call.name, "arguments": arguments}})
        message: dict[str, Any] = {"role": state.role, "content": "".join(state.content) if state.content else None}
        if state.refusal:
            message["refusal"] = "".join(state.refusal)
        if tool_calls:
            message["tool_calls"] = tool_calls
        if state.function_call is not None:
            message["function_call"] = state.function_call
        if state.finish_reason is None:
            report.add("OC-22", "", f"choice {index}: the stream ended without a finish_reason")
        else:
            openai_chat.check_finish_reason(report, state.finish_reason, len(tool_calls),
                                            state.function_call is not None, state.finish_where)
        out_choices.append({"index": index, "message": message, "finish_reason": state.finish_reason})
    result: dict[str, Any] = {"id": head.get("id"), "object": "chat.completion", "created": head.get("created"),
                              "model": head.get("model"), "choices": out_choices}
    for key in ("system_fingerprint", "service_tier"):
        if key in head:
            result[key] = head[key]
    if usage is not None:
        result["usage"] = usage
    return result


_HEAD_KEYS = ("id", "created", "model", "system_fingerprint", "service_tier")


def _chat_delta(report: Report, state: _Choice, delta: dict[str, Any], number: int, position: int,
                ids: dict[str, str]) -> None:
    if isinstance(delta.get("role"), str):
        state.role = delta["role"]
    if isinstance(delta.get("content"), str):
        state.content.append(delta["content"])
    if isinstance(delta.get("refusal"), str):
        state.refusal.append(delta["refusal"])
    if isinstance(delta.get("function_call"), dict):
        _legacy_delta(state, delta["function_call"])
    calls = delta.get("tool_calls")
    if isinstance(calls, list):
        for slot, call in enumerate(calls):
            _chat_call_delta(report, state, call, (number, position, slot), ids)


def _legacy_delta(state: _Choice, delta: dict[str, Any]) -> None:
    if state.function_call is None:
        state.function_call = {"name": "", "arguments": ""}
    for key in ("name", "arguments"):
        if isinstance(delta.get(key), str):
            state.function_call[key] += delta[key]


def _chat_call_delta(report: Report, state: _Choice, delta: Any, slot: _Slot, ids: dict[str, str]) -> None:
    if not isinstance(delta, dict):
        report.add("OC-21", _where(slot), f"tool call delta is {short(delta)}, not an object")
        return
    index = delta.get("index")
    if not isinstance(index, int) or isinstance(index, bool):
        report.add("OC-21", join(_where(slot), "index"), "tool call delta has no index (the only required field)")
        return
    if index < 0:
        report.add("XL-12", join(_where(slot), "index"), f"tool call delta has index {index}")
        return
    function = delta.get("function")
    if not isinstance(function, dict):
        function = {}
    call_id, name = delta.get("id"), function.get("name")
    fragment = function.get("arguments")
    call = state.calls.get(index)
    if call is None:
        where = _where(slot)
        if not isinstance(call_id, str) or not call_id:
            report.add("OC-21", join(where, "id"), f"first delta of call index {index} has no id: the call "
                                                   "cannot be routed")
        elif call_id in ids:
            report.add("XL-04", join(where, "id"), f"call id {short(call_id)} is reused (first at {ids[call_id]})")
        else:
            ids[call_id] = join(where, "id")
        if not isinstance(name, str) or not name:
            report.add("OC-21", join(where, "function", "name"), f"first delta of call index {index} has no "
                                                                 "function.name")
        if "type" not in delta:
            report.add("OC-21", join(where, "type"), f"first delta of call index {index} has no type",
                       Severity.WARNING)
        call = state.calls[index] = _Call(index, call_id, name, delta.get("type"))
    else:
        if call_id is not None:
            same = call_id == call.id
            report.add("OC-21", f"{_where(slot)}/id", f"call index {index} repeats its id on a later delta: "
                       "accumulators concatenate it" if same else
                       f"call index {index} gets a second id {short(call_id)}: two calls share one index")
        if name is not None and name != "":
            report.add("OC-21", f"{_where(slot)}/function/name", f"call index {index} repeats function.name on a "
                                                                "later delta: accumulators concatenate it")
    if isinstance(fragment, str) and fragment:
        if call.length and len(fragment) == call.length and fragment == "".join(call.parts) and \
                decode(fragment).ok:
            report.add("XL-12", f"{_where(slot)}/function/arguments", f"call index {index} repeats its whole "
                                                                     "arguments in a summary chunk: they count twice")
        call.add(fragment, slot)
    elif fragment is not None and not isinstance(fragment, str):
        report.add("OC-21", f"{_where(slot)}/function/arguments", "arguments fragment is not a string")


# --- OpenAI Responses ---------------------------------------------------------------------------------

_ARGUMENT_EVENTS = {
    "response.function_call_arguments": "arguments",
    "response.custom_tool_call_input": "input",
    "response.mcp_call_arguments": "arguments",
}


def _responses(events: list[Any], profile: Profile, report: Report) -> dict[str, Any] | None:
    items: dict[str, dict[str, Any]] = {}  # item id -> accumulated item
    by_call_id: dict[str, str] = {}
    deltas: dict[str, list[str]] = {}
    outputs: dict[int, dict[str, Any]] = {}
    done_where: dict[str, str] = {}
    final: dict[str, Any] | None = None
    final_where = ""
    last_sequence = None
    for number, event in enumerate(events):
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if not isinstance(kind, str):
            continue
        sequence = event.get("sequence_number")
        if isinstance(sequence, int):
            if last_sequence is not None and sequence <= last_sequence:
                report.add("OR-10", join("", number, "sequence_number"),
                           f"sequence_number {sequence} does not increase (previous {last_sequence})", Severity.WARNING)
            last_sequence = sequence
        if kind in ("response.output_item.added", "response.output_item.done"):
            item = event.get("item")
            if not isinstance(item, dict):
                continue
            item_id = item.get("id")
            if kind.endswith("added"):
                if isinstance(item_id, str):
                    items[item_id] = dict(item)
                    deltas[item_id] = []
                    if isinstance(item.get("call_id"), str):
                        by_call_id[item["call_id"]] = item_id
            else:
                if isinstance(item_id, str) and item_id in items:
                    _compare(report, items[item_id], item, deltas.get(item_id), join("", number, "item"))
                if isinstance(event.get("output_index"), int):
                    outputs[event["output_index"]] = item
                if item.get("type") == "function_call":
                    done_where.setdefault(str(item_id), join("", number, "item", "arguments"))
            continue
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            if isinstance(event.get("response"), dict):
                final, final_where = event["response"], join("", number, "response")
            continue
        stem, _, phase = kind.rpartition(".")
        if stem not in _ARGUMENT_EVENTS or phase not in ("delta", "done"):
            continue
        item_id = event.get("item_id")
        where = join("", number)
        if not isinstance(item_id, str) or item_id not in items:
            keyed_by_call = isinstance(item_id, str) and item_id in by_call_id
            report.add("OR-10", join(where, "item_id"),
                       f"{kind} is keyed by call_id {short(item_id)}; deltas are keyed by the item id" if keyed_by_call
                       else f"{kind} names item {short(item_id)}, which no output_item.added opened")
            if not keyed_by_call:
                continue
            item_id = by_call_id[item_id]
        if phase == "delta":
            if isinstance(event.get("delta"), str):
                deltas[item_id].append(event["delta"])
        else:
            field_name = _ARGUMENT_EVENTS[stem]
            text = event.get(field_name)
            joined = "".join(deltas[item_id])
            if deltas[item_id] and isinstance(text, str) and text != joined:
                report.add("OR-10", join(where, field_name), f"done {field_name} differ from the concatenated deltas "
                                                             f"({short(text, 30)} vs {short(joined, 30)})")
            if isinstance(text, str):
                items[item_id][field_name] = text
                deltas[item_id] = [text]
                done_where[item_id] = join(where, field_name)
    if final is not None:
        for position, item in enumerate(as_list(final.get("output"))):
            if isinstance(item, dict) and isinstance(item.get("id"), str) and item["id"] in items:
                _compare(report, items[item["id"]], item, deltas.get(item["id"]), join(final_where, "output", position))
    for item_id, item in items.items():
        if item.get("type") == "function_call":
            arguments = "".join(deltas.get(item_id, [])) if deltas.get(item_id) else item.get("arguments", "")
            if isinstance(arguments, str) and arguments:
                openai_chat.check_arguments_text(report, profile, arguments, done_where.get(item_id, ""), rule="XL-08")
    if final is not None:
        return final
    if not outputs and not items:
        return None
    output = [outputs[index] for index in sorted(outputs)] or list(items.values())
    return {"object": "response", "status": "incomplete", "output": output}


def _compare(report: Report, started: dict[str, Any], item: dict[str, Any], parts: list[str] | None,
             where: str) -> None:
    if item.get("type") != "function_call" or not parts:
        return
    joined = "".join(parts)
    if isinstance(item.get("arguments"), str) and item["arguments"] != joined:
        report.add("OR-10", join(where, "arguments"), "final arguments differ from the streamed ones "
                                                      f"({short(item['arguments'], 30)} vs {short(joined, 30)})")
    if started.get("call_id") is not None and item.get("call_id") != started.get("call_id"):
        report.add("OR-10", join(where, "call_id"), "call_id changed between output_item.added and the end")


# --- Anthropic ----------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Block:
    block: dict[str, Any]
    where: str
    parts: list[str] = field(default_factory=list)
    open: bool = True


def _anthropic(events: list[Any], profile: Profile, report: Report) -> dict[str, Any] | None:
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
            _finish_block(Report() if errored else report, profile, state, state.where, ids)
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
            report.add("AN-13", where, f"joined partial_json of block {block.get('id', '?')} is {decoded.describe()}: "
                                       f"{short(text)}")
            block["input"] = text
    elif not isinstance(block.get("input"), dict):
        block["input"] = {}
    if block.get("type") == "tool_use":
        inner = Report("stream")
        anthropic.check_tool_use(inner, profile, block, state.where + "/content_block", ids)
        report.violations.extend(v for v in inner.violations if not v.pointer.endswith("/input"))


# --- Gemini -------------------------------------------------------------------------------------------


def _gemini(events: list[Any], profile: Profile, report: Report) -> dict[str, Any] | None:
    candidates: dict[int, dict[str, Any]] = {}
    result: dict[str, Any] = {}
    for number, event in enumerate(events):
        if not isinstance(event, dict):
            continue
        for key in ("usageMetadata", "modelVersion", "responseId", "promptFeedback"):
            if key in event:
                result[key] = event[key]
        for position, candidate in enumerate(as_list(event.get("candidates"))):
            if not isinstance(candidate, dict):
                continue
            index = candidate.get("index", position)
            merged = candidates.setdefault(index if isinstance(index, int) else position,
                                           {"content": {"role": "model", "parts": []}})
            for key, value in candidate.items():
                if key not in ("content", "index"):
                    merged[key] = value
            parts = as_list(as_dict(candidate.get("content")).get("parts"))
            base = join("", number, "candidates", position, "content", "parts")
            gemini.check_candidate_parts(report, parts, base)
            for slot, part in enumerate(parts):
                if not isinstance(part, dict):
                    continue
                key, call = gemini.field(part, "functionCall")
                if isinstance(call, dict) and not profile.vertex:
                    for streaming in ("partialArgs", "willContinue", "partial_args", "will_continue"):
                        if streaming in call:
                            report.add("GM-15", join(base, slot, key, streaming), f"{streaming} is Vertex-only; "
                                                                                  "the Gemini API sends whole calls")
                _merge_part(merged["content"]["parts"], part)
    if not candidates and not result:
        return None
    result["candidates"] = [{"index": index, **candidates[index]} for index in sorted(candidates)]
    return result


def _merge_part(parts: list[dict[str, Any]], part: dict[str, Any]) -> None:
    """Adjacent text chunks of one kind (thought or not) join, as the SDK's `.text` reads them."""
    if parts and set(part) <= {"text", "thought"} and isinstance(part.get("text"), str):
        last = parts[-1]
        if set(last) <= {"text", "thought"} and isinstance(last.get("text"), str) and \
                bool(last.get("thought")) == bool(part.get("thought")):
            parts[-1] = {**last, "text": last["text"] + part["text"]}
            return
    parts.append(part)


# --- MCP ----------------------------------------------------------------------------------------------


def _mcp(events: list[Any], profile: Profile, report: Report) -> Any | None:
    responses = []
    for number, event in enumerate(events):
        inner = Report("stream")
        mcp.check_response(event, profile, inner)
        report.violations.extend(_prefixed(v, join("", number)) for v in inner.violations)
        if isinstance(event, dict) and ("result" in event or "error" in event):
            responses.append(event)
    if not responses:
        return None
    return responses[0] if len(responses) == 1 else responses


def _prefixed(violation: Violation, prefix: str) -> Violation:
    return replace(violation, pointer=prefix + violation.pointer)


_BUILDERS = {
    Dialect.OPENAI_CHAT: _chat,
    Dialect.OPENAI_RESPONSES: _responses,
    Dialect.ANTHROPIC: _anthropic,
    Dialect.GEMINI: _gemini,
    Dialect.MCP: _mcp,
}
