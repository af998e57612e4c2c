"""OpenAI Realtime (`/v1/realtime?model=…`, GA event names; the beta shut down in May 2026): calls paired
with their outputs by call_id across one socket, the one-active-response contract, beta leftovers,
the flat tool shape, and audio deltas summarised.

Realtime lives beside Responses because its items are the Responses items (function_call,
function_call_output, call_id) and its response events are Responses' own names; the dialect package
loader gives every folder a Home and a Dialect member, which Realtime gets when the relay lands.

Client events: session.update (session.tools, session.tool_choice), conversation.item.create,
response.create (response.tools), response.cancel, input_audio_buffer.append. Server events:
response.created / response.done, response.output_item.added / .done, conversation.item.added /
.done, response.function_call_arguments.delta / .done, response.output_audio.delta, error
(openai-python `types/realtime`). Findings point into the frames: /<frame>/<field>…"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...frames import Described, Direction, Event, Frame, audio_note, base64_size, documents, events
from ...pointer import join
from ...rules.base import Report, as_list, short
from ...violations import Effect, Violation

# Beta server event names and their GA names: a GA client waits for the second and never sees it.
BETA_EVENTS = {
    "response.text.delta": "response.output_text.delta",
    "response.text.done": "response.output_text.done",
    "response.audio.delta": "response.output_audio.delta",
    "response.audio.done": "response.output_audio.done",
    "response.audio_transcript.delta": "response.output_audio_transcript.delta",
    "response.audio_transcript.done": "response.output_audio_transcript.done",
    "conversation.item.created": "conversation.item.added",
}
_ANNOUNCING = frozenset({"response.output_item.added", "response.output_item.done", "conversation.item.added",
                         "conversation.item.done", "conversation.item.created"})
_TOOL_CHOICES = frozenset({"auto", "none", "required"})


def check(frames: list[Frame], headers: Mapping[str, str] | None = None) -> list[Violation]:
    """The Realtime rules (RT-01…RT-05) over one recorded socket and its upgrade request's headers."""
    report = Report("socket", documents(frames))
    if headers is not None:
        report.violations.extend(_check_headers(headers))
    calls: dict[str, str] = {}  # call_id -> the function's name, as the server announced it
    pending: dict[str, int] = {}  # announced calls without an output yet -> the frame announcing them
    active: int | None = None  # the frame of the response.create whose response is in flight
    created = False  # the server confirmed that response (response.created)
    flagged_active = False
    for event in events(frames):
        body, where = event.body, join("", event.number)
        if event.direction is Direction.SERVER:
            _server(report, event, calls, pending)
            if event.type == "response.created":
                active, created = active if active is not None else event.number, True
            elif event.type == "response.done":
                active, created = None, False
            elif event.type == "error" and _error_code(body) == "conversation_already_has_active_response":
                if not flagged_active:
                    report.add("RT-03", join(where, "error", "code"), "the server refused a response.create: "
                               "a response was already active", effect=Effect.REJECTS)
                flagged_active = False
            elif event.type == "error" and active is not None and not created:
                active = None  # the response.create was refused: no response is in flight
            continue
        if event.type == "session.update":
            session = body.get("session")
            if isinstance(session, dict):
                _check_tools(report, session, join(where, "session"))
        elif event.type == "conversation.item.create":
            item = body.get("item")
            kind = item.get("type") if isinstance(item, dict) else None
            if kind == "function_call" and isinstance(item, dict):
                # A call the client writes into the conversation (restored history) is answerable.
                _announce(item, event.number, calls, pending)
            elif kind == "function_call_output" and isinstance(item, dict):
                call_id = item.get("call_id")
                if not isinstance(call_id, str) or call_id not in calls:
                    report.add("RT-01", join(where, "item", "call_id"),
                               f"function_call_output for call_id {short(call_id)}, which no function_call of this "
                               "session announced")
                else:
                    pending.pop(call_id, None)
        elif event.type == "response.create":
            options = body.get("response")
            if isinstance(options, dict):
                _check_tools(report, options, join(where, "response"))
            flagged_active = False
            if active is not None:
                report.add("RT-03", where, f"response.create while the response of frame {active} is still active")
                flagged_active = True
                continue
            if pending:
                waiting = ", ".join(short(call_id) for call_id in pending)
                report.add("RT-02", where, f"response.create before the output of call {waiting}")
            active, created = event.number, False
    return report.violations


def _error_code(body: dict[str, Any]) -> Any:
    error = body.get("error")
    return error.get("code") if isinstance(error, dict) else None


def _server(report: Report, event: Event, calls: dict[str, str], pending: dict[str, int]) -> None:
    if event.type in BETA_EVENTS:
        report.add("RT-04", join("", event.number, "type"),
                   f"beta event {event.type} on a GA session (GA: {BETA_EVENTS[event.type]})",
                   effect=Effect.BREAKS_CLIENT)
    item = event.body.get("item") if event.type in _ANNOUNCING else None
    if isinstance(item, dict) and item.get("type") == "function_call":
        _announce(item, event.number, calls, pending)


def _announce(item: dict[str, Any], number: int, calls: dict[str, str], pending: dict[str, int]) -> None:
    call_id = item.get("call_id")
    if isinstance(call_id, str):
        if call_id not in calls:
            pending[call_id] = number
        calls[call_id] = str(item.get("name", ""))


def _check_headers(headers: Mapping[str, str]) -> list[Violation]:
    beta = next((value for key, value in headers.items() if key.lower() == "openai-beta"), "")
    # The upgrade request carries them: a finding of the request, refused there.
    report = Report("request", {"openai-beta": beta})
    if "realtime=v1" in {flag.strip() for flag in beta.split(",")}:
        report.add("RT-04", "/openai-beta", "OpenAI-Beta: realtime=v1 asks for the beta, which is shut down")
    return report.violations


def _check_tools(report: Report, options: dict[str, Any], where: str) -> None:
    for position, tool in enumerate(as_list(options.get("tools"))):
        place = join(where, "tools", position)
        if not isinstance(tool, dict):
            report.add("RT-05", place, "a tool is an object")
        elif tool.get("type", "function") == "function":
            if "function" in tool:
                report.add("RT-05", join(place, "function"), "a Realtime function tool is flat: name and parameters "
                           "sit beside type, not under function (the Chat shape)")
            elif not isinstance(tool.get("name"), str) or not tool["name"]:
                report.add("RT-05", join(place, "name"), "a function tool needs its name")
    choice = options.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "function" and not isinstance(choice.get("name"), str):
        report.add("RT-05", join(where, "tool_choice"), "tool_choice names the function flat: "
                   "{\"type\":\"function\",\"name\":…}")
    elif isinstance(choice, str) and choice not in _TOOL_CHOICES:
        report.add("RT-05", join(where, "tool_choice"), f"tool_choice {short(choice)} is none of auto, none, required")


@dataclass(frozen=True, slots=True)
class AudioDelta:
    number: int  # the frame
    direction: Direction
    bytes: int
    seconds: float | None  # None when the session's format is not one with a fixed byte rate


# Bytes per second of the GA formats: 16-bit PCM at its rate (24 kHz unless said), G.711 at 8 kHz.
def _byte_rate(audio_format: Any) -> int | None:
    if isinstance(audio_format, dict):
        kind, rate = audio_format.get("type"), audio_format.get("rate", 24000)
        if kind == "audio/pcm" and isinstance(rate, int) and rate > 0:
            return 2 * rate
        if kind in ("audio/pcmu", "audio/pcma"):
            return 8000
    return None


_AUDIO_FIELDS = {"response.output_audio.delta": "delta", "response.audio.delta": "delta",
                 "input_audio_buffer.append": "audio"}


def audio_deltas(frames: list[Frame]) -> list[AudioDelta]:
    """Each audio delta's size and duration at the session's format (as the last session.update,
    session.created or session.updated set it)."""
    rates: dict[str, int | None] = {"input": 2 * 24000, "output": 2 * 24000}
    found = []
    for event in events(frames):
        session = event.body.get("session")
        if event.type in ("session.update", "session.created", "session.updated") and isinstance(session, dict):
            audio = session.get("audio")
            for side in ("input", "output"):
                spec = audio.get(side) if isinstance(audio, dict) else None
                if isinstance(spec, dict) and "format" in spec:
                    rates[side] = _byte_rate(spec["format"])
        name = _AUDIO_FIELDS.get(event.type)
        data = event.body.get(name) if name else None
        if isinstance(data, str):
            size = base64_size(data)
            rate = rates["input" if event.direction is Direction.CLIENT else "output"]
            found.append(AudioDelta(event.number, event.direction, size, size / rate if rate else None))
    return found


def shown(body: dict[str, Any]) -> dict[str, Any]:
    """An event as a frame view shows it: an audio payload replaced by its size, never a base64 wall."""
    name = _AUDIO_FIELDS.get(str(body.get("type")))
    data = body.get(name) if name else None
    if name is None or not isinstance(data, str):
        return body
    return {**body, name: audio_note(base64_size(data))}


def describe(frames: list[Frame]) -> list[Described]:
    """Each frame as a frame view lists it; OpenAI's socket events (Realtime's and Responses over
    WebSocket alike) name their type, stream text in `delta` and carry `call_id` on the event or its
    item."""
    audio = {delta.number: delta for delta in audio_deltas(frames)}
    found = []
    for number, body in enumerate(documents(frames)):
        if body is None:
            found.append(Described())
            continue
        item = body.get("item")
        call_id = body.get("call_id", item.get("call_id") if isinstance(item, dict) else None)
        delta = body.get("delta")
        sound = audio.get(number)
        found.append(Described(
            kind=str(body.get("type", "")), delta=delta if isinstance(delta, str) and sound is None else None,
            call_id=call_id if isinstance(call_id, str) else None,
            audio_bytes=sound.bytes if sound else None, audio_seconds=sound.seconds if sound else None,
            shown=shown(body)))
    return found
