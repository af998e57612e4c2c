"""Gemini Live (`BidiGenerateContent` over WebSocket): the model's calls paired with the client's answers
across one socket.

Client messages: `setup` (tools), `clientContent` (turns, turnComplete), `realtimeInput`,
`toolResponse.functionResponses[{id, name, response}]`. Server messages: `setupComplete`,
`serverContent`, `toolCall.functionCalls[{id, name, args}]`, `toolCallCancellation.ids` (the Live API
reference, google-genai's LiveClientMessage / LiveServerMessage). The proto JSON parser takes each
field in camelCase or snake_case, so both are read. Findings point into the frames: /<frame>/<field>…"""

from __future__ import annotations

from typing import Any

from ...frames import Direction, Frame, documents, events
from ...pointer import join
from ...rules.base import Report, as_list, short
from ...violations import Violation


def _field(message: dict[str, Any], camel: str, snake: str) -> tuple[str, Any]:
    """The field under either spelling, and the spelling found (for the pointer)."""
    return (snake, message[snake]) if snake in message and camel not in message else (camel, message.get(camel))


def check(frames: list[Frame]) -> list[Violation]:
    """The Live pairing rules (GM-22…GM-24) over one recorded socket."""
    report = Report("socket", documents(frames))
    calls: dict[str, str] = {}  # call id -> function name, as the server asked
    pending: dict[str, str] = {}  # asked, neither answered nor cancelled
    for event in events(frames):
        body, where = event.body, join("", event.number)
        if event.direction is Direction.SERVER:
            _, tool_call = _field(body, "toolCall", "tool_call")
            if isinstance(tool_call, dict):
                for call in as_list(_field(tool_call, "functionCalls", "function_calls")[1]):
                    if isinstance(call, dict) and isinstance(call.get("id"), str):
                        calls[call["id"]] = str(call.get("name", ""))
                        pending[call["id"]] = calls[call["id"]]
            _, cancelled = _field(body, "toolCallCancellation", "tool_call_cancellation")
            if isinstance(cancelled, dict):
                for call_id in as_list(cancelled.get("ids")):
                    if isinstance(call_id, str):
                        pending.pop(call_id, None)
            continue
        key, answer = _field(body, "toolResponse", "tool_response")
        if isinstance(answer, dict):
            inner, responses = _field(answer, "functionResponses", "function_responses")
            for position, response in enumerate(as_list(responses)):
                if isinstance(response, dict):
                    _answer(report, response, join(where, key, inner, position), calls, pending)
        key, content = _field(body, "clientContent", "client_content")
        if isinstance(content, dict) and pending:
            waiting = ", ".join(f"{short(call_id)} ({name})" for call_id, name in pending.items())
            report.add("GM-23", join(where, key), f"a new client turn while call {waiting} has no toolResponse")
            pending.clear()
    return report.violations


def _answer(report: Report, response: dict[str, Any], where: str, calls: dict[str, str],
            pending: dict[str, str]) -> None:
    call_id, name = response.get("id"), response.get("name")
    if not isinstance(call_id, str) or call_id not in calls:
        report.add("GM-22", join(where, "id"), f"functionResponse id {short(call_id)} answers no toolCall of this "
                   "session")
        return
    if isinstance(name, str) and name != calls[call_id]:
        report.add("GM-24", join(where, "name"), f"functionResponse {short(call_id)} is named {short(name)}; the "
                   f"call was {short(calls[call_id])}")
    pending.pop(call_id, None)
