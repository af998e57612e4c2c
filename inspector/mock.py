"""A fake LLM upstream: speaks openai-chat, openai-responses, anthropic and gemini, as JSON or as
streams (tool calls included), from a script of canned responses or from exported fixtures.

Tests, the demo and the benchmark point the forwarder at it; `toolwire-inspect mock FIXTURE...`
serves recorded turns offline. It keeps the exact bytes of every request it received."""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson

from .flow import Flow, frames
from .proxy.access import AccessPolicy, Refusal
from .proxy.server import Served, ServerThread, request_target
from .redact import SECRET_QUERY_KEYS, query_pairs
from .sockets import TURN_METHOD
from .wire import sse
from .wire.canned import Call
from .wire.dialect import Dialect, asks_for_sse, from_path, is_stream_path
from .wire.check import check_request
from .wire.dialects import Framing, home
from .wire.dialects.gemini.stream import JSON_ARRAY
from .wire.frames import Direction
from .wire.sse import SSE as SSE_FRAMING
from .wire.sse import encode as sse_event
from .wire.violations import Effect, Severity

JSON = "application/json"
SSE = "text/event-stream"


@dataclass(slots=True)
class Canned:
    """One scripted response. With `chunks`, the body is streamed: each chunk is sent after its
    delay (seconds), with no content-length, as a real provider streams."""

    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=lambda: [("content-type", JSON)])
    body: bytes = b""
    chunks: list[tuple[float, bytes]] | None = None
    delay: float = 0.0  # before the status line (an upstream that thinks, or hangs)
    # Tests: after `hold_after` chunks, wait (up to 10 s) until `hold` is set, so a test decides
    # exactly when the rest of the stream may come.
    hold: threading.Event | None = None
    hold_after: int = 0
    cut_after: int | None = None  # drop the connection after this many chunks (an upstream crash)
    # A recorded WebSocket session (its upgrade answered 101): (from the server?, delay since the
    # frame before, text?, payload) in order. The mock waits for each client frame and sends each
    # server frame after its delay: the recorded pacing.
    frames: list[tuple[bool, float, bool, bytes]] | None = None


@dataclass(slots=True)
class Received:
    """A request exactly as it reached the mock."""

    method: str
    path: str  # raw, as sent
    query: str
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        name = name.lower()
        return next((v for k, v in self.headers if k.lower() == name), None)


# -- response builders ---------------------------------------------------------------------------

def json_response(payload: Any, status: int = 200, headers: Iterable[tuple[str, str]] = ()) -> Canned:
    return Canned(status=status, headers=[("content-type", JSON), *headers], body=orjson.dumps(payload))


def sse_response(events: Iterable[Any], *, interval: float = 0.0, status: int = 200) -> Canned:
    """Events are dicts (sent as `data: {json}`), strings (`data: <string>`, e.g. "[DONE]") or
    (event name, dict) pairs (Anthropic and Responses name their events)."""
    chunks = []
    for event in events:
        name, data = event if isinstance(event, tuple) else ("", event)
        text = data if isinstance(data, str) else orjson.dumps(data).decode()
        chunks.append((interval, sse_event(text.encode(), name)))
    return Canned(status=status, headers=[("content-type", SSE), ("cache-control", "no-cache")], chunks=chunks)


def framed(events: list[Any], framing: Framing, *, interval: float = 0.0) -> Canned:
    """`events` in a dialect's framing (`Home.framing`), sent event by event."""
    chunks = framing.encode(events)
    return Canned(headers=[("content-type", framing.content_types[0])],
                  chunks=[(interval, chunk) for chunk in chunks[:len(events)]] + [(0.0, c) for c in chunks[len(events):]])


def gemini_json_stream(events: list[dict], *, interval: float = 0.0) -> Canned:
    """`streamGenerateContent` without `alt=sse`: one JSON array, sent element by element."""
    return framed(events, JSON_ARRAY, interval=interval)


def reply(dialect: Dialect | None, *, stream: bool, text: str = "Hello from the mock upstream.",
          calls: Iterable[Call] = (), interval: float = 0.0, pieces: int = 3, sse: bool = True) -> Canned:
    """A well-formed answer in `dialect`, streamed or not (Gemini: `sse=False` for the JSON array)."""
    calls = list(calls)
    parts = home(dialect or Dialect.OPENAI_CHAT)
    if parts.mock_response is None or parts.mock_events is None:
        return json_response({"jsonrpc": "2.0", "id": 1, "result": {}})  # MCP: an empty result
    if not stream:
        return json_response(parts.mock_response(text, calls))
    events = parts.mock_events(text, calls, pieces=pieces)
    framing = parts.framing if sse or parts.framing_for is None else parts.framing_for("")
    if framing.content_types == SSE_FRAMING.content_types:
        return sse_response(events, interval=interval)
    return framed(events, framing, interval=interval)


def default_responder(request: Received, *, interval: float = 0.0, pieces: int = 3) -> Canned:
    """What an unscripted mock answers: a plain text reply in the request's dialect, streamed when
    the request asks for a stream. A body that is not JSON gets the 400 the providers send."""
    dialect = from_path(request.path)
    if request.method == "POST" and dialect is not None and home(dialect).mock_response is not None:
        try:
            payload = orjson.loads(request.body)
        except orjson.JSONDecodeError:
            return json_response({"error": {"message": "We could not parse the JSON body of your request.",
                                            "type": "invalid_request_error", "param": None, "code": None}}, 400)
        stream = is_stream_path(request.path) or (isinstance(payload, dict) and payload.get("stream") is True)
        return reply(dialect, stream=stream, interval=interval, pieces=pieces, sse=asks_for_sse(request.query))
    return json_response({"error": {"message": f"mock upstream: no route for {request.method} {request.path}",
                                    "type": "not_found"}}, 404)


def provider_refusal(request: Received) -> Canned | None:
    """The 400 the provider would send for `request`, as the checker judges it, or None: the first
    finding the provider rejects (an error whose effect is `rejects`) in the dialect's error body,
    with the rule id after the message so the refusal says which rule stands for the provider."""
    dialect = from_path(request.path)
    error = None if dialect is None else home(dialect).mock_error
    if request.method != "POST" or dialect is None or error is None:
        return None
    try:
        payload = orjson.loads(request.body)
    except orjson.JSONDecodeError:
        return None  # the default responder answers what no provider parses
    for violation in check_request(payload, dialect):
        if violation.severity is Severity.ERROR and violation.effect is Effect.REJECTS:
            return json_response(error(f"{violation.message} ({violation.rule})", violation.pointer), 400)
    return None


# -- fixtures -------------------------------------------------------------------------------------

def _body_value(body: bytes) -> Any:
    try:
        return ("json", orjson.loads(body))
    except orjson.JSONDecodeError:
        return ("bytes", body)


# Framing is ours to redo (the body length may differ once re-serialised); a body loaded decoded
# (formats/load.py) is served decoded.
_NOT_REPLAYED = frozenset({"content-length", "transfer-encoding", "connection"})


# What HTTP/1.1 can carry in a header (RFC 9110): a name of token characters, a value of visible
# Latin-1 characters, spaces and tabs. The server would raise on anything else mid-response.
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_HEADER_VALUE = re.compile(r"[\t\x20-\x7e\x80-\xff]*")


@dataclass(slots=True)
class FixtureRoute:
    """One recorded turn: the request it answers and the response it replays.

    Matching rule (docs/fixtures.md, "mock"): the method, the path, the query without its secrets, and the
    body (JSON-equal when JSON, else byte-equal) of what went upstream. Pacing: stream chunks are
    sent at their recorded times (relative to the request) unless the mock is not `realtime`."""

    source: str
    method: str
    path: str  # path and query, as sent upstream
    body: Any  # ("json", value) or ("bytes", raw)
    canned: Canned

    @classmethod
    def load(cls, path: str | Path) -> list[FixtureRoute]:
        """The routes of every turn in a fixture, HAR file or cassette (a load.LoadError if none)."""
        from .formats.registry import load

        return [cls.from_flow(turn.flow, turn.source) for turn in load(path)]

    @classmethod
    def from_fixture(cls, data: dict, source: str = "<fixture>") -> FixtureRoute:
        from .formats.load import flow_from_fixture

        return cls.from_flow(flow_from_fixture(data, source), source)

    @classmethod
    def from_flow(cls, flow: Flow, source: str) -> FixtureRoute:
        if flow.status is None:
            raise ValueError(f"{source}: the recorded turn has no response to replay ({flow.error})")
        parts = urlsplit(flow.upstream_url)
        target = (parts.path or flow.path) + (f"?{parts.query}" if parts.query else "")
        headers = [(k, v) for k, v in flow.response_headers if k.lower() not in _NOT_REPLAYED]
        for name, value in headers:
            if not _HEADER_NAME.fullmatch(name) or not _HEADER_VALUE.fullmatch(value):
                raise ValueError(f"{source}: the recorded response header {name[:40]!r} cannot be sent as it is "
                                 "recorded (a name that is no HTTP token, or a value with a control character or "
                                 "beyond Latin-1)")
        if flow.websocket or flow.method == TURN_METHOD:
            canned = Canned(status=101, headers=[], frames=_socket_script(flow))
            return cls(source, "GET", target, None, canned)
        if flow.upstream_response_body is not None:
            # Translated: the client got our translation; as the upstream, replay what it sent.
            raw = flow.upstream_response_body
            canned = Canned(status=flow.status, headers=headers,
                            **({"chunks": [(0.0, raw)]} if flow.streamed else {"body": raw}))
        elif flow.chunks:
            chunks, previous = [], 0.0
            for chunk in flow.chunks:
                chunks.append((max(0.0, chunk.t - previous), chunk.data))
                previous = chunk.t
            canned = Canned(status=flow.status, headers=headers, chunks=chunks)
        else:
            canned = Canned(status=flow.status, headers=headers, body=flow.response_body)
        return cls(source, flow.method, target, _body_value(flow.sent_upstream), canned)

    def matches(self, request: Received) -> bool:
        path, _, query = self.path.partition("?")
        if self.canned.frames is not None:  # a socket: its upgrade has no body to compare
            return request.method == "GET" and request.path == path and _public_query(request.query) == \
                _public_query(query)
        return (request.method == self.method and request.path == path
                and _public_query(request.query) == _public_query(query)
                and _body_value(request.body) == self.body)


def _socket_script(flow: Flow) -> list[tuple[bool, float, bool, bytes]]:
    """What a mock replays of a recorded socket: its frames; of one turn of a socket (a fixture of a
    Responses-over-WebSocket turn), the client's response.create, then each recorded event as the
    frame it came in, at its recorded time."""
    script: list[tuple[bool, float, bool, bytes]] = []
    if flow.websocket:
        previous = flow.started_at
        for frame in frames(flow):
            script.append((frame.direction is Direction.SERVER, max(0.0, frame.at - previous), frame.text,
                           frame.payload))
            previous = frame.at
        return script
    script.append((False, 0.0, True, flow.request_body))
    previous = 0.0
    for chunk in flow.chunks:
        for event in sse.parse_all(chunk.data):
            script.append((True, max(0.0, chunk.t - previous), True, event.data.encode()))
            previous = chunk.t
    return script


def _public_query(query: str) -> list[tuple[str, str]]:
    """A query without its secrets: fixtures hold them redacted, live requests hold the real ones."""
    return [(k, v) for k, v in query_pairs(query) if k.lower() not in SECRET_QUERY_KEYS]


# -- the server ----------------------------------------------------------------------------------

class MockUpstream(Served):
    """Answers each request with the next canned response of the script; when the script is
    empty, with the first fixture that matches, else with `responder` (a default reply).

    `received` holds every request exactly as it arrived; `disconnects` counts responses the
    client cut off before the end."""

    def __init__(
        self,
        script: Iterable[Canned] = (),
        *,
        fixtures: Iterable[FixtureRoute] = (),
        responder: Callable[[Received], Canned] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        realtime: bool = True,
        allow_hosts: Iterable[str] = (),
        allow_origins: Iterable[str] = (),
        tls: tuple[str, str] | None = None,
    ) -> None:
        self._script: deque[Canned] = deque(script)
        self.fixtures = list(fixtures)
        self.responder = responder or default_responder
        self.realtime = realtime  # False: fixture chunks are sent without their recorded delays
        self.received: list[Received] = []
        self.disconnects = 0
        self._lock = threading.Lock()
        self._finished = threading.Condition(self._lock)
        self._answered = 0
        # The forwarder's front door: it may serve recorded conversations.
        self.access = AccessPolicy(host, allow_hosts=allow_hosts, allow_origins=allow_origins)
        # tls: (certificate chain file, key file), to stand for a provider reached over HTTPS.
        self._server = ServerThread(self._app, host, port, name="toolwire-mock", tls=tls, websocket=True)

    def start(self) -> MockUpstream:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    def __enter__(self) -> MockUpstream:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def push(self, *canned: Canned) -> None:
        with self._lock:
            self._script.extend(canned)

    def wait_answered(self, count: int, timeout: float = 10.0) -> bool:
        """Block until `count` responses have ended (sent whole or cut off by the client)."""
        with self._finished:
            return self._finished.wait_for(lambda: self._answered >= count, timeout)

    def _choose(self, request: Received) -> Canned:
        with self._lock:
            self.received.append(request)
            if self._script:
                return self._script.popleft()
        for route in self.fixtures:
            if route.matches(request):
                return route.canned
        if self.fixtures:
            known = ", ".join(f"{r.method} {r.path} ({r.source})" for r in self.fixtures)
            return json_response({"error": {"type": "toolwire_mock_no_match",
                                            "message": f"no fixture matches {request.method} {request.path} "
                                                       f"with this body; fixtures: {known}"}}, 404)
        return self.responder(request)

    async def _app(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "websocket":
            await self._socket(scope, receive, send)
            return
        if scope["type"] != "http":
            return
        raw_path, _, query = request_target(scope).partition(b"?")
        raw_path, refused = self.access.admit(scope["headers"], raw_path)
        if refused is not None:
            await refused.send(send)
            return
        parts = []
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            parts.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        request = Received(
            method=scope["method"], path=raw_path.decode("latin-1"), query=query.decode("latin-1"),
            headers=[(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]],
            body=b"".join(parts),
        )
        canned = self._choose(request)
        try:
            await self._answer(canned, receive, send)
        finally:
            with self._finished:
                self._answered += 1
                self._finished.notify_all()

    async def _socket(self, scope: dict, receive: Callable, send: Callable) -> None:
        """A WebSocket upgrade: answered by the recorded socket (or socket turn) its path matches,
        frame by frame at the recorded pacing; refused with 404 when none does."""
        raw_path, _, query = request_target(scope).partition(b"?")
        raw_path, refused = self.access.admit(scope["headers"], raw_path)
        if refused is not None:
            await refused.send(send, "websocket")
            return
        if (await receive())["type"] != "websocket.connect":
            return
        request = Received(method="GET", path=raw_path.decode("latin-1"), query=query.decode("latin-1"),
                           headers=[(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]], body=b"")
        with self._lock:
            self.received.append(request)
        route = next((r for r in self.fixtures if r.canned.frames is not None and r.matches(request)), None)
        try:
            if route is None:
                known = ", ".join(f"{r.path} ({r.source})" for r in self.fixtures if r.canned.frames is not None)
                await Refusal(404, "toolwire_mock_no_match", f"no recorded socket at {request.path}; sockets: "
                              f"{known or 'none'}").send(send, "websocket")
                return
            await send({"type": "websocket.accept"})
            for from_server, delay, text, payload in route.canned.frames or ():
                if not from_server:
                    message = await receive()  # the client's next frame, whatever it holds
                    if message["type"] == "websocket.disconnect":
                        return
                    continue
                if delay and self.realtime:
                    await asyncio.sleep(delay)
                await send({"type": "websocket.send", **({"text": payload.decode("utf-8", "replace")} if text
                                                          else {"bytes": payload})})
            await send({"type": "websocket.close", "code": 1000})
        finally:
            with self._finished:
                self._answered += 1
                self._finished.notify_all()

    async def _answer(self, canned: Canned, receive: Callable, send: Callable) -> None:
        if canned.delay:
            await asyncio.sleep(canned.delay)
        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in canned.headers]
        if canned.chunks is None:
            headers.append((b"content-length", str(len(canned.body)).encode()))
            await send({"type": "http.response.start", "status": canned.status, "headers": headers})
            await send({"type": "http.response.body", "body": canned.body, "more_body": False})
            return
        await send({"type": "http.response.start", "status": canned.status, "headers": headers})
        gone = asyncio.ensure_future(receive())  # resolves when the client hangs up
        try:
            for index, (delay, data) in enumerate(canned.chunks):
                if index == canned.cut_after:
                    raise _CutOff()
                if canned.hold is not None and index == canned.hold_after:
                    held = asyncio.get_running_loop().run_in_executor(None, canned.hold.wait, 10.0)
                    await asyncio.wait((gone, held), return_when=asyncio.FIRST_COMPLETED)
                if delay and self.realtime:
                    await asyncio.wait((gone,), timeout=delay)
                if gone.done():
                    with self._lock:
                        self.disconnects += 1
                    return
                await send({"type": "http.response.body", "body": data, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            gone.cancel()


class _CutOff(Exception):
    """Raised out of the app mid-response: uvicorn then drops the connection, as a crashing
    upstream would."""


logging.getLogger("uvicorn.error").addFilter(
    lambda record: not (record.exc_info and isinstance(record.exc_info[1], _CutOff))
)
