"""Responses over WebSocket (`GET /v1/responses` upgraded, `OpenAI-Beta: responses_websockets=2026-02-06`):
the turns inside one socket.

Each client `response.create` is one turn: the Responses create body under an envelope, and the
server events it produces up to `response.completed` / `response.failed` / `response.incomplete` or an
in-band `error`. The envelope is not the body: `type` (and the socket-only `stream_id` and
`generate`) are no Responses fields, so a frame checked as an HTTP body would be OR-14 on every turn;
`Turn.request` is the body alone, and `Turn.stream_body()` is the server events as the SSE stream the
Responses rules already read. With `stream_id` (multiplexing) each stream has its own turns;
without it, server events belong to the turn in flight."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from ... import sse
from ...check import ExchangeCheck, check_exchange
from ...dialect import Dialect
from ...frames import Direction, Frame, parse
from ...pointer import join, split
from ...profiles import Profile
from ...violations import Violation

# Socket-only fields of a response.create: the envelope around the Responses body.
_ENVELOPE = ("type", "stream_id", "generate")
_ENDS = frozenset({"response.completed", "response.failed", "response.incomplete", "error"})


@dataclass(slots=True)
class Turn:
    number: int  # the frame of its response.create
    request: dict[str, Any]  # the Responses body, envelope stripped
    stream_id: str | None = None
    prewarm: bool = False  # generate: false: the server prepares the turn and answers no output
    events: list[dict[str, Any]] = field(default_factory=list)  # server events, in order
    frames: list[int] = field(default_factory=list)  # the frame numbers of those events
    ended: bool = False  # a completed, failed or incomplete response, or an in-band error

    @property
    def previous_response_id(self) -> str | None:
        value = self.request.get("previous_response_id")
        return value if isinstance(value, str) else None

    @property
    def response_id(self) -> str | None:
        for event in self.events:
            response = event.get("response")
            if isinstance(response, dict) and isinstance(response.get("id"), str):
                return str(response["id"])
        return None

    @property
    def response(self) -> dict[str, Any] | None:
        """The response the turn ended with (the last event carrying one)."""
        for event in reversed(self.events):
            if event.get("type") in _ENDS and isinstance(event.get("response"), dict):
                response: dict[str, Any] = event["response"]
                return response
        return None

    def settle(self) -> None:
        """Let go of the events of an ended turn (its deltas) once it is made into a flow, keeping
        those that carry its response: what a later turn's history (`history`) reads of it."""
        kept = [(number, event) for number, event in zip(self.frames, self.events, strict=True)
                if isinstance(event.get("response"), dict)]
        self.frames = [number for number, _ in kept]
        self.events = [event for _, event in kept]

    def stream_body(self) -> bytes:
        """The server events as the SSE body an HTTP Responses stream would have been."""
        return b"".join(sse.encode(orjson.dumps(event), str(event.get("type", ""))) for event in self.events)


class TurnSplitter:
    """Cuts a socket's frames into turns as they pass, one frame at a time: `feed` answers the turn
    that frame ended, if any. What it holds is per turn, never per frame of the socket: the turns
    still open, and of each ended turn what its continuations read (`Turn.settle`)."""

    __slots__ = ("found", "count", "_open")

    def __init__(self) -> None:
        self.found: list[Turn] = []  # every turn so far, in the order of their response.create
        self.count = 0  # frames fed: the number of the next one
        self._open: dict[str | None, list[Turn]] = {}  # stream_id -> turns awaiting their end, oldest first

    def oldest_open(self) -> int | None:
        """The frame number of the oldest open turn's response.create; None when none is open."""
        return min((waiting[0].number for waiting in self._open.values() if waiting), default=None)

    def feed(self, frame: Frame) -> Turn | None:
        number = self.count
        self.count += 1
        body = parse(frame)
        if body is None:
            return None
        stream = body.get("stream_id")
        stream_id = stream if isinstance(stream, str) else None
        kind = body.get("type") if isinstance(body.get("type"), str) else ""
        if frame.direction is Direction.CLIENT:
            if kind != "response.create":
                return None
            request = {key: value for key, value in body.items() if key not in _ENVELOPE}
            turn = Turn(number, request, stream_id, prewarm=body.get("generate") is False)
            self.found.append(turn)
            self._open.setdefault(stream_id, []).append(turn)
            return None
        waiting = self._open.get(stream_id)
        if not waiting:
            return None
        turn = waiting[0]
        turn.events.append(body)
        turn.frames.append(number)
        if kind in _ENDS:
            turn.ended = True
            waiting.pop(0)
            return turn
        return None


def turns(frames: list[Frame]) -> list[Turn]:
    splitter = TurnSplitter()
    for frame in frames:
        splitter.feed(frame)
    return splitter.found


def check_turn(turn: Turn, profile: str | Profile | None = None) -> ExchangeCheck:
    """A turn judged as the HTTP exchange it stands for. A prewarm answers no output by design (the
    server only prepares the turn), so only its request is judged: its empty completed response is
    not the empty answer OR-15 is about."""
    return check_exchange(turn.request, None if turn.prewarm else turn.stream_body(), Dialect.OPENAI_RESPONSES,
                          profile)


def _as_items(value: Any) -> list[Any]:
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    return list(value) if isinstance(value, list) else []


def history(found: list[Turn], index: int) -> list[Any] | None:
    """The conversation turn `index` continues, as input items: the inputs and outputs along its
    previous_response_id chain inside this socket ([] for a turn that continues nothing). None when
    the chain leaves the socket (a response this recording never saw): the server's state is all
    there is of it."""
    by_response = {turn.response_id: turn for turn in found[:index] if turn.response_id is not None}
    chain: list[Turn] = []
    previous = found[index].previous_response_id
    seen: set[str] = set()
    while previous is not None:
        if previous in seen or previous not in by_response:
            return None
        seen.add(previous)
        earlier = by_response[previous]
        chain.append(earlier)
        previous = earlier.previous_response_id
    items: list[Any] = []
    for turn in reversed(chain):
        items.extend(_as_items(turn.request.get("input")))
        response = turn.response
        items.extend(_as_items(response.get("output")) if response is not None else [])
    return items


def full_input(found: list[Turn], index: int) -> list[Any] | None:
    """The whole conversation turn `index` continues, as one `input`: its history, then its own
    input; None when the chain leaves the socket."""
    items = history(found, index)
    return None if items is None else items + _as_items(found[index].request.get("input"))


def with_history(request: Any, items: list[Any]) -> Any:
    """`request` as the server reads it once the history is known: `items` before its own input,
    no previous_response_id (the server's copy of the history is these items)."""
    if not isinstance(request, dict):
        return request
    whole = {key: value for key, value in request.items() if key != "previous_response_id"}
    whole["input"] = items + _as_items(request.get("input"))
    return whole


# Rules that judge a turn's input against the history it continues: a finding of theirs inside the
# history (a call there that this turn leaves unanswered) is this turn's, not the earlier turns'.
_PAIRING = frozenset({"OR-08"})


def own_findings(violations: list[Violation], items: int) -> list[Violation]:
    """Findings of a request checked `with_history` (with `items` history items), as pointers into
    the request as sent: an input item's index goes back by `items`; inside the history, a pairing
    finding points at previous_response_id (what brought that item in), the rest are the earlier
    turns' own and are dropped."""
    found = []
    for violation in violations:
        tokens = split(violation.pointer)
        if tokens[:1] == ["input"] and len(tokens) > 1 and tokens[1].isdigit():
            position = int(tokens[1]) - items
            if position >= 0:
                violation = replace(violation, pointer=join("/input", position, *tokens[2:]))
            elif violation.rule in _PAIRING:
                violation = replace(violation, pointer="/previous_response_id",
                                    message=f"{violation.message} (item {tokens[1]} of the history it continues)")
            else:
                continue
        found.append(violation)
    return found


def replay_request(found: list[Turn], index: int) -> dict[str, Any] | None:
    """Turn `index`'s body for a socket of its own: the history sent as full input, since the server's
    previous_response_id may be gone. None when the chain leaves the socket."""
    items = history(found, index)
    if items is None:
        return None
    whole: dict[str, Any] = with_history(found[index].request, items)
    return whole
