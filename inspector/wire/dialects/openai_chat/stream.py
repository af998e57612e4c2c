"""Chat Completions streams: `chat.completion.chunk` deltas joined into the `chat.completion` a client holds,
checked on the way (tool-call deltas, finish reasons).

`reassemble(events, profile, report)` is this dialect's stream builder (see `wire.streams`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...pointer import join
from ...profiles import Profile
from ...rules.arguments import decode
from ...rules.base import Report, short
from ...violations import Severity
from . import rules as openai_chat


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


def reassemble(events: list[Any], profile: Profile, report: Report) -> dict[str, Any]:
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
        # Azure OpenAI opens a stream with a chunk that carries only its prompt filter's verdict
        # (prompt_filter_results, choices: []): documented, and read past by every client.
        if not raw_choices and event_usage is None and "prompt_filter_results" not in event:
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
                _chat_delta(report, profile, state, delta, number, position, ids)
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


def _chat_delta(report: Report, profile: Profile, state: _Choice, delta: dict[str, Any], number: int, position: int,
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
            _chat_call_delta(report, profile, state, call, (number, position, slot), ids)


def _legacy_delta(state: _Choice, delta: dict[str, Any]) -> None:
    if state.function_call is None:
        state.function_call = {"name": "", "arguments": ""}
    for key in ("name", "arguments"):
        if isinstance(delta.get(key), str):
            state.function_call[key] += delta[key]


def _chat_call_delta(report: Report, profile: Profile, state: _Choice, delta: Any, slot: _Slot,
                     ids: dict[str, str]) -> None:
    if not isinstance(delta, dict):
        report.add("OC-21", _where(slot), f"tool call delta is {short(delta)}, not an object")
        return
    index = delta.get("index")
    if (index is None and profile.mistral and isinstance(delta.get("id"), str)
            and slot[2] not in state.calls):
        # Mistral's own stream sends each call whole in one delta, with no index (openinference's
        # mistralai cassettes): its place in the list is its index. OpenAI's SDK accumulator needs one.
        report.add("OC-21", join(_where(slot), "index"), "tool call delta has no index: Mistral sends each call "
                   "whole, and clients that accumulate by index (OpenAI's SDK) cannot place it", Severity.WARNING)
        index = slot[2]
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
        if "type" not in delta and not profile.mistral:  # Mistral's type defaults to function
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


def is_final(event: Any) -> bool | None:
    """Whether a client that read `event` had the whole answer (dialects.Home.is_final): `[DONE]`, or
    the chunk whose choices carry their finish_reason, the last content a client reads (one that hangs
    up then, before `[DONE]`, had it all); the usage chunk after it (choices: []) carries no content."""
    if event == "[DONE]":
        return True
    if not isinstance(event, dict):
        return False
    choices = event.get("choices")
    if isinstance(choices, list) and not choices:
        return None
    return isinstance(choices, list) and all(isinstance(c, dict) and c.get("finish_reason") is not None
                                             for c in choices)
