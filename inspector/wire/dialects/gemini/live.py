"""Gemini Live (`BidiGenerateContent` over WebSocket): the model's calls paired with the client's answers
across one socket.

Client messages: `setup` (tools), `clientContent` (turns, turnComplete), `realtimeInput`,
`toolResponse.functionResponses[{id, name, response}]`. Server messages: `setupComplete`,
`serverContent`, `toolCall.functionCalls[{id, name, args}]`, `toolCallCancellation.ids` (the Live API
reference, google-genai's LiveClientMessage / LiveServerMessage). The proto JSON parser takes each
field in camelCase or snake_case, so both are read. Findings point into the frames: /<frame>/<field>…"""

from __future__ import annotations

from typing import Any

import re

from ...frames import Described, Direction, Frame, audio_note, base64_size, documents, events
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


_RATE = re.compile(r"rate=(\d+)")
# The rate of 16-bit PCM when its MIME type names none: Live takes 16 kHz in and speaks 24 kHz out.
_DEFAULT_RATE = {Direction.CLIENT: 16000, Direction.SERVER: 24000}


def _blobs(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The inline audio blobs of a message: the model's turn's parts (server), realtimeInput's
    audio and media chunks (client)."""
    found: list[dict[str, Any]] = []
    _, content = _field(body, "serverContent", "server_content")
    if isinstance(content, dict):
        _, turn = _field(content, "modelTurn", "model_turn")
        for part in as_list(turn.get("parts")) if isinstance(turn, dict) else []:
            blob = _field(part, "inlineData", "inline_data")[1] if isinstance(part, dict) else None
            if isinstance(blob, dict):
                found.append(blob)
    _, live_input = _field(body, "realtimeInput", "realtime_input")
    if isinstance(live_input, dict):
        found += [blob for blob in [live_input.get("audio"), *as_list(_field(live_input, "mediaChunks",
                                                                             "media_chunks")[1])]
                  if isinstance(blob, dict)]
    return [blob for blob in found if isinstance(blob.get("data"), str)
            and str(blob.get("mimeType", blob.get("mime_type", ""))).startswith("audio/")]


def _without_audio(value: Any, blobs: list[dict[str, Any]]) -> Any:
    """`value` with each of `blobs` holding its size in place of its data."""
    if any(value is blob for blob in blobs):
        return {**value, "data": audio_note(base64_size(value["data"]))}
    if isinstance(value, dict):
        return {key: _without_audio(item, blobs) for key, item in value.items()}
    if isinstance(value, list):
        return [_without_audio(item, blobs) for item in value]
    return value


def describe(frames: list[Frame]) -> list[Described]:
    """Each frame as a frame view lists it: its message kind (its one top-level field), the text the
    model streams, the call ids it asks or answers, its audio summarised."""
    found = []
    for frame, body in zip(frames, documents(frames), strict=True):
        if body is None:
            found.append(Described())
            continue
        kind = next(iter(body), "")
        texts: list[str] = []
        _, content = _field(body, "serverContent", "server_content")
        if isinstance(content, dict):
            _, turn = _field(content, "modelTurn", "model_turn")
            texts = [part["text"] for part in (as_list(turn.get("parts")) if isinstance(turn, dict) else [])
                     if isinstance(part, dict) and isinstance(part.get("text"), str)]
        ids: list[str] = []
        for outer, inner in (("toolCall", "functionCalls"), ("toolResponse", "functionResponses")):
            holder = _field(body, outer, re.sub("([A-Z])", r"_\1", outer).lower())[1]
            calls = _field(holder, inner, re.sub("([A-Z])", r"_\1", inner).lower())[1] if isinstance(holder, dict) \
                else None
            ids += [call["id"] for call in as_list(calls) if isinstance(call, dict) and isinstance(call.get("id"), str)]
        blobs = _blobs(body)
        size = sum(base64_size(blob["data"]) for blob in blobs)
        seconds = 0.0
        for blob in blobs:
            rate = _RATE.search(str(blob.get("mimeType", blob.get("mime_type", ""))))
            seconds += base64_size(blob["data"]) / (2 * (int(rate.group(1)) if rate else _DEFAULT_RATE[frame.direction]))
        found.append(Described(kind=kind, delta="".join(texts) or None, call_id=", ".join(ids) or None,
                               audio_bytes=size if blobs else None, audio_seconds=seconds if blobs else None,
                               shown=_without_audio(body, blobs) if blobs else body))
    return found
