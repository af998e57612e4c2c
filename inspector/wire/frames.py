"""A recorded WebSocket session as the understanding layers read it: frames in the order they passed,
each with its direction, time, opcode and payload. Nothing here knows a protocol; each dialect's
socket module (openai_responses.socket, openai_responses.realtime, gemini.live) reads the events.

Frames are hostile bytes: a frame that is not a JSON object (binary audio, a truncated text frame)
is kept in the list, so pointers stay frame numbers, and is skipped by `events`."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

import orjson


class Direction(str, Enum):
    CLIENT = "client"  # client -> server
    SERVER = "server"  # server -> client


@dataclass(frozen=True, slots=True)
class Frame:
    direction: Direction
    at: float  # seconds since the epoch, when the frame passed
    text: bool  # opcode: text (True) or binary
    payload: bytes


@dataclass(frozen=True, slots=True)
class Event:
    """A frame that holds a JSON object: its position among the session's frames (the first token
    of a finding's pointer) and the object."""

    number: int
    direction: Direction
    body: dict[str, Any]

    @property
    def type(self) -> str:
        kind = self.body.get("type")
        return kind if isinstance(kind, str) else ""


def parse(frame: Frame) -> dict[str, Any] | None:
    """The JSON object a frame carries, or None (binary, not JSON, not an object)."""
    if not frame.text:
        return None
    try:
        body = orjson.loads(frame.payload)
    except orjson.JSONDecodeError:
        return None
    return body if isinstance(body, dict) else None


def events(frames: list[Frame]) -> list[Event]:
    return [Event(number, frame.direction, body) for number, frame in enumerate(frames)
            if (body := parse(frame)) is not None]


def documents(frames: list[Frame]) -> list[dict[str, Any] | None]:
    """The parsed frames by number: what a finding's pointer (/frame/field/...) points into."""
    return [parse(frame) for frame in frames]


def base64_size(text: str) -> int:
    """The byte count of a base64 text, without decoding it (an audio delta is summarised, never
    held twice)."""
    stripped = text.rstrip("=")
    return len(stripped) * 3 // 4


@dataclass(frozen=True, slots=True)
class Described:
    """One frame as a frame view lists it, read by its protocol's socket module: the event type, the
    text it streams, the call it belongs to, its audio summarised, and the event as it is shown raw
    (audio payloads replaced by their size: never a base64 wall; None for a frame that is no JSON
    object)."""

    kind: str = ""
    delta: str | None = None
    call_id: str | None = None
    audio_bytes: int | None = None
    audio_seconds: float | None = None
    shown: dict[str, Any] | None = None


def audio_note(size: int) -> str:
    """What stands for an audio payload in a frame shown raw."""
    return f"<{size} bytes of audio>"
