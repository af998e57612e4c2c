"""The forwarder: a raw ASGI app that relays every request to one upstream and records it.

Hot path, in order: read the body, start the upstream request, relay response bytes as they come.
Recording is a few attribute writes and queue puts; SQLite and the contract checker run on the
store's writer thread. aiohttp is the upstream client (measured in tests/bench/proxy_overhead.py)."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import secrets
import socket
import ssl
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlencode, urlsplit

import aiohttp
from yarl import URL

from ..flow import REPLAY_NOTES, Chunk, Flow, FlowState, Mode, ReplayKind
from ..redact import (SECRET_QUERY_KEYS, basic_auth, query_pairs, redact_headers, redact_query,
                      redact_url, secret_header, secret_values, strip_userinfo)
from ..store import FlowRow, Store
from ..wire.dialect import from_path, is_server_push, is_stream_path
from ..wire.streams import ends_complete, is_stream_type
from .access import TOKEN_HEADER, AccessPolicy, target_problem
from .access import error_body as _error_body
from .connect import (DEFAULT_MAX_TUNNELS, DEFAULT_TUNNEL_IDLE, ConnectHandler, InterceptError, Interception,
                      InterceptList)
from .server import (INTERCEPT_EXTENSION, ClientLimits, ListenError, Served, ServerThread, is_loopback,
                     request_target, unsendable_head)
from .transform import RepairFactory, Transform, TransformError, TransformFactory

REPLAY_HEADER = "x-toolwire-replay-of"
REPLAY_AUTH_HEADER = "x-toolwire-replay-auth"  # proves REPLAY_HEADER comes from this process's replay
FLOW_ID_HEADER = "x-toolwire-flow-id"  # answered only to replays, so replay() learns the new id
# Ours alone: consumed here, never forwarded, never kept as a credential.
_CONTROL_HEADERS = frozenset({REPLAY_HEADER, REPLAY_AUTH_HEADER, TOKEN_HEADER})
# Known to no client: only replay_marker() in this process can sign a replay.
_REPLAY_KEY = secrets.token_bytes(32)

# RFC 9110 §7.6.1 connection-specific fields, plus what this hop recomputes itself.
_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
     "proxy-authenticate", "proxy-authorization"}
)
_NOT_FORWARDED = _HOP_BY_HOP | {"host", "content-length", "expect"} | _CONTROL_HEADERS
# aiohttp would add these on its own; a passthrough sends only what the client sent.
_SKIP_AUTO = ("Accept", "Accept-Encoding", "User-Agent", "Content-Type")

DEFAULT_MAX_BODY = 64 * 1024 * 1024
DEFAULT_TIMEOUT = 600.0  # seconds of upstream silence before giving up (LLMs can think long)
_CREDENTIALS_KEPT = 1024
SWITCH_INTERVAL = 0.001
MAX_CHUNK_TIMINGS = 100_000  # per flow: an endless stream's timings stay bounded too


@dataclass(slots=True)
class FlowEvent:
    """`started` comes from the forwarder thread as the request arrives; `completed` comes from
    the store's writer thread once the finished flow is analysed and committed, with its row."""

    kind: Literal["started", "completed"]
    flow: Flow
    row: FlowRow | None = None


class ForwarderError(Exception):
    """The forwarder cannot start as configured (bad upstream, address, translate spec)."""


def shorten_switch_interval() -> None:
    """Before serving: other threads of this process (the store writer, a UI rendering a big
    payload) hold the GIL in long stretches; by default a waiting thread gets it back only after
    5 ms, which would land on every relayed chunk. 1 ms bounds that stall."""
    if sys.getswitchinterval() > SWITCH_INTERVAL:
        sys.setswitchinterval(SWITCH_INTERVAL)


def replay_marker(flow_id: int, *, kind: ReplayKind = ReplayKind.AS_RECORDED) -> list[tuple[str, str]]:
    """The headers that make a request through this process's forwarder a replay of `flow_id`;
    `kind` after the id says what it sends (signed with the id, so nobody else can say so)."""
    value = str(flow_id) if kind is ReplayKind.AS_RECORDED else f"{flow_id} {kind.value}"
    return [(REPLAY_HEADER, value), (REPLAY_AUTH_HEADER, _replay_tag(value))]


def _replay_tag(flow_id: str) -> str:
    return hmac.new(_REPLAY_KEY, flow_id.encode("latin-1"), hashlib.sha256).hexdigest()


class Forwarder(Served):
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
        allow_hosts: Iterable[str] = (),
        allow_origins: Iterable[str] = (),
        timeout: float = DEFAULT_TIMEOUT,
        max_body: int = DEFAULT_MAX_BODY,
        limits: ClientLimits = ClientLimits(),
        intercept: Iterable[str] = (),
        allow_connect: Iterable[str] = (),
        ca_dir: Path | str | None = None,
        upstream_ca: Path | str | None = None,
        tunnel_idle: float = DEFAULT_TUNNEL_IDLE,
        max_tunnels: int = DEFAULT_MAX_TUNNELS,
        route: str | None = None,
        access: AccessPolicy | None = None,
    ) -> None:
        shown = redact_url(upstream)
        try:
            parts = urlsplit(upstream)
            _ = parts.port  # reading it checks its range, which aiohttp would otherwise refuse on every request
            # Each upstream URL is built from these parts, so no request target can change its authority.
            base = URL(strip_userinfo(upstream.rstrip("/")))
            known = parts.scheme in ("http", "https") and base.raw_host and base.port
        except ValueError as exc:  # a bad port or IPv6 literal
            if "out of range" in str(exc):
                raise ForwarderError(f"--upstream {shown!r}: its port is out of range (0 to 65535)") from None
            known = False
        if not known:
            raise ForwarderError(f"--upstream must be an http(s) URL such as https://api.openai.com; got {shown!r}")
        if parts.query or parts.fragment:
            extra = redact_url('?' + parts.query) if parts.query else '#' + parts.fragment
            raise ForwarderError(f"--upstream is a base URL; the client's own path and query are appended to it: "
                                 f"drop {extra!r} from {shown!r}")
        if not is_loopback(host) and not allow_remote:
            raise ForwarderError(
                f"refusing to listen on {host}: it is reachable from other machines and the forwarder "
                "relays your API keys; pass --allow-remote (allow_remote=True) if you mean it"
            )
        self.upstream = upstream.rstrip("/")
        self.upstream_shown = redact_url(self.upstream)  # what may be printed, stored or put in an error
        # The userinfo of the upstream URL travels as a header, so that the client's own
        # Authorization, when it sends one, can win (aiohttp refuses the two together).
        auth = basic_auth(self.upstream)
        self._upstream_auth = [] if auth is None else [("Authorization", auth)]
        self._upstream_secrets = secret_values(self._upstream_auth, url=self.upstream)
        self._scheme, self._authority, self._base_path = base.scheme, base.raw_authority, base.raw_path.rstrip("/")
        # Routes of one launch share one policy (see routes.Router), so one count says what it refused.
        self.access = access or AccessPolicy(host, allow_hosts=allow_hosts, allow_origins=allow_origins)
        if self.access.token is not None:  # a body that quotes the base URL it was given quotes the token
            self._upstream_secrets += (self.access.token,)
        self.route = route  # None: the unnamed route, at `/` of its own port
        self.mount = ""  # the path prefix a Router serves this route under ("/r/NAME"), "" on a port of its own
        self.store = store
        self.host = host
        self.on_event = on_event
        self.translate = translate
        self.timeout = timeout
        self.max_body = max_body
        self.limits = limits
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
        # Proxy mode (connect.py): CONNECT is answered, provider hosts intercepted with the local CA.
        try:
            intercepts = InterceptList(intercept)
        except InterceptError as exc:
            raise ForwarderError(str(exc)) from exc
        self.connect = ConnectHandler(self.access, intercepts, ca_dir=ca_dir, allow_connect=allow_connect,
                                      handshake_timeout=limits.client_timeout, max_tunnels=max_tunnels,
                                      idle_timeout=tunnel_idle)
        self._upstream_ssl: ssl.SSLContext | bool = True  # aiohttp's default verification
        if upstream_ca is not None:
            # Trusted besides the usual roots, e.g. a test upstream's own CA.
            self._upstream_ssl = ssl.create_default_context()
            try:
                self._upstream_ssl.load_verify_locations(upstream_ca)
            except (OSError, ssl.SSLError) as exc:
                raise ForwarderError(f"--upstream-ca {upstream_ca}: cannot load it as PEM certificates: "
                                     f"{exc}") from None
        self._server = ServerThread(
            self.app, host, port, name="toolwire-forwarder", setup=self.open_client, teardown=self.close_client,
            limits=limits, connect=self.connect,
        )

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        shorten_switch_interval()
        try:
            self._server.start()
        except ListenError as exc:
            raise ForwarderError(str(exc)) from exc
        if self.store.session_id is None:
            self.store.new_session(self.upstream_shown, self.base_url, self.mode.value)

    def mount_on(self, server: ServerThread, prefix: str) -> None:
        """Be served by `server` (a Router's) under the path `prefix`: its port, loop and stop are
        that server's, whose setup and teardown call open_client and close_client."""
        self._server = server
        self.mount = prefix

    def stop(self) -> None:
        self.cut_in_flight()
        self._server.stop()

    def cut_in_flight(self) -> None:
        """End the requests in flight, each recorded as cut by the stop (a Router calls it for each
        route before stopping the server they share)."""
        loop = self._server.loop
        if loop is not None and not loop.is_closed():
            # Cut the flows still in flight ourselves, so each is recorded as cut by the stop,
            # before uvicorn's shutdown drops their connections.
            try:
                asyncio.run_coroutine_threadsafe(self._cut_active(), loop).result(timeout=10)
            except RuntimeError:
                pass  # the loop stopped meanwhile: nothing is in flight any more

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

    async def open_client(self) -> None:
        self._session = aiohttp.ClientSession(
            # Relay the bytes as they came: the client asked for that encoding and decodes it.
            auto_decompress=False,
            skip_auto_headers=_SKIP_AUTO,
            # Upstream silence is measured by _Silence, not sock_read: see there why.
            timeout=aiohttp.ClientTimeout(total=None, connect=_connect_timeout(self.timeout)),
            connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300, ssl=self._upstream_ssl),
            cookie_jar=aiohttp.DummyCookieJar(),
        )

    async def close_client(self) -> None:
        await self.connect.close()
        if self._session is not None:
            await self._session.close()

    def _upstream_url(self, path: str, query: str, intercepted: Interception | None = None) -> URL:
        """The upstream URL of a checked target (see access.target_problem): the upstream's own
        scheme and authority (an intercepted tunnel's, in proxy mode), its base path followed by `path`."""
        if intercepted is not None:
            return URL.build(scheme=intercepted.scheme, authority=intercepted.authority,
                             path=intercepted.base_path + path, query_string=query, encoded=True)
        return URL.build(scheme=self._scheme, authority=self._authority, path=self._base_path + path,
                         query_string=query, encoded=True)

    def credentials(self, flow_id: int) -> list[tuple[str, str]]:
        """The secret headers the client sent with that flow (memory only, for replay)."""
        with self._credentials_lock:
            return list(self._credentials.get(flow_id, ()))

    def _keep_credentials(self, flow: Flow, headers: list[tuple[str, str]], query: str) -> None:
        """Hand the request's credential values to the flow, for the store to scrub wherever they
        show up, and keep its secret headers for replay. Before the flow's first submit."""
        flow.secrets = secret_values(headers, query) + self._upstream_secrets
        secrets = [(k, v) for k, v in headers if secret_header(k) and k.lower() not in _CONTROL_HEADERS]
        if query:
            # Gemini's `?key=` becomes its header twin, so replay needs no secret in a URL.
            secrets += [("x-goog-api-key", v) for k, v in query_pairs(query) if k == "key"]
        if not secrets:
            return
        with self._credentials_lock:
            self._credentials[flow.id] = secrets
            if len(self._credentials) > _CREDENTIALS_KEPT:
                self._credentials.popitem(last=False)

    # -- the ASGI app ------------------------------------------------------------------------

    async def app(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return
        t0 = time.perf_counter()
        started_at = time.time()
        raw_path, _, raw_query = request_target(scope).partition(b"?")
        # Proxy mode: a request in an intercepted tunnel goes, untransformed, to the tunnel's upstream.
        intercepted: Interception | None = scope.get("extensions", {}).get(INTERCEPT_EXTENSION)
        if intercepted is None:
            raw_path, refused = self.access.admit(scope["headers"], raw_path)
        else:
            refused = self.access.admit_intercepted(scope["headers"], intercepted.host, intercepted.port)
        if refused is not None:
            await refused.send(send)
            return
        await self.handle(scope, receive, send, raw_path, raw_query, t0, started_at, intercepted=intercepted)

    async def handle(self, scope: dict, receive: Callable, send: Callable, raw_path: bytes, raw_query: bytes,
                     t0: float, started_at: float, refusal: tuple[int, str, str] | None = None,
                     intercepted: Interception | None = None) -> None:
        """Relay and record one admitted request; `raw_path` is below this route's prefix (a
        Router takes the prefix off). Called on the loop of the server that admitted it.
        `refusal` (status, kind, message): record the request and answer it so, sending nothing
        upstream (a Router's unknown route). `intercepted`: it came through a proxy-mode tunnel."""
        task = asyncio.current_task()
        assert task is not None
        self._active.add(task)
        try:
            if refusal is None:
                await self._forward(scope, receive, send, raw_path, raw_query, t0, started_at, intercepted)
            else:
                await self._refuse(scope, receive, send, raw_path, raw_query, t0, started_at, *refusal)
        except asyncio.CancelledError:
            # Only stop() cancels a request; its flow is recorded already. Ending the app
            # quietly (no traceback in the log) makes uvicorn drop the connection.
            raise _AbortResponse() from None
        finally:
            self._active.discard(task)

    def _begin(self, scope: dict, raw_path: bytes, raw_query: bytes, t0: float, started_at: float,
               intercepted: Interception | None = None) -> tuple[Flow, list[tuple[str, str]], _Recorder]:
        """The flow of an admitted request, its headers, and the recorder that will submit it."""
        if intercepted is None:
            mode, translate, shown = self.mode, self.translate, self.upstream_shown
        else:
            mode, translate, shown = Mode.PASSTHROUGH, None, intercepted.shown
        flow_id = self.store.next_flow_id()
        path = raw_path.decode("latin-1")
        query = raw_query.decode("latin-1")
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        flow = Flow(
            id=flow_id, session_id=self.store.session_id or 0, started_at=started_at, method=scope["method"],
            path=path, query=redact_query(query), request_headers=redact_headers(headers), mode=mode,
            translate=translate, route="" if intercepted is not None else self.route or "",
        )
        # Before any submit: every path below records the flow, and the store scrubs its secrets.
        self._keep_credentials(flow, headers, query)
        return flow, headers, _Recorder(self, flow, t0, is_server_push(
            flow.method, path, next((v for k, v in headers if k.lower() == "accept"), "")), shown)

    async def _refuse(self, scope: dict, receive: Callable, send: Callable, raw_path: bytes, raw_query: bytes,
                      t0: float, started_at: float, status: int, kind: str, message: str) -> None:
        """Record an admitted request that goes to no upstream and answer it with `status`: the
        flow keeps the whole path the client sent and names no route."""
        flow, _, recorder = self._begin(scope, raw_path, raw_query, t0, started_at)
        flow.route = ""
        flow.mode, flow.translate = Mode.PASSTHROUGH, None
        body, refusal = await _read_body(receive, self.max_body, self.limits.client_timeout)
        flow.request_body = body
        recorder.submit_started()
        if refusal is not None and refusal[0] is None:  # nobody is left to answer
            recorder.finish(FlowState.ERROR, refusal[1])
            return
        await recorder.fail_before_response(send, status, kind, message, close=refusal is not None)

    async def _forward(self, scope: dict, receive: Callable, send: Callable, raw_path: bytes, raw_query: bytes,
                       t0: float, started_at: float, intercepted: Interception | None = None) -> None:
        flow, headers, recorder = self._begin(scope, raw_path, raw_query, t0, started_at, intercepted)
        path, query = flow.path, raw_query.decode("latin-1")
        transforms = self._transforms if intercepted is None else None  # intercepted: relayed untransformed

        body, refusal = await _read_body(receive, self.max_body, self.limits.client_timeout)
        if refusal is not None:
            recorder.submit_started()
            status, problem = refusal
            flow.request_body = body
            if status is None:  # nobody is left to answer
                recorder.finish(FlowState.ERROR, problem)
            else:
                await recorder.fail_before_response(send, status, "toolwire_bad_request", problem, close=True)
            return
        flow.request_body = body
        problem = target_problem(path, query)
        if problem is not None:
            recorder.submit_started()
            await recorder.fail_before_response(send, 400, "toolwire_bad_target", f"not forwarded: {problem}")
            return

        upstream_headers: list[tuple[str, str]] = []
        connection_named = set()
        sent_length = False
        replay_of = replay_tag = None
        for name, value in headers:
            lower = name.lower()
            if lower == "content-length":
                sent_length = True
            elif lower == "connection":
                connection_named.update(v.strip().lower() for v in value.split(","))
            elif lower == REPLAY_HEADER:
                replay_of = value
            elif lower == REPLAY_AUTH_HEADER:
                replay_tag = value
        if replay_of is not None:
            if replay_tag is not None and hmac.compare_digest(replay_tag.encode("latin-1"),
                                                              _replay_tag(replay_of).encode()):
                number, _, kind = replay_of.partition(" ")
                flow.replay_of = int(number)
                if kind:
                    flow.notes.append(REPLAY_NOTES[ReplayKind(kind)])
            else:
                flow.notes.append(f"ignored {REPLAY_HEADER}: {replay_of!r} was not sent by this process's replay")
        for name, value in headers:
            lower = name.lower()
            if lower not in _NOT_FORWARDED and lower not in connection_named:
                upstream_headers.append((name, value))

        transform: Transform | None = None
        target, upstream_body = path + (f"?{query}" if query else ""), body
        if transforms is not None:
            transform = transforms()
            upstream_headers = transforms.upstream_headers(upstream_headers, query)
            try:
                upstream_body, target_path = transform.request(body, target)
            except TransformError as exc:
                recorder.submit_started()
                await recorder.fail_before_response(send, 400, "toolwire_translate_error", str(exc), transform=transform)
                return
            flow.notes.extend(transform.take_notes())
            if upstream_body is not body:
                target = _translated_target(target_path, query)
                flow.upstream_request_body = upstream_body

        if self._upstream_auth and intercepted is None:
            if any(name.lower() == "authorization" for name, _ in upstream_headers):
                flow.notes.append("the upstream URL's credentials were not sent: the request has its own Authorization")
            else:
                upstream_headers += self._upstream_auth
        target_path, _, target_query = target.partition("?")
        # The bridge may build the path from the body (Gemini's model name): check it again.
        if transform is not None and (problem := target_problem(target_path, target_query)) is not None:
            recorder.submit_started()
            await recorder.fail_before_response(send, 400, "toolwire_bad_target",
                                                f"not forwarded after translation: {problem}")
            return
        url = self._upstream_url(target_path, target_query, intercepted)
        assert self._session is not None
        request = asyncio.ensure_future(
            self._session.request(
                # No body and no length from the client: send none, as it did (aiohttp would
                # otherwise add "content-length: 0" to a GET).
                flow.method, url, data=upstream_body if upstream_body or sent_length else None,
                headers=upstream_headers,
                allow_redirects=False,
            )
        )
        watcher = asyncio.ensure_future(receive())  # completes with http.disconnect when the client leaves
        try:
            # One loop turn lets the request task write to its (pooled) upstream connection:
            # the request is on its way before any bookkeeping below.
            await asyncio.sleep(0)
            flow.upstream_url = recorder.upstream_shown + redact_url(target)
            flow.upstream_request_headers = redact_headers(upstream_headers)
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
    kept = [(k, v) for k, v in query_pairs(query) if k.lower() not in SECRET_QUERY_KEYS and k != "alt"]
    return path + (f"?{urlencode(kept)}" if kept else "")


async def _read_body(receive: Callable, limit: int, idle: float) -> tuple[bytes, tuple[int | None, str] | None]:
    """(body, None), or (what is kept of it, (status to answer or None, why it is not forwarded))."""
    parts: list[bytes] = []
    size = 0
    while True:
        try:
            async with asyncio.timeout(idle):
                message = await receive()
        except TimeoutError:
            why = f"client sent no body bytes for {idle:g} s ({size} bytes read); not forwarded"
            return b"".join(parts), (408, why)
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

    __slots__ = ("forwarder", "flow", "t0", "server_push", "relayed", "started", "upstream_shown")

    def __init__(self, forwarder: Forwarder, flow: Flow, t0: float, server_push: bool, upstream_shown: str) -> None:
        self.forwarder = forwarder
        self.upstream_shown = upstream_shown  # the forwarder's, or an intercepted tunnel's
        self.flow = flow
        self.t0 = t0
        self.server_push = server_push  # idle by design: no read timeout, and either side may end it
        self.relayed = _Copy(forwarder.max_body)  # what the client got
        self.started = False  # the status line went out

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
                                   close: bool = False, transform: Transform | None = None) -> None:
        """`close`: the request body was left unread, so the connection cannot carry another.
        `transform`: a translation is on, so the error takes the client dialect's own shape."""
        body = transform.refusal(kind, message, status) if transform is not None else _error_body(kind, message, status)
        flow = self.flow
        flow.status = status
        flow.response_headers = [("content-type", "application/json"), ("content-length", str(len(body)))]
        if close:
            flow.response_headers.append(("connection", "close"))
        if flow.replay_of is not None:
            flow.response_headers.append((FLOW_ID_HEADER, str(flow.id)))
        flow.response_body = body
        flow.ttfb_ms = self.elapsed_ms()
        self.started = True
        await send({"type": "http.response.start", "status": status,
                    "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in flow.response_headers]})
        await send({"type": "http.response.body", "body": body, "more_body": False})
        self.finish(FlowState.ERROR, message)

    async def relay(self, request: asyncio.Future, watcher: asyncio.Future, send: Callable,
                    transform: Transform | None) -> None:
        timeout = self.forwarder.timeout
        # Until the head comes, the connect time counts on top: a slow connect has its own error.
        silence = _Silence(None if self.server_push else timeout, _connect_timeout(timeout),
                           self.forwarder.limits.client_timeout, request.cancel)

        def client_gone(_: asyncio.Future) -> None:
            request.cancel()  # the upstream sees its connection close

        watcher.add_done_callback(client_gone)
        try:
            try:
                response = await request
            except asyncio.CancelledError:
                if silence.fired:
                    await self.fail_before_response(
                        send, 504, "toolwire_upstream_timeout",
                        f"upstream sent nothing for {timeout:g} s ({self.upstream_shown})")
                    return
                if not watcher.done():  # this task itself is cancelled: stop() cuts it
                    await self.fail_before_response(send, 503, "toolwire_forwarder_stopped",
                                                    "forwarder stopped before the upstream answered")
                    return
                self.finish(FlowState.ERROR, "client disconnected before the upstream answered")
                return
            except aiohttp.ConnectionTimeoutError:
                await self.fail_before_response(
                    send, 504, "toolwire_upstream_timeout",
                    f"upstream did not accept a connection within {_connect_timeout(timeout):g} s "
                    f"({self.upstream_shown})",
                )
                return
            except aiohttp.ClientConnectorError as exc:
                await self.fail_before_response(
                    send, 502, "toolwire_upstream_unreachable",
                    f"upstream unreachable: {self.upstream_shown}: {_connect_reason(exc.os_error)}",
                )
                return
            except (aiohttp.ClientError, OSError) as exc:
                await self.fail_before_response(
                    send, 502, "toolwire_upstream_error",
                    f"upstream failed before answering: {type(exc).__name__}: {exc}"
                )
                return
            finally:
                watcher.remove_done_callback(client_gone)

            silence.arrived(response.close)
            try:
                await self._relay_response(response, watcher, send, transform, silence)
            finally:
                response.release()
        finally:
            silence.cancel()

    async def _relay_response(self, response: aiohttp.ClientResponse, watcher: asyncio.Future, send: Callable,
                              transform: Transform | None, silence: _Silence) -> None:
        flow = self.flow
        flow.status = response.status
        raw_headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.raw_headers]
        relay_headers = [(k, v) for k, v in raw_headers if k.lower() not in _HOP_BY_HOP]
        if (unsendable := unsendable_head(response.status, relay_headers)) is not None:
            await self.fail_before_response(send, 502, "toolwire_upstream_error",
                                            f"upstream sent a response the forwarder cannot relay: {unsendable}",
                                            transform=transform)
            return
        content_type = (response.headers.get("content-type") or "").lower()
        flow.streamed = is_stream_type(content_type) or "ndjson" in content_type or is_stream_path(flow.path)
        # Any body without a length arrives in pieces worth timing, a stream or not.
        timed = flow.streamed or "content-length" not in response.headers
        translating = transform is not None and transform.rewrites_response
        failed = response.status >= 400  # an error body is rewritten whole, into the client's error shape
        stream_transform = None
        if translating:
            assert transform is not None
            # The body changes, so its length does too.
            relay_headers = [(k, v) for k, v in relay_headers if k.lower() != "content-length"]
            if flow.streamed and not failed:
                stream_transform = transform.stream()
                if stream_transform.content_type is not None:
                    relay_headers = [(k, v) for k, v in relay_headers if k.lower() != "content-type"]
                    relay_headers.append(("content-type", stream_transform.content_type))
        # A body rewritten whole is rewritten before the status goes out: if that fails, the
        # client gets an error status, not a 200 with an empty body.
        whole = translating and stream_transform is None
        if flow.replay_of is not None:
            relay_headers.append((FLOW_ID_HEADER, str(flow.id)))
        if not whole:
            flow.response_headers = redact_headers(relay_headers)
            self.started = True
            await send({"type": "http.response.start", "status": response.status,
                        "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in relay_headers]})

        limit = self.forwarder.max_body
        upstream = _Copy(limit)  # what the upstream sent, when it differs from what the client gets
        relayed = self.relayed
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
                now = perf_counter()
                silence.last = now
                t = now - t0
                if flow.ttfb_ms is None:
                    flow.ttfb_ms = t * 1000.0
                if translating:
                    upstream.add(data)
                    if stream_transform is None:
                        if upstream.size > limit:
                            raise TransformError(f"upstream response larger than {limit} bytes: too large to "
                                                 "translate whole")
                        continue  # translated whole, below
                    data = stream_transform.feed(data)
                    if not data:
                        continue
                if watcher.done():
                    break
                silence.waiting = False  # a slow client is not a silent upstream
                await send({"type": "http.response.body", "body": data, "more_body": True})
                silence.last = perf_counter()
                silence.waiting = True
                kept = relayed.add(data)
                if timed and len(chunks) < MAX_CHUNK_TIMINGS:
                    chunks.append(Chunk(t, kept))
            if watcher.done():
                self._client_gone(upstream, translating)
                return
            if flow.ttfb_ms is None:
                flow.ttfb_ms = self.elapsed_ms()
            tail = b""
            if translating and transform is not None:
                if stream_transform is not None:
                    tail = stream_transform.close()
                else:
                    body = b"".join(upstream.parts)
                    tail = transform.error(body) if failed else transform.response(body)
                    relay_headers.append(("content-length", str(len(tail))))
                    flow.response_headers = redact_headers(relay_headers)
                    self.started = True
                    await send({"type": "http.response.start", "status": response.status,
                                "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in relay_headers]})
                flow.notes.extend(transform.take_notes())
            if tail:
                kept = relayed.add(tail)
                if timed and len(chunks) < MAX_CHUNK_TIMINGS:
                    chunks.append(Chunk(perf_counter() - t0, kept))
            # Once the response is complete, receive() reports a disconnect too: not a hang-up.
            watcher.remove_done_callback(client_gone)
            silence.last = perf_counter()
            silence.waiting = False
            await send({"type": "http.response.body", "body": tail, "more_body": False})
        except (aiohttp.ClientError, OSError) as exc:
            if silence.fired:
                await self._broken(send, upstream, transform, 504, "toolwire_upstream_timeout",
                                   f"upstream went silent for {self.forwarder.timeout:g} s after "
                                   f"{relayed.count} chunks")
                return
            if watcher.done():
                self._client_gone(upstream, translating)
                return
            if self.server_push:  # the server ended its push stream: nothing is missing
                self._store_bodies(upstream, translating)
                self.finish(FlowState.COMPLETE)
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
            await self._broken(send, upstream, transform, 502, "toolwire_upstream_error",
                               f"upstream broke off after {relayed.count} chunks: {_break_reason(exc)}")
            return
        except TransformError as exc:
            if transform is not None:
                flow.notes.extend(transform.take_notes())
            await self._broken(send, upstream, transform, 502, "toolwire_translate_error", str(exc))
            return
        except asyncio.CancelledError:
            self._store_bodies(upstream, translating)
            if silence.stalled:
                self.finish(FlowState.ERROR, f"client stopped reading for {silence.stall:g} s after "
                                             f"{relayed.count} chunks")
            else:
                self.finish(FlowState.ERROR, f"forwarder stopped after {relayed.count} chunks")
            raise
        finally:
            watcher.remove_done_callback(client_gone)
        self._store_bodies(upstream, translating)
        self.finish(FlowState.COMPLETE)

    async def _broken(self, send: Callable, upstream: _Copy, transform: Transform | None, status: int, kind: str,
                      message: str) -> None:
        """End a response that cannot be completed: with an error status while the client has
        had none yet (a body rewritten whole), else by cutting the connection mid-body."""
        translating = transform is not None and transform.rewrites_response
        if self.started:
            self._store_bodies(upstream, translating)
            self.finish(FlowState.ERROR, message)
            raise _AbortResponse() from None
        if translating:
            self.flow.upstream_response_body = b"".join(upstream.parts)
        await self.fail_before_response(send, status, kind, message, transform=transform)

    def _client_gone(self, upstream: _Copy, translating: bool) -> None:
        self._store_bodies(upstream, translating)
        relayed = self.relayed
        flow = self.flow
        # A client may hang up once it has the final event, before the upstream closes: the
        # answer is whole. When the copy is cut, the last piece sent stands for the stream's end.
        end = flow.response_body if relayed.size <= relayed.limit else relayed.last
        if self.server_push or (flow.streamed and ends_complete(end, from_path(flow.path))):
            self.finish(FlowState.COMPLETE)
        else:
            self.finish(FlowState.ERROR, f"client disconnected after {relayed.count} chunks")

    def _store_bodies(self, upstream: _Copy, translating: bool) -> None:
        flow = self.flow
        relayed = self.relayed
        flow.response_body = b"".join(relayed.parts)
        if translating:
            flow.upstream_response_body = b"".join(upstream.parts)
        for copy, what in ((relayed, "response"), (upstream, "upstream response")):
            if copy.size > copy.limit:
                flow.notes.append(f"{what} of {copy.size} bytes: only its first {copy.limit} bytes are recorded "
                                  "(all of it was relayed)")
        if relayed.count > len(flow.chunks) >= MAX_CHUNK_TIMINGS:
            flow.notes.append(f"only the first {MAX_CHUNK_TIMINGS} chunk timings are recorded")


class _Silence:
    """Upstream silence and client stalls, measured here rather than by aiohttp's sock_read:
    aiohttp 3.14 re-arms that timer when a paused read resumes and finds the body's end, after
    the connection went back to its pool; it fires there, and the next request on that
    connection fails at once (a false "504 upstream sent nothing", seen whenever the timeout is
    shorter than the pool's 15 s keep-alive). One timer per request, moved only when it fires;
    the relay writes two fields per chunk. `timeout` None: the upstream may stay silent (a push
    stream is idle by design). A client that reads nothing for `stall` seconds while a chunk
    waits for it gets its request task cancelled, `stalled` telling why."""

    __slots__ = ("timeout", "stall", "last", "waiting", "fired", "stalled", "_cut", "_task", "_handle")

    def __init__(self, timeout: float | None, grace: float, stall: float, cut: Callable[[], object]) -> None:
        self.timeout = timeout
        self.stall = stall
        self.last = time.perf_counter() + grace
        self.waiting = True  # on the upstream (not on the client)
        self.fired = False
        self.stalled = False
        self._cut = cut
        self._task = asyncio.current_task()
        first = stall if timeout is None else min(timeout + grace, stall)
        self._handle: asyncio.TimerHandle | None = asyncio.get_running_loop().call_later(first, self._check)

    def arrived(self, cut: Callable[[], object]) -> None:
        """The head came: silence is counted from now, and ends by `cut` (closing the body)."""
        self.last = time.perf_counter()
        self._cut = cut

    def _check(self) -> None:
        self._handle = None
        now = time.perf_counter()
        limit = self.timeout if self.waiting else self.stall
        if limit is not None and now - self.last >= limit:
            if self.waiting:
                self.fired = True
                self._cut()
            elif self._task is not None:
                self.stalled = True
                self._task.cancel()
            return
        # At least every `stall` seconds: a send that blocks may begin at any moment.
        due = min(self.last + limit, now + self.stall) if limit is not None else now + self.stall
        self._handle = asyncio.get_running_loop().call_later(max(due - now, 0.0), self._check)

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None


class _Copy:
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
