"""The forwarder: a raw ASGI app that relays every request to one upstream and records it.

Hot path, in order: read the body, start the upstream request, relay response bytes as they come.
Recording is a few attribute writes and queue puts; SQLite and the contract checker run on the
store's writer thread. aiohttp is the upstream client (measured in tests/bench/proxy_overhead.py)."""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal
from urllib.parse import parse_qsl, urlencode, urlsplit

import aiohttp
from yarl import URL

from ..flow import Chunk, Flow, FlowState, Mode
from ..redact import SECRET_HEADERS, SECRET_QUERY_KEYS, redact_headers, redact_query, redact_query_url
from ..store import FlowRow, Store
from ..wire.dialect import is_stream_path
from .server import ListenError, ServerThread, is_loopback
from .transform import RepairFactory, Transform, TransformError, TransformFactory, error_body

REPLAY_HEADER = "x-toolwire-replay-of"
FLOW_ID_HEADER = "x-toolwire-flow-id"  # answered only to replays, so replay() learns the new id

# RFC 9110 §7.6.1 connection-specific fields, plus what this hop recomputes itself.
_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
     "proxy-authenticate", "proxy-authorization"}
)
_NOT_FORWARDED = _HOP_BY_HOP | {"host", "content-length", "expect", REPLAY_HEADER}
# aiohttp would add these on its own; a passthrough sends only what the client sent.
_SKIP_AUTO = ("Accept", "Accept-Encoding", "User-Agent", "Content-Type")

DEFAULT_MAX_BODY = 64 * 1024 * 1024
DEFAULT_TIMEOUT = 600.0  # seconds of upstream silence before giving up (LLMs can think long)
_CREDENTIALS_KEPT = 1024
SWITCH_INTERVAL = 0.001


@dataclass(slots=True)
class FlowEvent:
    """`started` comes from the forwarder thread as the request arrives; `completed` comes from
    the store's writer thread once the finished flow is analysed and committed, with its row."""

    kind: Literal["started", "completed"]
    flow: Flow
    row: FlowRow | None = None


class ForwarderError(Exception):
    """The forwarder cannot start as configured (bad upstream, address, translate spec)."""


class Forwarder:
    def __init__(
        self,
        upstream: str,
        *,
        store: Store,
        host: str = "127.0.0.1",
        port: int = 8787,
        on_event: Callable[[FlowEvent], None] | None = None,
        translate: str | None = None,
        repair: bool = False,
        allow_remote: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
        max_body: int = DEFAULT_MAX_BODY,
    ) -> None:
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ForwarderError(f"--upstream must be an http(s) URL such as https://api.openai.com; got {upstream!r}")
        try:
            parts.port  # reading it checks its range, which aiohttp would otherwise refuse on every request
        except ValueError:
            raise ForwarderError(f"--upstream {upstream!r}: its port is out of range (0 to 65535)") from None
        if parts.query or parts.fragment:
            raise ForwarderError(f"--upstream is a base URL; the client's own path and query are appended to it: "
                                 f"drop {'?' + parts.query if parts.query else '#' + parts.fragment!r} from {upstream!r}")
        if not is_loopback(host) and not allow_remote:
            raise ForwarderError(
                f"refusing to listen on {host}: it is reachable from other machines and the forwarder "
                "relays your API keys; pass --allow-remote (allow_remote=True) if you mean it"
            )
        self.upstream = upstream.rstrip("/")
        self.store = store
        self.host = host
        self.on_event = on_event
        self.translate = translate
        self.timeout = timeout
        self.max_body = max_body
        if translate and repair:
            raise ForwarderError("--translate and --repair are separate modes; choose one")
        try:
            self._transforms: TransformFactory | RepairFactory | None = (
                TransformFactory(translate) if translate else RepairFactory(self.upstream) if repair else None)
        except TransformError as exc:
            raise ForwarderError(str(exc)) from exc
        self.mode = Mode.TRANSLATE if translate else Mode.REPAIR if repair else Mode.PASSTHROUGH
        self._active: set[asyncio.Task] = set()  # requests in flight, to cut on stop()
        self._credentials: OrderedDict[int, list[tuple[str, str]]] = OrderedDict()
        self._credentials_lock = threading.Lock()
        self._session: aiohttp.ClientSession | None = None
        self._server = ServerThread(
            self._app, host, port, name="toolwire-forwarder", setup=self._open_client, teardown=self._close_client
        )

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return self._server.port

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> None:
        # Other threads of this process (the store writer, a UI rendering a big payload) hold the
        # GIL in long stretches; by default a waiting thread gets it back only after 5 ms, which
        # would land on every relayed chunk. 1 ms bounds that stall.
        if sys.getswitchinterval() > SWITCH_INTERVAL:
            sys.setswitchinterval(SWITCH_INTERVAL)
        try:
            self._server.start()
        except ListenError as exc:
            raise ForwarderError(str(exc)) from exc
        if self.store.session_id is None:
            self.store.new_session(self.upstream, self.base_url, self.mode.value)

    def stop(self) -> None:
        loop = self._server.loop
        if loop is not None and not loop.is_closed():
            # Cut the flows still in flight ourselves, so each is recorded as cut by the stop,
            # before uvicorn's shutdown drops their connections.
            try:
                asyncio.run_coroutine_threadsafe(self._cut_active(), loop).result(timeout=10)
            except RuntimeError:
                pass  # the loop stopped meanwhile: nothing is in flight any more
        self._server.stop()

    async def _cut_active(self) -> None:
        tasks = list(self._active)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def __enter__(self) -> Forwarder:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _open_client(self) -> None:
        self._session = aiohttp.ClientSession(
            # Relay the bytes as they came: the client asked for that encoding and decodes it.
            auto_decompress=False,
            skip_auto_headers=_SKIP_AUTO,
            timeout=aiohttp.ClientTimeout(total=None, connect=_connect_timeout(self.timeout), sock_read=self.timeout),
            connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
            cookie_jar=aiohttp.DummyCookieJar(),
        )

    async def _close_client(self) -> None:
        if self._session is not None:
            await self._session.close()

    def credentials(self, flow_id: int) -> list[tuple[str, str]]:
        """The secret headers the client sent with that flow (memory only, for replay)."""
        with self._credentials_lock:
            return list(self._credentials.get(flow_id, ()))

    def _keep_credentials(self, flow_id: int, headers: list[tuple[str, str]], query: str) -> None:
        secrets = [(k, v) for k, v in headers if k.lower() in SECRET_HEADERS]
        if query:
            # Gemini's `?key=` becomes its header twin, so replay needs no secret in a URL.
            secrets += [("x-goog-api-key", v) for k, v in parse_qsl(query) if k == "key"]
        if not secrets:
            return
        with self._credentials_lock:
            self._credentials[flow_id] = secrets
            if len(self._credentials) > _CREDENTIALS_KEPT:
                self._credentials.popitem(last=False)

    # -- the ASGI app ------------------------------------------------------------------------

    async def _app(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return
        task = asyncio.current_task()
        assert task is not None
        self._active.add(task)
        try:
            await self._forward(scope, receive, send)
        except asyncio.CancelledError:
            # Only stop() cancels a request; its flow is recorded already. Ending the app
            # quietly (no traceback in the log) makes uvicorn drop the connection.
            raise _AbortResponse() from None
        finally:
            self._active.discard(task)

    async def _forward(self, scope: dict, receive: Callable, send: Callable) -> None:
        t0 = time.perf_counter()
        started_at = time.time()
        flow_id = self.store.next_flow_id()
        raw_path = scope.get("raw_path") or scope["path"].encode()
        path = raw_path.decode("latin-1")
        query = scope["query_string"].decode("latin-1")
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        flow = Flow(
            id=flow_id, session_id=self.store.session_id or 0, started_at=started_at, method=scope["method"],
            path=path, query=redact_query(query), request_headers=redact_headers(headers), mode=self.mode,
            translate=self.translate,
        )
        recorder = _Recorder(self, flow, t0)

        body, refusal = await _read_body(receive, self.max_body)
        if refusal is not None:
            recorder.submit_started()
            status, problem = refusal
            flow.request_body = body
            if status is None:  # nobody is left to answer
                recorder.finish(FlowState.ERROR, problem)
            else:
                await recorder.fail_before_response(send, status, "toolwire_bad_request", problem)
            return
        flow.request_body = body

        upstream_headers: list[tuple[str, str]] = []
        connection_named = set()
        sent_length = False
        for name, value in headers:
            lower = name.lower()
            if lower == "content-length":
                sent_length = True
            elif lower == "connection":
                connection_named.update(v.strip().lower() for v in value.split(","))
            elif lower == REPLAY_HEADER:
                try:
                    flow.replay_of = int(value)
                except ValueError:
                    flow.notes.append(f"ignored {REPLAY_HEADER}: {value!r} is not a flow id")
        for name, value in headers:
            lower = name.lower()
            if lower not in _NOT_FORWARDED and lower not in connection_named:
                upstream_headers.append((name, value))

        transform: Transform | None = None
        target, upstream_body = path + (f"?{query}" if query else ""), body
        if self._transforms is not None:
            transform = self._transforms()
            upstream_headers = self._transforms.upstream_headers(upstream_headers, query)
            try:
                upstream_body, target_path = transform.request(body, target)
            except TransformError as exc:
                recorder.submit_started()
                await recorder.fail_before_response(send, 400, "toolwire_translate_error", str(exc), transform)
                return
            flow.notes.extend(transform.take_notes())
            if upstream_body is not body:
                target = _translated_target(target_path, query)
                flow.upstream_request_body = upstream_body

        url = self.upstream + target
        assert self._session is not None
        request = asyncio.ensure_future(
            self._session.request(
                # No body and no length from the client: send none, as it did (aiohttp would
                # otherwise add "content-length: 0" to a GET).
                flow.method, URL(url, encoded=True), data=upstream_body if upstream_body or sent_length else None,
                headers=upstream_headers,
                allow_redirects=False,
            )
        )
        watcher = asyncio.ensure_future(receive())  # completes with http.disconnect when the client leaves
        try:
            # One loop turn lets the request task write to its (pooled) upstream connection:
            # the request is on its way before any bookkeeping below.
            await asyncio.sleep(0)
            flow.upstream_url = redact_query_url(self.upstream + target)
            flow.upstream_request_headers = redact_headers(upstream_headers)
            self._keep_credentials(flow_id, headers, query)
            recorder.submit_started()
            await recorder.relay(request, watcher, send, transform)
        finally:
            watcher.cancel()
            request.cancel()  # a no-op once answered; stops a request cut short by stop()


def _translated_target(path: str, query: str) -> str:
    """The upstream path and query of a translated request. The bridge's own query (Gemini's
    `alt=sse`) wins; otherwise the client's query goes along (an `api-version`, say), minus its
    secrets, which belong to the source provider and must not reach another, and minus `alt`,
    which only Gemini reads."""
    if "?" in path:
        return path
    kept = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True)
            if k.lower() not in SECRET_QUERY_KEYS and k != "alt"]
    return path + (f"?{urlencode(kept)}" if kept else "")


async def _read_body(receive: Callable, limit: int) -> tuple[bytes, tuple[int | None, str] | None]:
    """(body, None), or (what is kept of it, (status to answer or None, why it is not forwarded))."""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            why = f"client disconnected before the request body was complete ({size} bytes read)"
            return b"".join(parts), (None, why)
        part = message.get("body", b"")
        if part:
            size += len(part)
            if size > limit:
                return b"", (413, f"request body larger than {limit} bytes; not forwarded")
            parts.append(part)
        if not message.get("more_body", False):
            break
    return parts[0] if len(parts) == 1 else b"".join(parts), None


class _Recorder:
    """Relays one upstream response and records it on the flow, then hands the flow to the store."""

    __slots__ = ("forwarder", "flow", "t0")

    def __init__(self, forwarder: Forwarder, flow: Flow, t0: float) -> None:
        self.forwarder = forwarder
        self.flow = flow
        self.t0 = t0

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.t0) * 1000.0

    def submit_started(self) -> None:
        forwarder = self.forwarder
        forwarder.store.submit(self.flow)
        if forwarder.on_event is not None:
            try:
                forwarder.on_event(FlowEvent("started", self.flow))
            except Exception as exc:  # a listener's bug must not fail the request it watches
                print(f"toolwire-inspect: flow listener failed: {exc!r}", file=sys.stderr)

    def finish(self, state: FlowState, error: str | None = None) -> None:
        flow = self.flow
        flow.latency_ms = self.elapsed_ms()
        flow.error = error
        flow.state = state  # last: the store treats a non-pending flow as final
        on_event = self.forwarder.on_event
        if on_event is None:
            self.forwarder.store.submit(flow)
        else:
            self.forwarder.store.submit(flow, lambda row: on_event(FlowEvent("completed", flow, row)))

    async def fail_before_response(self, send: Callable, status: int, kind: str, message: str,
                                   transform: Transform | None = None) -> None:
        body = transform.refusal(kind, message, status) if transform is not None else error_body(kind, message, status)
        flow = self.flow
        flow.status = status
        flow.response_headers = [("content-type", "application/json"), ("content-length", str(len(body)))]
        if flow.replay_of is not None:
            flow.response_headers.append((FLOW_ID_HEADER, str(flow.id)))
        flow.response_body = body
        flow.ttfb_ms = self.elapsed_ms()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in flow.response_headers]})
        await send({"type": "http.response.body", "body": body, "more_body": False})
        self.finish(FlowState.ERROR, message)

    async def relay(self, request: asyncio.Future, watcher: asyncio.Future, send: Callable,
                    transform: Transform | None) -> None:
        timeout = self.forwarder.timeout

        def client_gone(_: asyncio.Future) -> None:
            request.cancel()  # the upstream sees its connection close

        watcher.add_done_callback(client_gone)
        try:
            response = await request
        except asyncio.CancelledError:
            if not watcher.done():  # this task itself is cancelled: stop() cuts it
                await self.fail_before_response(send, 503, "toolwire_forwarder_stopped",
                                                "forwarder stopped before the upstream answered")
                return
            self.finish(FlowState.ERROR, "client disconnected before the upstream answered")
            return
        except aiohttp.ConnectionTimeoutError:
            await self.fail_before_response(
                send, 504, "toolwire_upstream_timeout",
                f"upstream did not accept a connection within {_connect_timeout(timeout):g} s ({self.forwarder.upstream})",
            )
            return
        except asyncio.TimeoutError:
            await self.fail_before_response(
                send, 504, "toolwire_upstream_timeout", f"upstream sent nothing for {timeout:g} s ({self.forwarder.upstream})"
            )
            return
        except aiohttp.ClientConnectorError as exc:
            await self.fail_before_response(
                send, 502, "toolwire_upstream_unreachable",
                f"upstream unreachable: {self.forwarder.upstream}: {_connect_reason(exc.os_error)}",
            )
            return
        except (aiohttp.ClientError, OSError) as exc:
            await self.fail_before_response(
                send, 502, "toolwire_upstream_error", f"upstream failed before answering: {type(exc).__name__}: {exc}"
            )
            return
        finally:
            watcher.remove_done_callback(client_gone)

        try:
            await self._relay_response(response, watcher, send, transform)
        finally:
            response.release()

    async def _relay_response(self, response: aiohttp.ClientResponse, watcher: asyncio.Future, send: Callable,
                              transform: Transform | None) -> None:
        flow = self.flow
        flow.status = response.status
        raw_headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.raw_headers]
        relay_headers = [(k, v) for k, v in raw_headers if k.lower() not in _HOP_BY_HOP]
        content_type = (response.headers.get("content-type") or "").lower()
        flow.streamed = "event-stream" in content_type or "ndjson" in content_type or is_stream_path(flow.path)
        # Any body without a length arrives in pieces worth timing, a stream or not.
        timed = flow.streamed or "content-length" not in response.headers
        translating = transform is not None and transform.rewrites_response
        failed = response.status >= 400  # an error body is rewritten whole, into the client's error shape
        stream_transform = None
        if translating:
            assert transform is not None
            # The body changes, so its length does too; the chunked framing carries it instead.
            relay_headers = [(k, v) for k, v in relay_headers if k.lower() != "content-length"]
            if flow.streamed and not failed:
                stream_transform = transform.stream()
                if stream_transform.content_type is not None:
                    relay_headers = [(k, v) for k, v in relay_headers if k.lower() != "content-type"]
                    relay_headers.append(("content-type", stream_transform.content_type))
        if flow.replay_of is not None:
            relay_headers.append((FLOW_ID_HEADER, str(flow.id)))
        flow.response_headers = redact_headers(relay_headers)
        start = {"type": "http.response.start", "status": response.status,
                 "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in relay_headers]}
        # A body translated whole starts its answer only once translated: a translation that fails
        # then answers with its reason instead of a cut connection.
        whole = translating and stream_transform is None
        if not whole:
            await send(start)

        pieces: list[bytes] = []
        relayed: list[bytes] = []
        chunks = flow.chunks
        t0 = self.t0
        perf_counter = time.perf_counter

        # A client that hangs up closes the upstream response at once, even mid-wait between
        # two chunks: the upstream sees its connection close and stops generating.
        def client_gone(_: asyncio.Future) -> None:
            response.close()

        watcher.add_done_callback(client_gone)
        try:
            async for data in response.content.iter_any():
                t = perf_counter() - t0
                if flow.ttfb_ms is None:
                    flow.ttfb_ms = t * 1000.0
                pieces.append(data)
                if translating:
                    if stream_transform is None:
                        continue  # a JSON body is translated whole, below
                    data = stream_transform.feed(data)
                    if not data:
                        continue
                if watcher.done():
                    break
                await send({"type": "http.response.body", "body": data, "more_body": True})
                relayed.append(data)
                if timed:
                    chunks.append(Chunk(t, data))
            if watcher.done():
                self._client_gone(pieces, relayed, translating)
                return
            if flow.ttfb_ms is None:
                flow.ttfb_ms = self.elapsed_ms()
            tail = b""
            if translating and transform is not None:
                body = b"".join(pieces)
                tail = (stream_transform.close() if stream_transform is not None
                        else transform.error(body) if failed else transform.response(body))
                flow.notes.extend(transform.take_notes())
            if tail:
                relayed.append(tail)
                if timed:
                    chunks.append(Chunk(perf_counter() - t0, tail))
            # Once the response is complete, receive() reports a disconnect too: not a hang-up.
            watcher.remove_done_callback(client_gone)
            if whole:
                await send(start)
            await send({"type": "http.response.body", "body": tail, "more_body": False})
        except asyncio.TimeoutError:
            failure = (504, "toolwire_upstream_timeout",
                       f"upstream went silent for {self.forwarder.timeout:g} s after {len(relayed)} chunks")
        except (aiohttp.ClientError, OSError) as exc:
            if watcher.done():
                self._client_gone(pieces, relayed, translating)
                return
            failure = (502, "toolwire_upstream_error",
                       f"upstream broke off after {len(relayed)} chunks: {_break_reason(exc)}")
        except TransformError as exc:
            failure = (502, "toolwire_translate_error", str(exc))
        except asyncio.CancelledError:
            self._store_bodies(pieces, relayed, translating)
            self.finish(FlowState.ERROR, f"forwarder stopped after {len(relayed)} chunks")
            raise
        else:
            self._store_bodies(pieces, relayed, translating)
            self.finish(FlowState.COMPLETE)
            return
        self._store_bodies(pieces, relayed, translating)
        status, kind, message = failure
        if whole:  # nothing went to the client yet: it gets the reason instead of a cut connection
            await self.fail_before_response(send, status, kind, message, transform)
            return
        self.finish(FlowState.ERROR, message)
        raise _AbortResponse() from None

    def _client_gone(self, pieces: list[bytes], relayed: list[bytes], translating: bool) -> None:
        self._store_bodies(pieces, relayed, translating)
        self.finish(FlowState.ERROR, f"client disconnected after {len(relayed)} chunks")

    def _store_bodies(self, pieces: list[bytes], relayed: list[bytes], translating: bool) -> None:
        flow = self.flow
        flow.response_body = b"".join(relayed)
        if translating:
            flow.upstream_response_body = b"".join(pieces)


def _connect_timeout(timeout: float) -> float:
    return min(timeout, 30.0)  # a live upstream accepts at once; waiting longer only hides an outage


def _break_reason(error: BaseException) -> str:
    if isinstance(error, aiohttp.ClientPayloadError):
        return "the response body was cut short"
    if isinstance(error, aiohttp.ServerDisconnectedError):
        return "the upstream closed the connection"
    return f"{type(error).__name__}: {error}"


def _connect_reason(error: OSError) -> str:
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, socket.gaierror):
        return f"cannot resolve host ({error.strerror})"
    return error.strerror or str(error)


class _AbortResponse(Exception):
    """Raised out of the app after the response started: uvicorn then cuts the connection, so the
    client sees a truncated body instead of a stream that looks complete."""


def _not_an_abort(record: logging.LogRecord) -> bool:
    # The abort is deliberate and already recorded on the flow; uvicorn need not log a traceback.
    return not (record.exc_info and isinstance(record.exc_info[1], _AbortResponse))


logging.getLogger("uvicorn.error").addFilter(_not_an_abort)
