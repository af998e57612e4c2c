"""What a recorded WebSocket session is made of, for everything that reads flows: its Responses turns
as flows of their own, and the findings of the socket itself.

A Responses-over-WebSocket turn (a client `response.create` and the server events up to its end,
openai_responses.socket) becomes a flow the rest of the product already reads as an HTTP Responses
stream: the body without its envelope as the request, the events as the SSE stream they stand for
(one chunk per frame, at its time), linked to its socket (`socket_of`) and to the turn whose response
it continues (`continues`), with the history that continuation rests on (`history`), so the list,
the filters, the checker, the side-by-side and conversation views, export and replay treat a turn
as one exchange. Realtime and Gemini Live sockets have no such turns: their rules judge the whole
socket, and their findings are the socket flow's own.

Frames are read only by the dialects' socket modules; this module only routes them there."""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any

import orjson

from .flow import PREWARM_NOTE, REPLAY_NOTES, Chunk, Flow, FlowState
from .wire import sse
from .wire.dialect import Dialect, from_path
from .wire.dialects.gemini import live
from .wire.dialects.openai_responses import realtime, socket
from .wire.frames import Described, Frame
from .wire.violations import Violation

TURN_METHOD = "WS"  # a turn's method in the list: no HTTP request carried it


class Protocol(str, Enum):
    RESPONSES = "responses"  # Responses over WebSocket: GET /v1/responses upgraded (Codex)
    REALTIME = "realtime"  # OpenAI Realtime: /v1/realtime
    LIVE = "live"  # Gemini Live: …BidiGenerateContent


def protocol(path: str) -> Protocol | None:
    """The protocol a socket's upgrade path speaks; None for one we do not know."""
    bare = path.split("?", 1)[0].rstrip("/")
    if bare.endswith("BidiGenerateContent"):
        return Protocol.LIVE
    if bare.endswith("/realtime"):
        return Protocol.REALTIME
    if from_path(bare) is Dialect.OPENAI_RESPONSES:
        return Protocol.RESPONSES
    return None


def turn_history(flow: Flow, request: Any) -> list[Any] | None:
    """The history socket turn `flow` continues (Flow.history), for `request` (its body, or one fixed
    or edited from it): None when there is none to read, or `request` no longer continues a
    response (no previous_response_id): such a body holds its whole conversation itself."""
    if flow.history is None or not isinstance(request, dict) or request.get("previous_response_id") is None:
        return None
    try:
        items = orjson.loads(flow.history)
    except orjson.JSONDecodeError:
        return None
    return items if isinstance(items, list) else None


def turn_frame(flow: Flow, body: bytes | None = None) -> bytes:
    """The `response.create` frame a replay of socket turn `flow` sends on a socket of its own: its
    request (or `body`, fixed or edited) in the envelope, and for a continuation the history it
    continued sent as full input, since the server's previous_response_id may be gone (a chain that
    left the socket keeps its previous_response_id: the server's copy is all there is). A ValueError
    for a body that is not a JSON object."""
    request = orjson.loads(flow.request_body if body is None else body)
    if not isinstance(request, dict):
        raise ValueError("a response.create body is a JSON object")
    items = turn_history(flow, request)
    if items is not None:
        request = socket.with_history(request, items)
    return orjson.dumps({"type": "response.create", **request})


def socket_findings(flow: Flow, frames: list[Frame]) -> list[Violation]:
    """The findings of the socket itself, pointing into its frames (/<frame>/…): the Realtime and
    Live rules. A Responses socket has none of its own: each turn is judged as its own flow."""
    kind = protocol(flow.path)
    if kind is Protocol.REALTIME:
        return realtime.check(frames, dict(flow.request_headers))
    if kind is Protocol.LIVE:
        return live.check(frames)
    return []


def describe(flow: Flow, frames: list[Frame]) -> list[Described]:
    """Each frame of socket `flow` as a frame view lists it, read by its protocol's module (OpenAI's
    event shapes for a socket of no known protocol)."""
    return live.describe(frames) if protocol(flow.path) is Protocol.LIVE else realtime.describe(frames)


def _error_status(events: list[dict[str, object]]) -> int | None:
    """The status an in-band error gives itself (`{"type":"error","status":400,…}`)."""
    for event in events:
        status = event.get("status")
        if event.get("type") == "error" and isinstance(status, int) and not isinstance(status, bool):
            return status
    return None


def frame_span(turn: socket.Turn) -> str:
    """Which frames a turn is: where its findings' pointers fall among the socket's frames."""
    events = f"frames {turn.frames[0]}–{turn.frames[-1]}" if len(turn.frames) > 1 else \
        f"frame {turn.frames[0]}" if turn.frames else "no frame"
    return f"request: frame {turn.number}; its events: {events} (event N of the stream is frame N of these)"


class TurnFlows:
    """The Responses turns of socket `flow` made into flows as its frames pass (`feed`, in order),
    each as it ends, so a turn is a row while its socket is still open; `finish` makes the turns the
    socket closed on before their end. `flow`: the socket, its request side redacted (a turn copies
    it); ids from `new_id`. It holds the splitter's per-turn state, never the socket's frames."""

    __slots__ = ("flow", "new_id", "splitter", "_by_response", "_frames", "_first")

    def __init__(self, flow: Flow, new_id: Callable[[], int]) -> None:
        self.flow = flow
        self.new_id = new_id
        self.splitter = socket.TurnSplitter()
        self._by_response: dict[str, int] = {}  # response id -> the flow of the turn that answered it
        # The frames from the oldest open turn's request on (frame `_first` first): what the flows of
        # the open turns are made of.
        self._frames: list[Frame] = []
        self._first = 0

    def feed(self, frame: Frame) -> list[Flow]:
        """The flows of the turns `frame` ends (none, or one)."""
        number = self.splitter.count
        ended = self.splitter.feed(frame)
        if not self._frames:
            self._first = number
        self._frames.append(frame)
        made = [] if ended is None else [self._flow(ended)]
        oldest = self.splitter.oldest_open()
        if oldest is None:
            self._frames.clear()
        elif oldest > self._first:
            del self._frames[:oldest - self._first]
            self._first = oldest
        return made

    def finish(self) -> list[Flow]:
        """The flows of the turns still open: the socket closed before they ended."""
        made = [self._flow(turn) for turn in self.splitter.found if not turn.ended]
        self._frames.clear()
        return made

    def _flow(self, turn: socket.Turn) -> Flow:
        flow = self.flow
        found = self.splitter.found
        index = found.index(turn)
        frames, first = self._frames, self._first
        started = frames[turn.number - first].at
        chunks = [Chunk(frames[number - first].at - started,
                        sse.encode(frames[number - first].payload, str(event.get("type", ""))))
                  for number, event in zip(turn.frames, turn.events, strict=True)]
        items = socket.history(found, index)
        notes = [f"turn {index + 1} of WebSocket #{flow.id}; {frame_span(turn)}"]
        if turn.prewarm:
            notes.append(PREWARM_NOTE)
        # A replayed socket's turn is the replay of the turn it was sent from (replay.replay_turn).
        notes += [note for note in flow.notes if note in REPLAY_NOTES.values()]
        if turn.previous_response_id is not None and items is None:
            notes.append(f"continues {turn.previous_response_id}, a response this socket never saw: "
                         "its history is the server's alone")
        made = Flow(
            id=self.new_id(), session_id=flow.session_id, started_at=started, method=TURN_METHOD, path=flow.path,
            query=flow.query, request_headers=list(flow.request_headers), request_body=orjson.dumps(turn.request),
            mode=flow.mode, upstream_url=flow.upstream_url, status=_error_status(turn.events) or 200,
            response_headers=[("content-type", "text/event-stream")],
            response_body=b"".join(chunk.data for chunk in chunks), streamed=True, chunks=chunks,
            ttfb_ms=chunks[0].t * 1000 if chunks else None, latency_ms=chunks[-1].t * 1000 if chunks else None,
            state=FlowState.COMPLETE if turn.ended else FlowState.ERROR,
            error=None if turn.ended else "the socket closed before this turn ended",
            route=flow.route, notes=notes, socket_of=flow.id, replay_of=flow.replay_of,
            continues=self._by_response.get(turn.previous_response_id or ""),
            history=None if items is None or turn.previous_response_id is None else orjson.dumps(items))
        if turn.response_id is not None:
            self._by_response[turn.response_id] = made.id
        if turn.ended:
            turn.settle()
        return made


def turn_flows(flow: Flow, frames: list[Frame], new_id: Callable[[], int]) -> list[Flow]:
    """The Responses turns of socket `flow` (its `frames`), each a flow with an id from `new_id`, in
    the order they ended; [] for a socket of another protocol. A turn the socket closed on before its
    end is a flow in the error state with the events it had."""
    if protocol(flow.path) is not Protocol.RESPONSES:
        return []
    turns = TurnFlows(flow, new_id)
    made = [turn for frame in frames for turn in turns.feed(frame)]
    return made + turns.finish()
