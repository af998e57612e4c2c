"""The exchange machine: one request through the forwarder, as events in and commands out.

No sockets, no event loop, no clock of its own (mitmproxy's sans-io layers are the model): the
driver (forwarder.py) reads the client and the upstream, feeds what happened as events, each with
its time since the request arrived, and carries out the commands the machine answers with. Every
decision about what the client gets and what the flow records is made here, so it can be tested
with scripted event sequences alone (tests/proxy/test_exchange.py).

Behaviour that rewrites or observes the exchange lives in hooks (`Hook`), chained in request order
(credentials, replay marking, repair, translation) and unwound in reverse for the response, so
repair and translation combine on one route: the request is repaired in the client's dialect, then
translated; the response is translated back, then its repaired names restored."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from ..flow import Chunk, Flow, FlowState, Mode, frame_chunk
from ..redact import redact_headers, redact_url
from ..wire.dialect import from_path, is_stream_path
from ..wire.frames import Direction
from ..wire.streams import ends_complete, is_stream_type
from .access import error_body, target_problem

FLOW_ID_HEADER = "x-toolwire-flow-id"  # answered only to replays, so replay() learns the new id
MAX_CHUNK_TIMINGS = 100_000  # per flow: an endless stream's timings stay bounded too

# RFC 9110 §7.6.1 connection-specific fields, plus what this hop recomputes itself.
HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
     "proxy-authenticate", "proxy-authorization"}
)


# -- events (driver → machine) -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BodyRead:
    """The client's request body, whole."""

    body: bytes


@dataclass(frozen=True, slots=True)
class BodyRefused:
    """The body was not read whole: `status` None when the client left (nobody to answer)."""

    status: int | None
    reason: str
    kept: bytes = b""


@dataclass(frozen=True, slots=True)
class UpstreamHead:
    status: int
    headers: list[tuple[str, str]]  # as the upstream sent them, latin-1 text
    at: float


@dataclass(frozen=True, slots=True)
class UpstreamData:
    data: bytes
    at: float


@dataclass(frozen=True, slots=True)
class UpstreamEnd:
    at: float


# Why an upstream request failed (the driver names its transport's errors so).
Failure = Literal["connect_timeout", "unreachable", "failed"]


@dataclass(frozen=True, slots=True)
class UpstreamFailed:
    """The upstream could not be reached or broke off; `kind` matters before its head only."""

    kind: Failure
    reason: str
    at: float


@dataclass(frozen=True, slots=True)
class UpstreamSilent:
    """The upstream sent nothing for the forwarder's timeout."""

    at: float


@dataclass(frozen=True, slots=True)
class ClientGone:
    at: float


@dataclass(frozen=True, slots=True)
class Stopped:
    """The forwarder is stopping (`stalled`: the client read nothing for `stall` seconds)."""

    at: float
    stalled: bool = False


Event = (BodyRead | BodyRefused | UpstreamHead | UpstreamData | UpstreamEnd | UpstreamFailed | UpstreamSilent
         | ClientGone | Stopped)


# -- commands (machine → driver) ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SendUpstream:
    method: str
    path: str
    query: str
    headers: list[tuple[str, str]]
    body: bytes | None  # None: no body and no length, as the client sent none


@dataclass(frozen=True, slots=True)
class Record:
    """The flow goes to the recorder as started (its request is known)."""


@dataclass(frozen=True, slots=True)
class SendHead:
    status: int
    headers: list[tuple[str, str]]


@dataclass(frozen=True, slots=True)
class SendData:
    data: bytes
    more: bool


@dataclass(frozen=True, slots=True)
class Finish:
    """The flow is final: recorded so. Carried out last of a batch; nothing follows it."""

    state: FlowState
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Abort:
    """Cut the client's connection: its response started and cannot be completed."""


Command = SendUpstream | Record | SendHead | SendData | Finish | Abort


# -- hooks ---------------------------------------------------------------------------------------


class HookError(Exception):
    """A hook cannot carry on with this exchange; `kind` names it to the client (e.g. a request
    that cannot be translated); the message says why."""

    def __init__(self, message: str, kind: str = "toolwire_translate_error") -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(slots=True)
class Outgoing:
    """The request as it will go upstream; request hooks rewrite it in turn."""

    method: str
    path: str
    query: str
    headers: list[tuple[str, str]]
    body: bytes
    rewritten: bool = False  # a hook changed the body (or the path along with it)


class Hook:
    """One exchange's share of an addon. Every method has a default that changes nothing, so an
    addon implements only the hooks it needs. Request hooks run in chain order, response hooks
    in reverse."""

    def request(self, flow: Flow, outgoing: Outgoing) -> None:
        """Before the request goes upstream (a HookError refuses it with 400)."""

    @property
    def rewrites_response(self) -> bool:
        """The response body changes (known once request() has run): its length goes, and a
        body that is not a stream is rewritten whole, before its head."""
        return False

    def response_headers(self, flow: Flow, headers: list[tuple[str, str]], stream: bool) -> list[tuple[str, str]]:
        """The head the client gets; `stream`: the body will be fed to response_chunk."""
        return headers

    def response_chunk(self, data: bytes) -> bytes:
        return data

    def response_end(self) -> bytes:
        """A stream's end: what is still held back."""
        return b""

    def response(self, body: bytes, failed: bool) -> bytes:
        """A body rewritten whole; `failed`: an error body (status >= 400)."""
        return body

    def error(self, kind: str, message: str, status: int) -> bytes | None:
        """The body of an error of the forwarder's own, in the shape the client reads, or None
        for the next hook's (by default, proxy/access.error_body)."""
        return None

    def notes(self) -> list[str]:
        """Lines for the flow's notes, gathered since the last call."""
        return []


class Addon:
    """Lives as long as the forwarder; gives each exchange its hook (None: nothing to do there)."""

    def hook(self, flow: Flow, headers: Sequence[tuple[str, str]], query: str) -> Hook | None:
        """`headers` and `query` as the client sent them (the flow keeps them redacted)."""
        raise NotImplementedError


# -- the machine ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Policy:
    """What one forwarder's exchanges share."""

    upstream_shown: str
    max_body: int
    timeout: float
    stall: float  # seconds a client may leave a chunk unread
    # Why the client's HTTP layer would refuse to send a head, or None (proxy/server.unsendable_head).
    unsendable: Callable[[int, list[tuple[str, str]]], str | None]
    not_forwarded: frozenset[str] = frozenset()  # request headers this hop consumes or recomputes
    upstream_auth: tuple[tuple[str, str], ...] = ()  # the upstream URL's userinfo, as a header


class Copy:
    """The recorded copy of a body: its first `limit` bytes, in the pieces they came in. Beyond
    that the bytes are only counted, so an endless stream holds bounded memory."""

    __slots__ = ("parts", "size", "count", "limit", "last")

    def __init__(self, limit: int) -> None:
        self.parts: list[bytes] = []
        self.size = 0  # every byte, kept or not
        self.count = 0  # pieces
        self.limit = limit
        self.last = b""

    def add(self, data: bytes) -> bytes:
        """What is kept of `data`."""
        room = self.limit - self.size
        self.size += len(data)
        self.count += 1
        self.last = data
        if len(data) <= room:
            self.parts.append(data)
            return data
        kept = data[:room] if room > 0 else b""
        if kept:
            self.parts.append(kept)
        return kept


_BODY, _WAITING, _RELAYING, _DONE = range(4)


class Exchange:
    """One request's exchange. `headers`: the request's, as the client sent them; `hooks`: the
    chain, in request order; `server_push`: an MCP push stream, idle by design, that either side
    may end."""

    __slots__ = ("policy", "flow", "headers", "query", "hooks", "server_push", "relayed", "upstream", "started",
                 "_phase", "_rewriting", "_whole", "_timed", "_failed", "_status", "_head")

    def __init__(self, policy: Policy, flow: Flow, headers: list[tuple[str, str]], query: str,
                 hooks: Iterable[Hook] = (), *, server_push: bool = False) -> None:
        self.policy = policy
        self.flow = flow
        self.headers = headers
        self.query = query  # as sent (flow.query is redacted)
        self.hooks = tuple(hooks)
        self.server_push = server_push
        self.relayed = Copy(policy.max_body)  # what the client got
        self.upstream = Copy(policy.max_body)  # what the upstream sent, when it differs from that
        self.started = False  # the status line went out
        self._phase = _BODY
        self._rewriting = False
        self._whole = False
        self._timed = False
        self._failed = False
        self._status = 0
        self._head: list[tuple[str, str]] = []

    @property
    def done(self) -> bool:
        return self._phase == _DONE

    def handle(self, event: Event) -> list[Command]:
        """The commands `event` calls for, in order. After a Finish, every event is ignored."""
        if self._phase == _DONE:
            return []
        if type(event) is UpstreamData:  # the hot path first
            return self._data(event)
        if isinstance(event, BodyRead):
            return self._request(event.body)
        if isinstance(event, BodyRefused):
            self.flow.request_body = event.kept
            if event.status is None:
                return [Record(), self._finish(0.0, FlowState.ERROR, event.reason)]
            return [Record(), *self.refuse(event.status, "toolwire_bad_request", event.reason, 0.0, close=True)]
        if isinstance(event, UpstreamHead):
            return self._response_head(event)
        if isinstance(event, UpstreamEnd):
            return self._end(event.at)
        if isinstance(event, UpstreamFailed):
            return self._upstream_failed(event)
        if isinstance(event, UpstreamSilent):
            if self._phase == _WAITING:
                return self.refuse(504, "toolwire_upstream_timeout", f"upstream sent nothing for "
                                   f"{self.policy.timeout:g} s ({self.policy.upstream_shown})", event.at)
            return self._broken(504, "toolwire_upstream_timeout", f"upstream went silent for {self.policy.timeout:g} s "
                                f"after {self.relayed.count} chunks", event.at)
        if isinstance(event, ClientGone):
            if self._phase == _WAITING:
                return [self._finish(event.at, FlowState.ERROR, "client disconnected before the upstream answered")]
            return self._client_gone(event.at)
        if isinstance(event, Stopped):
            if self._phase == _WAITING:
                return self.refuse(503, "toolwire_forwarder_stopped", "forwarder stopped before the upstream answered",
                                   event.at)
            self._store_bodies()
            if event.stalled:
                why = f"client stopped reading for {self.policy.stall:g} s after {self.relayed.count} chunks"
            else:
                why = f"forwarder stopped after {self.relayed.count} chunks"
            return [self._finish(event.at, FlowState.ERROR, why)]
        raise TypeError(f"not an exchange event: {event!r}")

    # -- the request -----------------------------------------------------------------------------

    def refuse(self, status: int, kind: str, message: str, at: float, close: bool = False) -> list[Command]:
        """Answer with an error of the forwarder's own and end the flow (before any response head).
        `close`: the request body was left unread, so the connection cannot carry another."""
        body = next((b for hook in self.hooks if (b := hook.error(kind, message, status)) is not None), None)
        if body is None:
            body = error_body(kind, message, status)
        flow = self.flow
        flow.status = status
        flow.response_headers = [("content-type", "application/json"), ("content-length", str(len(body)))]
        if close:
            flow.response_headers.append(("connection", "close"))
        if flow.replay_of is not None:
            flow.response_headers.append((FLOW_ID_HEADER, str(flow.id)))
        flow.response_body = body
        flow.ttfb_ms = at * 1000.0
        self.started = True
        return [SendHead(status, list(flow.response_headers)), SendData(body, False),
                self._finish(at, FlowState.ERROR, message)]

    def _request(self, body: bytes) -> list[Command]:
        flow = self.flow
        flow.request_body = body
        problem = target_problem(flow.path, self.query)
        if problem is not None:
            return [Record(), *self.refuse(400, "toolwire_bad_target", f"not forwarded: {problem}", 0.0)]
        not_forwarded = self.policy.not_forwarded
        connection_named: set[str] = set()
        sent_length = False
        for name, value in self.headers:
            lower = name.lower()
            if lower == "content-length":
                sent_length = True
            elif lower == "connection":
                connection_named.update(v.strip().lower() for v in value.split(","))
        outgoing = Outgoing(flow.method, flow.path, self.query,
                            [(k, v) for k, v in self.headers
                             if (lower := k.lower()) not in not_forwarded and lower not in connection_named], body)
        for hook in self.hooks:
            try:
                hook.request(flow, outgoing)
            except HookError as exc:
                flow.notes.extend(hook.notes())
                return [Record(), *self.refuse(400, exc.kind, str(exc), 0.0)]
            flow.notes.extend(hook.notes())
        if outgoing.rewritten:
            flow.upstream_request_body = outgoing.body
            # A hook may build the path from the body (Gemini's model name): check it again.
            if (problem := target_problem(outgoing.path, outgoing.query)) is not None:
                return [Record(), *self.refuse(400, "toolwire_bad_target",
                                               f"not forwarded after translation: {problem}", 0.0)]
        if self.policy.upstream_auth:
            if any(name.lower() == "authorization" for name, _ in outgoing.headers):
                flow.notes.append("the upstream URL's credentials were not sent: the request has its own Authorization")
            else:
                outgoing.headers += self.policy.upstream_auth
        self._rewriting = any(hook.rewrites_response for hook in self.hooks)
        self._phase = _WAITING
        target = outgoing.path + (f"?{outgoing.query}" if outgoing.query else "")
        flow.upstream_url = self.policy.upstream_shown + redact_url(target)
        flow.upstream_request_headers = redact_headers(outgoing.headers)
        return [SendUpstream(flow.method, outgoing.path, outgoing.query, outgoing.headers,
                             # No body and no length from the client: send none, as it did.
                             outgoing.body if outgoing.body or sent_length else None),
                Record()]

    def _upstream_failed(self, event: UpstreamFailed) -> list[Command]:
        if self._phase == _WAITING:
            shown = self.policy.upstream_shown
            if event.kind == "connect_timeout":
                return self.refuse(504, "toolwire_upstream_timeout",
                                   f"upstream did not accept a connection within {event.reason} ({shown})", event.at)
            if event.kind == "unreachable":
                return self.refuse(502, "toolwire_upstream_unreachable", f"upstream unreachable: {shown}: "
                                   f"{event.reason}", event.at)
            return self.refuse(502, "toolwire_upstream_error", f"upstream failed before answering: {event.reason}",
                               event.at)
        if self.server_push:  # the server ended its push stream: nothing is missing
            self._store_bodies()
            return [SendData(b"", False), self._finish(event.at, FlowState.COMPLETE)]
        return self._broken(502, "toolwire_upstream_error",
                            f"upstream broke off after {self.relayed.count} chunks: {event.reason}", event.at)

    # -- the response ----------------------------------------------------------------------------

    def _response_head(self, event: UpstreamHead) -> list[Command]:
        flow = self.flow
        status = event.status
        flow.status = status
        headers = [(k, v) for k, v in event.headers if k.lower() not in HOP_BY_HOP]
        if (unsendable := self.policy.unsendable(status, headers)) is not None:
            return self.refuse(502, "toolwire_upstream_error",
                               f"upstream sent a response the forwarder cannot relay: {unsendable}", event.at)
        self._phase = _RELAYING
        self._status = status
        content_type = ""
        length = False
        for name, value in headers:
            lower = name.lower()
            if lower == "content-type":
                content_type = value.lower()
            elif lower == "content-length":
                length = True
        flow.streamed = is_stream_type(content_type) or "ndjson" in content_type or is_stream_path(flow.path)
        # Any body without a length arrives in pieces worth timing, a stream or not.
        self._timed = flow.streamed or not length
        self._failed = status >= 400  # an error body is rewritten whole, into the client's error shape
        if self._rewriting:
            # The body changes, so its length does too.
            headers = [(k, v) for k, v in headers if k.lower() != "content-length"]
            stream = flow.streamed and not self._failed
            for hook in reversed(self.hooks):
                headers = hook.response_headers(flow, headers, stream)
            # A body rewritten whole is rewritten before the status goes out: if that fails, the
            # client gets an error status, not a 200 with an empty body.
            self._whole = not stream
        if flow.replay_of is not None:
            headers.append((FLOW_ID_HEADER, str(flow.id)))
        self._head = headers
        if self._whole:
            return []
        return [self._send_head(status, headers, event.at)]

    def _send_head(self, status: int, headers: list[tuple[str, str]], at: float) -> SendHead:
        self.flow.response_headers = redact_headers(headers)
        self.started = True
        return SendHead(status, headers)

    def _data(self, event: UpstreamData) -> list[Command]:
        flow = self.flow
        t = event.at
        if flow.ttfb_ms is None:
            flow.ttfb_ms = t * 1000.0
        data = event.data
        if self._rewriting:
            upstream = self.upstream
            upstream.add(data)
            if self._whole:
                if upstream.size > upstream.limit:
                    return self._hook_failed(f"upstream response larger than {upstream.limit} bytes: too large "
                                             "to translate whole", t)
                return []  # rewritten whole, at the end
            try:
                for hook in reversed(self.hooks):
                    data = hook.response_chunk(data)
            except HookError as exc:
                return self._hook_failed(str(exc), t)
            if not data:
                return []
        kept = self.relayed.add(data)
        if self._timed and len(flow.chunks) < MAX_CHUNK_TIMINGS:
            flow.chunks.append(Chunk(t, kept))
        return [SendData(data, True)]

    def _end(self, at: float) -> list[Command]:
        flow = self.flow
        if flow.ttfb_ms is None:
            flow.ttfb_ms = at * 1000.0
        commands: list[Command] = []
        tail = b""
        if self._rewriting:
            try:
                if self._whole:
                    tail = b"".join(self.upstream.parts)
                    for hook in reversed(self.hooks):
                        tail = hook.response(tail, self._failed)
                        flow.notes.extend(hook.notes())
                    self._head.append(("content-length", str(len(tail))))
                    commands.append(self._send_head(self._status, self._head, at))
                else:
                    for hook in reversed(self.hooks):
                        # What an outer hook still held goes through the inner ones before their own end.
                        tail = hook.response_chunk(tail) + hook.response_end() if tail else hook.response_end()
                        flow.notes.extend(hook.notes())
            except HookError as exc:
                return self._hook_failed(str(exc), at)
        if tail:
            kept = self.relayed.add(tail)
            if self._timed and len(flow.chunks) < MAX_CHUNK_TIMINGS:
                flow.chunks.append(Chunk(at, kept))
        self._store_bodies()
        commands += [SendData(tail, False), self._finish(at, FlowState.COMPLETE)]
        return commands

    def _hook_failed(self, message: str, at: float) -> list[Command]:
        for hook in self.hooks:
            self.flow.notes.extend(hook.notes())
        return self._broken(502, "toolwire_translate_error", message, at)

    def _broken(self, status: int, kind: str, message: str, at: float) -> list[Command]:
        """End a response that cannot be completed: with an error status while the client has
        had none yet (a body rewritten whole), else by cutting the connection mid-body."""
        if self.started:
            self._store_bodies()
            return [self._finish(at, FlowState.ERROR, message), Abort()]
        if self._rewriting:
            self.flow.upstream_response_body = b"".join(self.upstream.parts)
        return self.refuse(status, kind, message, at)

    def _client_gone(self, at: float) -> list[Command]:
        self._store_bodies()
        relayed = self.relayed
        flow = self.flow
        # A client may hang up once it has the final event, before the upstream closes: the
        # answer is whole. When the copy is cut, the last piece sent stands for the stream's end.
        end = flow.response_body if relayed.size <= relayed.limit else relayed.last
        if self.server_push or (flow.streamed and ends_complete(end, from_path(flow.path))):
            return [self._finish(at, FlowState.COMPLETE)]
        return [self._finish(at, FlowState.ERROR, f"client disconnected after {relayed.count} chunks")]

    def _store_bodies(self) -> None:
        flow = self.flow
        relayed = self.relayed
        upstream = self.upstream
        flow.response_body = b"".join(relayed.parts)
        if self._rewriting:
            flow.upstream_response_body = b"".join(upstream.parts)
        for copy, what in ((relayed, "response"), (upstream, "upstream response")):
            if copy.size > copy.limit:
                flow.notes.append(f"{what} of {copy.size} bytes: only its first {copy.limit} bytes are recorded "
                                  "(all of it was relayed)")
        if relayed.count > len(flow.chunks) >= MAX_CHUNK_TIMINGS:
            flow.notes.append(f"only the first {MAX_CHUNK_TIMINGS} chunk timings are recorded")

    def _finish(self, at: float, state: FlowState, error: str | None = None) -> Finish:
        self._phase = _DONE
        flow = self.flow
        flow.latency_ms = at * 1000.0
        flow.error = error
        return Finish(state, error)


# -- WebSocket sessions --------------------------------------------------------------------------
# An upgrade request is an exchange too: the same access checks, request hooks (credentials, replay
# marking), refusals and recording, then frames both ways instead of a body. Frames are relayed as
# the libraries on each side decode them (uvicorn's websockets implementation, aiohttp's client):
# nothing here frames bytes. Pings and pongs are relayed end to end (a client's ping is answered by
# the upstream's pong, and the other way), close codes and reasons relayed and noted.

# Handshake fields each side's library writes itself; relaying them would double or contradict them.
HANDSHAKE = frozenset({"sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions",
                       "sec-websocket-protocol", "sec-websocket-accept"})
# What an upstream answers an upgrade at a path it serves over HTTP only (or not at all).
_NO_SOCKETS_THERE = frozenset({400, 404, 405, 426, 501})
# Close codes that say why a connection ended without a close frame (RFC 6455 §7.4.1): never sent.
_UNSENDABLE_CLOSE = {1005: 1000, 1006: 1001, 1015: 1001}


@dataclass(frozen=True, slots=True)
class SocketOpened:
    """The upstream accepted the upgrade: its handshake head and the subprotocol it chose."""

    status: int
    headers: list[tuple[str, str]]
    subprotocol: str | None
    at: float


@dataclass(frozen=True, slots=True)
class SocketRefused:
    """The upstream answered the upgrade with another status (no socket)."""

    status: int
    headers: list[tuple[str, str]]
    at: float


@dataclass(frozen=True, slots=True)
class FrameIn:
    """A data frame from the client (`from_client`) or from the upstream."""

    from_client: bool
    text: bool
    payload: bytes
    at: float


@dataclass(frozen=True, slots=True)
class ControlIn:
    """A ping (`ping`) or pong from the client (`from_client`) or from the upstream."""

    from_client: bool
    ping: bool
    payload: bytes
    at: float


@dataclass(frozen=True, slots=True)
class Closed:
    """One side closed the socket (or lost it: code 1006), with its code and reason."""

    by_client: bool
    code: int
    reason: str
    at: float


SocketEvent = SocketOpened | SocketRefused | FrameIn | ControlIn | Closed | UpstreamFailed | Stopped


@dataclass(frozen=True, slots=True)
class OpenSocket:
    """Open the upstream socket (after a Record)."""

    path: str
    query: str
    headers: list[tuple[str, str]]
    subprotocols: tuple[str, ...]
    compress: bool  # the client offered permessage-deflate: offered upstream too


@dataclass(frozen=True, slots=True)
class Accept:
    """Complete the client's handshake."""

    subprotocol: str | None
    headers: list[tuple[str, str]]


@dataclass(frozen=True, slots=True)
class SendFrame:
    to_client: bool
    text: bool
    payload: bytes


@dataclass(frozen=True, slots=True)
class SendControl:
    to_client: bool
    ping: bool  # else a pong
    payload: bytes


@dataclass(frozen=True, slots=True)
class Close:
    """Close one side's socket with `code` and `reason` (a no-op on a side already closed)."""

    client: bool
    code: int
    reason: str


SocketCommand = OpenSocket | Accept | SendFrame | SendControl | Close | Record | SendHead | SendData | Finish


class SocketExchange(Exchange):
    """One upgrade request and the socket it opens. `upgrade()` decides whether it goes upstream;
    then `socket_event` answers each event of either side."""

    __slots__ = ("_open", "_kept", "_frames", "_dropped")
    # The store takes frames out of flow.chunks once they are on disk (writer.py), so a long session
    # holds a window of them, not all: the counts here are the machine's own, never len(flow.chunks),
    # and the frames' concatenation (response_body) is made by the store from what it wrote.

    def __init__(self, policy: Policy, flow: Flow, headers: list[tuple[str, str]], query: str,
                 hooks: Iterable[Hook] = ()) -> None:
        super().__init__(policy, flow, headers, query, hooks)
        flow.websocket = True
        self._open = False
        self._kept = 0  # frame record bytes kept
        self._frames = 0  # data frames relayed
        self._dropped = 0  # of which not recorded, past the limits

    def upgrade(self) -> Sequence[Command | SocketCommand]:
        flow = self.flow
        problem = target_problem(flow.path, self.query)
        if problem is not None:
            return [Record(), *self.refuse(400, "toolwire_bad_target", f"not forwarded: {problem}", 0.0)]
        if flow.mode is not Mode.PASSTHROUGH:
            # Frames are not translated or repaired; a 426 is what makes Codex fall back to HTTP,
            # where they are (any other status fails its turn).
            what = f"translates {flow.translate}" if flow.mode is Mode.TRANSLATE else "repairs requests"
            return [Record(), *self.refuse(426, "toolwire_websocket_refused",
                                           f"WebSockets are not relayed here: this route {what}, which "
                                           "frames cannot go through; use HTTP", 0.0)]
        connection_named: set[str] = set()
        subprotocols: list[str] = []
        compress = False
        for name, value in self.headers:
            lower = name.lower()
            if lower == "connection":
                connection_named.update(v.strip().lower() for v in value.split(","))
            elif lower == "sec-websocket-protocol":
                subprotocols += [p.strip() for p in value.split(",") if p.strip()]
            elif lower == "sec-websocket-extensions":
                compress = compress or "permessage-deflate" in value.lower()
        skipped = self.policy.not_forwarded | HANDSHAKE
        outgoing = Outgoing(flow.method, flow.path, self.query,
                            [(k, v) for k, v in self.headers
                             if (lower := k.lower()) not in skipped and lower not in connection_named], b"")
        for hook in self.hooks:
            hook.request(flow, outgoing)  # the chain of a passthrough: credentials, replay marking
            flow.notes.extend(hook.notes())
        if self.policy.upstream_auth and not any(k.lower() == "authorization" for k, _ in outgoing.headers):
            outgoing.headers += self.policy.upstream_auth
        self._phase = _WAITING
        target = outgoing.path + (f"?{outgoing.query}" if outgoing.query else "")
        flow.upstream_url = self.policy.upstream_shown + redact_url(target)
        flow.upstream_request_headers = redact_headers(outgoing.headers)
        return [Record(), OpenSocket(outgoing.path, outgoing.query, outgoing.headers, tuple(subprotocols), compress)]

    def socket_event(self, event: SocketEvent) -> Sequence[Command | SocketCommand]:
        if self._phase == _DONE:
            return []
        if type(event) is FrameIn:
            return self._frame(event)
        if isinstance(event, ControlIn):
            # Relayed as it came, recorded as nothing: no frame record, and pings are no conversation.
            return [SendControl(not event.from_client, event.ping, event.payload)] if self._open else []
        if isinstance(event, SocketOpened):
            flow = self.flow
            flow.status = event.status
            headers = [(k, v) for k, v in event.headers
                       if (lower := k.lower()) not in HOP_BY_HOP and lower not in HANDSHAKE
                       and lower not in ("content-length", "date", "server")]
            flow.response_headers = redact_headers(event.headers)
            if flow.replay_of is not None:
                headers.append((FLOW_ID_HEADER, str(flow.id)))  # as an HTTP replay's answer: replay learns the id
            flow.ttfb_ms = event.at * 1000.0
            self._open = self.started = True
            self._phase = _RELAYING
            return [Accept(event.subprotocol, headers)]
        if isinstance(event, SocketRefused):
            if event.status in _NO_SOCKETS_THERE:
                # An upstream (or gateway) that serves this path over HTTP only: Codex falls back to
                # HTTP on a 426 alone, and fails the turn on anything else.
                return self.refuse(426, "toolwire_websocket_refused",
                                   f"upstream answered the WebSocket upgrade with {event.status}: it takes no "
                                   f"sockets at {self.flow.path} ({self.policy.upstream_shown}); use HTTP", event.at)
            # Anything else (401, 429, 5xx) is the upstream's answer to this client: relayed as it is.
            return self.refuse(event.status, "toolwire_upstream_refused_websocket",
                               f"upstream answered the WebSocket upgrade with {event.status} "
                               f"({self.policy.upstream_shown})", event.at)
        if isinstance(event, Closed):
            who, other = ("client", "upstream") if event.by_client else ("upstream", "client")
            code = _UNSENDABLE_CLOSE.get(event.code, event.code)
            lost = event.code == 1006
            self.flow.notes.append(f"{who} {'lost the connection' if lost else 'closed the socket'}: "
                                   f"{event.code}{f' {event.reason!r}' if event.reason else ''}")
            self._counted()
            state, error = (FlowState.ERROR, f"{who} lost the connection after {self._frames} frames") if lost \
                else (FlowState.COMPLETE, None)
            return [Close(not event.by_client, code, event.reason), self._finish(event.at, state, error)]
        if isinstance(event, UpstreamFailed):
            if self._phase == _WAITING:
                return self._upstream_failed(event)
            self._counted()
            why = f"upstream socket failed after {self._frames} frames: {event.reason}"
            return [Close(True, 1011, "upstream failed"), self._finish(event.at, FlowState.ERROR, why)]
        if isinstance(event, Stopped):
            if self._phase == _WAITING:
                return self.refuse(503, "toolwire_forwarder_stopped", "forwarder stopped before the upstream answered",
                                   event.at)
            self._counted()
            return [Close(True, 1001, "forwarder stopped"), Close(False, 1001, "forwarder stopped"),
                    self._finish(event.at, FlowState.ERROR, f"forwarder stopped after {self._frames} frames")]
        raise TypeError(f"not a socket event: {event!r}")

    def _frame(self, event: FrameIn) -> Sequence[Command | SocketCommand]:
        flow = self.flow
        self._frames += 1
        payload = event.payload
        # The record stays a prefix of the session, each frame whole: a frame cut short, or one
        # missing between two kept, would read as another conversation.
        if not self._dropped and self._kept + len(payload) + 1 <= self.policy.max_body \
                and self._frames <= MAX_CHUNK_TIMINGS:
            chunk = frame_chunk(event.at, Direction.CLIENT if event.from_client else Direction.SERVER, event.text,
                                payload)
            self._kept += len(chunk.data)
            flow.chunks.append(chunk)
        else:
            self._dropped += 1
        return [SendFrame(not event.from_client, event.text, payload)]

    def _counted(self) -> None:
        flow = self.flow
        if self._dropped:
            flow.notes.append(f"{self._frames} frames relayed, the first {self._frames - self._dropped} recorded "
                              f"({self.policy.max_body} bytes or {MAX_CHUNK_TIMINGS} frames at most)")
