"""Dialect-neutral stream events: a target stream parser yields them, a source emitter writes them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from .. import jsonsafe
from ..sse import SSEEvent
from .model import StopReason


@dataclass(frozen=True, slots=True)
class Start:
    id: str
    model: str
    input_tokens: int = 0


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str
    refusal: bool = False  # a piece of the model's refusal (Chat `refusal`, Responses refusal part)


@dataclass(frozen=True, slots=True)
class CallStart:
    key: Any  # the target stream's own key for the call (index, item id, block index)
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class CallArgs:
    key: Any
    delta: str


@dataclass(frozen=True, slots=True)
class CallEnd:
    key: Any


@dataclass(frozen=True, slots=True)
class Finish:
    stop: StopReason
    input_tokens: int = 0
    output_tokens: int = 0
    failed: str = ""  # why the answer cannot be delivered as complete (a call was dropped)


@dataclass(frozen=True, slots=True)
class Dropped:
    """Something in the target stream the source dialect cannot carry (reasoning, thinking)."""

    what: str
    rule: str = "XL-14"


@dataclass(frozen=True, slots=True)
class Failure:
    """An error event or error body in the target stream."""

    message: str
    raw: Any = None


Event = Start | TextDelta | CallStart | CallArgs | CallEnd | Finish | Dropped | Failure


def decode(event: SSEEvent, what: str = "event") -> dict[str, Any] | list[Event]:
    """The JSON object an upstream stream event carries, or else the events to emit instead: a
    Failure when it is not JSON (the stream goes on, the flow records it), none for JSON that is
    not an object."""
    try:
        data = jsonsafe.loads(event.data)
    except jsonsafe.Unfaithful as exc:
        return [Failure(f"upstream sent {'a chunk' if what == 'chunk' else 'an event'} that cannot be translated "
                        f"faithfully: {exc}")]
    except orjson.JSONDecodeError:
        return [Failure(f"upstream sent {'a chunk' if what == 'chunk' else 'an event'} that is not JSON: "
                        f"{event.data[:80]!r}")]
    return data if isinstance(data, dict) else []
