"""A fake LLM upstream: speaks openai-chat, openai-responses, anthropic and gemini, as JSON or as
streams (tool calls included), from a script of canned responses or from exported fixtures.

Tests, the demo and the benchmark point the forwarder at it; `toolwire-inspect mock FIXTURE...`
serves recorded turns offline. It keeps the exact bytes of every request it received."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson

from .flow import Flow
from .proxy.access import AccessPolicy
from .proxy.server import ServerThread, request_target
from .redact import SECRET_QUERY_KEYS, query_pairs
from .wire.dialect import Dialect, asks_for_sse, from_path, is_stream_path
from .wire.sse import encode as sse_event

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


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call the fake model makes: arguments as the JSON text the provider sends."""

    name: str
    arguments: str = "{}"
    id: str = "call_1"


def chat_completion(text: str | None = None, calls: Iterable[Call] = (), model: str = "gpt-4o-mini") -> dict:
    calls = list(calls)
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in calls
        ]
    return {
        "id": "chatcmpl-mock", "object": "chat.completion", "created": 1700000000, "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def chat_stream(text: str | None = None, calls: Iterable[Call] = (), model: str = "gpt-4o-mini",
                pieces: int = 3) -> list[Any]:
    """The `data:` payloads of a streamed chat completion, `[DONE]` included."""
    calls = list(calls)
    base = {"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1700000000, "model": model}

    def chunk(delta: dict, finish: str | None = None) -> dict:
        return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    events: list[Any] = [chunk({"role": "assistant", "content": "" if text is not None else None})]
    for part in _split(text or "", pieces):
        events.append(chunk({"content": part}))
    for index, call in enumerate(calls):
        events.append(chunk({"tool_calls": [{"index": index, "id": call.id, "type": "function",
                                             "function": {"name": call.name, "arguments": ""}}]}))
        for part in _split(call.arguments, pieces):
            events.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]}))
    events.append(chunk({}, "tool_calls" if calls else "stop"))
    events.append("[DONE]")
    return events


def responses_result(text: str | None = None, calls: Iterable[Call] = (), model: str = "gpt-4o-mini") -> dict:
    output: list[dict] = []
    if text is not None:
        output.append({"type": "message", "id": "msg_mock", "status": "completed", "role": "assistant",
                       "content": [{"type": "output_text", "text": text, "annotations": []}]})
    for n, call in enumerate(calls):
        output.append({"type": "function_call", "id": f"fc_mock_{n}", "call_id": call.id, "name": call.name,
                       "arguments": call.arguments, "status": "completed"})
    return {
        "id": "resp_mock", "object": "response", "created_at": 1700000000, "status": "completed", "model": model,
        "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
        "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                  "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}},
    }


def responses_stream(text: str | None = None, calls: Iterable[Call] = (), model: str = "gpt-4o-mini",
                     pieces: int = 3) -> list[tuple[str, dict]]:
    calls = list(calls)
    final = responses_result(text, calls, model)
    in_progress = {**final, "status": "in_progress", "output": []}
    events: list[tuple[str, dict]] = []

    def emit(kind: str, **data: Any) -> None:
        events.append((kind, {"type": kind, "sequence_number": len(events), **data}))

    emit("response.created", response=in_progress)
    for index, item in enumerate(final["output"]):
        if item["type"] == "message":
            emit("response.output_item.added", output_index=index, item={**item, "status": "in_progress", "content": []})
            part = {"type": "output_text", "text": "", "annotations": []}
            emit("response.content_part.added", item_id=item["id"], output_index=index, content_index=0, part=part)
            for piece in _split(text or "", pieces):
                emit("response.output_text.delta", item_id=item["id"], output_index=index, content_index=0,
                     delta=piece, logprobs=[])
            emit("response.output_text.done", item_id=item["id"], output_index=index, content_index=0,
                 text=text, logprobs=[])
            emit("response.content_part.done", item_id=item["id"], output_index=index, content_index=0,
                 part=item["content"][0])
        else:
            emit("response.output_item.added", output_index=index,
                 item={**item, "arguments": "", "status": "in_progress"})
            for piece in _split(item["arguments"], pieces):
                emit("response.function_call_arguments.delta", item_id=item["id"], output_index=index, delta=piece)
            emit("response.function_call_arguments.done", item_id=item["id"], output_index=index,
                 arguments=item["arguments"])
        emit("response.output_item.done", output_index=index, item=item)
    emit("response.completed", response=final)
    return events


def anthropic_message(text: str | None = None, calls: Iterable[Call] = (),
                      model: str = "claude-sonnet-4-6") -> dict:
    content: list[dict] = []
    if text is not None:
        content.append({"type": "text", "text": text})
    for call in calls:
        content.append({"type": "tool_use", "id": call.id, "name": call.name, "input": orjson.loads(call.arguments)})
    return {
        "id": "msg_mock", "type": "message", "role": "assistant", "model": model, "content": content,
        "stop_reason": "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn",
        "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def anthropic_stream(text: str | None = None, calls: Iterable[Call] = (), model: str = "claude-sonnet-4-6",
                     pieces: int = 3) -> list[tuple[str, dict]]:
    final = anthropic_message(text, calls, model)
    events: list[tuple[str, dict]] = [
        ("message_start", {"type": "message_start",
                           "message": {**final, "content": [], "stop_reason": None,
                                       "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    ]
    for index, block in enumerate(final["content"]):
        if block["type"] == "text":
            events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {"type": "text", "text": ""}}))
            events += [("content_block_delta", {"type": "content_block_delta", "index": index,
                                                "delta": {"type": "text_delta", "text": p}})
                       for p in _split(block["text"], pieces)]
        else:
            events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {**block, "input": {}}}))
            events += [("content_block_delta", {"type": "content_block_delta", "index": index,
                                                "delta": {"type": "input_json_delta", "partial_json": p}})
                       for p in _split(orjson.dumps(block["input"]).decode(), pieces)]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": final["stop_reason"], "stop_sequence": None},
                                     "usage": {"output_tokens": 5}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def gemini_response(text: str | None = None, calls: Iterable[Call] = (), model: str = "gemini-2.5-flash") -> dict:
    parts: list[dict] = []
    if text is not None:
        parts.append({"text": text})
    for call in calls:
        parts.append({"functionCall": {"name": call.name, "args": orjson.loads(call.arguments)}})
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": model,
    }


def gemini_stream(text: str | None = None, calls: Iterable[Call] = (), model: str = "gemini-2.5-flash",
                  pieces: int = 3) -> list[dict]:
    """Gemini streams whole candidates: text in pieces, each function call in one part."""
    events = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": p}]}, "index": 0}], "modelVersion": model}
        for p in _split(text or "", pieces)
    ]
    last = gemini_response(None, calls, model)
    events.append(last)
    return events


def gemini_json_stream(events: list[dict], *, interval: float = 0.0) -> Canned:
    """`streamGenerateContent` without `alt=sse`: one JSON array, sent element by element."""
    chunks = [(interval, (b"[" if n == 0 else b",\r\n") + orjson.dumps(e)) for n, e in enumerate(events)]
    chunks.append((0.0, b"]"))
    return Canned(headers=[("content-type", JSON)], chunks=chunks)


def _split(text: str, pieces: int) -> list[str]:
    """`text` in exactly `pieces` parts (fewer only when it has fewer characters)."""
    count = max(1, min(pieces, len(text)))
    size, extra = divmod(len(text), count)
    parts, start = [], 0
    for n in range(count):
        end = start + size + (1 if n < extra else 0)
        parts.append(text[start:end])
        start = end
    return [p for p in parts if p]


def reply(dialect: Dialect | None, *, stream: bool, text: str = "Hello from the mock upstream.",
          calls: Iterable[Call] = (), interval: float = 0.0, pieces: int = 3, sse: bool = True) -> Canned:
    """A well-formed answer in `dialect`, streamed or not (Gemini: `sse=False` for the JSON array)."""
    calls = list(calls)
    if dialect is Dialect.OPENAI_RESPONSES:
        return (sse_response(responses_stream(text, calls, pieces=pieces), interval=interval) if stream
                else json_response(responses_result(text, calls)))
    if dialect is Dialect.ANTHROPIC:
        return (sse_response(anthropic_stream(text, calls, pieces=pieces), interval=interval) if stream
                else json_response(anthropic_message(text, calls)))
    if dialect is Dialect.GEMINI:
        if not stream:
            return json_response(gemini_response(text, calls))
        events = gemini_stream(text, calls, pieces=pieces)
        return sse_response(events, interval=interval) if sse else gemini_json_stream(events, interval=interval)
    if dialect is Dialect.OPENAI_CHAT or dialect is None:
        return (sse_response(chat_stream(text, calls, pieces=pieces), interval=interval) if stream
                else json_response(chat_completion(text, calls)))
    return json_response({"jsonrpc": "2.0", "id": 1, "result": {}})


def default_responder(request: Received, *, interval: float = 0.0, pieces: int = 3) -> Canned:
    """What an unscripted mock answers: a plain text reply in the request's dialect, streamed when
    the request asks for a stream. A body that is not JSON gets the 400 the providers send."""
    dialect = from_path(request.path)
    if request.method == "POST" and dialect in (Dialect.OPENAI_CHAT, Dialect.OPENAI_RESPONSES, Dialect.ANTHROPIC,
                                                Dialect.GEMINI):
        try:
            payload = orjson.loads(request.body)
        except orjson.JSONDecodeError:
            return json_response({"error": {"message": "We could not parse the JSON body of your request.",
                                            "type": "invalid_request_error", "param": None, "code": None}}, 400)
        stream = is_stream_path(request.path) or (isinstance(payload, dict) and payload.get("stream") is True)
        return reply(dialect, stream=stream, interval=interval, pieces=pieces, sse=asks_for_sse(request.query))
    return json_response({"error": {"message": f"mock upstream: no route for {request.method} {request.path}",
                                    "type": "not_found"}}, 404)


# -- fixtures -------------------------------------------------------------------------------------

def _body_value(body: bytes) -> Any:
    try:
        return ("json", orjson.loads(body))
    except orjson.JSONDecodeError:
        return ("bytes", body)


# Framing is ours to redo (the body length may differ once re-serialised); a body loaded decoded
# (load.py) is served decoded.
_NOT_REPLAYED = frozenset({"content-length", "transfer-encoding", "connection"})


@dataclass(slots=True)
class FixtureRoute:
    """One recorded turn: the request it answers and the response it replays.

    Matching rule (README, "mock"): the method, the path, the query without its secrets, and the
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
        from .load import load

        return [cls.from_flow(turn.flow, turn.source) for turn in load(path)]

    @classmethod
    def from_fixture(cls, data: dict, source: str = "<fixture>") -> FixtureRoute:
        from .load import flow_from_fixture

        return cls.from_flow(flow_from_fixture(data, source), source)

    @classmethod
    def from_flow(cls, flow: Flow, source: str) -> FixtureRoute:
        if flow.status is None:
            raise ValueError(f"{source}: the recorded turn has no response to replay ({flow.error})")
        parts = urlsplit(flow.upstream_url)
        target = (parts.path or flow.path) + (f"?{parts.query}" if parts.query else "")
        headers = [(k, v) for k, v in flow.response_headers if k.lower() not in _NOT_REPLAYED]
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
        return (request.method == self.method and request.path == path
                and _public_query(request.query) == _public_query(query)
                and _body_value(request.body) == self.body)


def _public_query(query: str) -> list[tuple[str, str]]:
    """A query without its secrets: fixtures hold them redacted, live requests hold the real ones."""
    return [(k, v) for k, v in query_pairs(query) if k.lower() not in SECRET_QUERY_KEYS]


# -- the server ----------------------------------------------------------------------------------

class MockUpstream:
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
        self._server = ServerThread(self._app, host, port, name="toolwire-mock", tls=tls)

    @property
    def port(self) -> int:
        return self._server.port

    @property
    def base_url(self) -> str:
        return f"{'http' if self._server.tls is None else 'https'}://{self._server.host}:{self.port}"

    @property
    def client_url(self) -> str:
        """The base URL to give clients: with the access token in its path when one is needed."""
        return self.base_url + (f"/t/{self.access.token}" if self.access.token else "")

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
