"""A flow: one request through the forwarder, what went upstream and what came back.

Plain data shared by the forwarder, the store, replay, export and the UI. Headers and query
strings held here are already redacted by name; bodies are the exact bytes that crossed the wire
until the store scrubs the request's secrets out of them.

A WebSocket session is a flow too (`websocket`): its upgrade request is the request, the upstream's
handshake answer the response head, and its frames, both ways, are its chunks, each a frame record
(`frame_chunk`, read back by `frames`): the chunks' persistence while the session lasts (the
store's flow_chunks, a kill -9 keeps what was relayed) serves sockets unchanged."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import Enum
from operator import attrgetter

from .wire.frames import Direction, Frame


class FlowState(str, Enum):
    PENDING = "pending"  # request received, response not finished
    COMPLETE = "complete"  # response fully relayed
    ERROR = "error"  # see Flow.error


class Mode(str, Enum):
    PASSTHROUGH = "passthrough"  # byte-exact
    TRANSLATE = "translate"
    REPAIR = "repair"


# The note a replay sent with the safe repairs applied carries (the list marks it apart from a replay
# as recorded). The forwarder writes it when the replay headers say so.
FIXED_REPLAY_NOTE = "replay with the safe repairs applied"
# The note of a replay whose request the user edited before sending it (e).
EDITED_REPLAY_NOTE = "replay of an edited request"
# The note of a socket turn sent with `generate: false` (inspector/sockets.py): the server prepares
# the turn and answers an empty response by design, which is no empty answer to judge.
PREWARM_NOTE = "prewarm (generate: false): the server prepares the turn and answers no output"


class ReplayKind(str, Enum):
    """What a replay sends: the request as recorded (r), with the safe repairs (R), or as the user
    edited it (e). The forwarder learns it from the signed replay header and notes it."""

    AS_RECORDED = "as recorded"
    FIXED = "fixed"
    EDITED = "edited"


REPLAY_NOTES = {ReplayKind.FIXED: FIXED_REPLAY_NOTE, ReplayKind.EDITED: EDITED_REPLAY_NOTE}


@dataclass(slots=True)
class Chunk:
    t: float  # seconds since the request arrived
    data: bytes


@dataclass(slots=True)
class Flow:
    id: int
    session_id: int
    started_at: float  # unix time the request arrived
    method: str
    path: str  # path only, as the client sent it
    query: str = ""  # redacted
    request_headers: list[tuple[str, str]] = field(default_factory=list)  # redacted
    request_body: bytes = b""
    mode: Mode = Mode.PASSTHROUGH
    upstream_url: str = ""  # redacted
    # What was sent upstream. None means "the same bytes as request_body" (passthrough).
    upstream_request_body: bytes | None = None
    upstream_request_headers: list[tuple[str, str]] = field(default_factory=list)  # redacted
    status: int | None = None
    response_headers: list[tuple[str, str]] = field(default_factory=list)  # redacted
    # What the upstream answered (before any translation back) ...
    upstream_response_body: bytes | None = None
    # ... and what the client received. For streams, the concatenation of the chunks.
    response_body: bytes = b""
    streamed: bool = False
    chunks: list[Chunk] = field(default_factory=list)  # chunks as relayed to the client
    ttfb_ms: float | None = None
    latency_ms: float | None = None
    state: FlowState = FlowState.PENDING
    error: str | None = None
    replay_of: int | None = None
    # A turn of a WebSocket session (inspector/sockets.py): the socket flow it came through, the turn
    # whose response it continues (previous_response_id) and the JSON input items of the history it
    # continues, rebuilt from the socket's earlier turns (None when it continues nothing, or a
    # response the socket never saw).
    socket_of: int | None = None
    continues: int | None = None
    history: bytes | None = None
    translate: str | None = None  # "SRC:DST" when mode is TRANSLATE
    route: str = ""  # the name of the route it came through (proxy/routes.py), "" for the unnamed one
    notes: list[str] = field(default_factory=list)  # loss report / repairs, one line each
    # A WebSocket session: `chunks` are frame records (frame_chunk), `response_body` their concatenation.
    websocket: bool = False
    # The credential values the request carried, for the store to scrub wherever they show up
    # (see redact.redacted). Memory only: never stored, exported, shown or compared.
    secrets: tuple[str, ...] = field(default=(), repr=False, compare=False)

    def __reduce__(self) -> tuple:
        # Every flow is pickled to the store's writer process (and big ones to the analysis worker):
        # its chunks as (t, data) pairs pickle ~15 times faster than as slotted objects.
        return _unpickle_flow, (_BEFORE_CHUNKS(self), chunk_pairs(self.chunks), _AFTER_CHUNKS(self))

    @property
    def sent_upstream(self) -> bytes:
        return self.request_body if self.upstream_request_body is None else self.upstream_request_body

    @property
    def content_type(self) -> str:
        return header(self.response_headers, "content-type") or ""


_NAMES = [each.name for each in fields(Flow)]
_BEFORE_CHUNKS = attrgetter(*_NAMES[:_NAMES.index("chunks")])
_AFTER_CHUNKS = attrgetter(*_NAMES[_NAMES.index("chunks") + 1:])


def chunk_pairs(chunks: list[Chunk]) -> list[tuple[float, bytes]]:
    """`chunks` as plain pairs, what crosses a process boundary (see Flow.__reduce__)."""
    return [(chunk.t, chunk.data) for chunk in chunks]


def paired_chunks(pairs: list[tuple[float, bytes]]) -> list[Chunk]:
    return [Chunk(t, data) for t, data in pairs]


def _unpickle_flow(before: tuple, pairs: list[tuple[float, bytes]], after: tuple) -> Flow:
    values: tuple = (*before, paired_chunks(pairs), *after)
    return Flow(*values)


def header(headers: list[tuple[str, str]], name: str) -> str | None:
    name = name.lower()
    for key, value in headers:
        if key.lower() == name:
            return value
    return None


# A frame record: one byte (the direction bit, then the opcode: 1 text, 2 binary), then the payload.
# Control frames are not records: close codes and reasons go to the flow's notes.
_FROM_SERVER = 0x80
_TEXT, _BINARY = 1, 2


def frame_chunk(t: float, direction: Direction, text: bool, payload: bytes) -> Chunk:
    """The chunk recording one data frame that passed `t` seconds after the upgrade request arrived."""
    head = (_FROM_SERVER if direction is Direction.SERVER else 0) | (_TEXT if text else _BINARY)
    return Chunk(t, bytes((head,)) + payload)


def frames(flow: Flow) -> list[Frame]:
    """The data frames of a WebSocket flow, in the order they passed, with their time since the
    epoch ([] for any other flow). A record this build cannot read (a later opcode) is left out."""
    return chunk_frames(flow.started_at, flow.chunks) if flow.websocket else []


def chunk_frames(started_at: float, chunks: list[Chunk]) -> list[Frame]:
    """The data frames of a socket's frame records `chunks` (of a socket that began at `started_at`):
    a socket's frames read a part at a time, as the store writes them."""
    found = []
    for chunk in chunks:
        if not chunk.data or chunk.data[0] & 0x7F not in (_TEXT, _BINARY):
            continue
        head = chunk.data[0]
        found.append(Frame(Direction.SERVER if head & _FROM_SERVER else Direction.CLIENT,
                           started_at + chunk.t, head & 0x7F == _TEXT, chunk.data[1:]))
    return found
