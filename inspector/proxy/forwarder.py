"""The forwarder: a raw ASGI app that relays every request to one upstream and records it.

It is the driver of the exchange machine (proxy/exchange.py): it reads the client's request and
the upstream's response, feeds what happened to the machine as events and carries out the commands
it answers with. Every decision is the machine's and its hooks' (proxy/addons.py, transform.py).

Hot path, in order: read the body, start the upstream request, relay response bytes as they come.
Recording is a few attribute writes and queue puts; SQLite and the contract checker run on the
store's writer thread. proxy/upstream.py is the HTTP client to the upstream, aiohttp the WebSocket one
(measured in tests/bench/proxy_overhead.py)."""

from __future__ import annotations

import asyncio
import logging
import ssl
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import replace
from urllib.parse import urlsplit

import aiohttp
from yarl import URL

from ..flow import Flow, Mode
from ..redact import basic_auth, redact_headers, redact_query, redact_url, secret_values, strip_userinfo
from ..store import Store
from ..wire.dialect import is_server_push
from .access import AccessPolicy
from .addons import (CONTROL_HEADERS, REPLAY_AUTH_HEADER, REPLAY_HEADER, CredentialVault, FlowEvent, Notifier,
                     Recorder, ReplayMarking, Signing, replay_marker)
from .connect import ConnectHandler, InterceptError, Interception, InterceptList
from .exchange import (FLOW_ID_HEADER, HOP_BY_HOP, Abort, Accept, Addon, BodyRead, BodyRefused, ClientGone, Close,
                       Closed, Command, ControlIn, Exchange, Finish, FrameIn, OpenSocket, Policy, Record, SendControl,
                       SendData, SendFrame, SendHead, SendUpstream, SocketCommand, SocketExchange, SocketOpened,
                       SocketRefused, Stopped, UpstreamData, UpstreamEnd, UpstreamFailed, UpstreamHead, UpstreamSilent)
from .options import Options, ProxyOptions
from .server import (GONE_EXTENSION, INTERCEPT_EXTENSION, PING_MESSAGE, PONG_MESSAGE, ListenError, Served, ServerThread,
                     is_loopback, request_target, unsendable_head)
from .transform import RepairFactory, TransformError, TransformFactory
from .upstream import BodyBroken, Connection, NoAnswer, Origin, Pool, connect_reason, origin_of

__all__ = ["FLOW_ID_HEADER", "REPLAY_AUTH_HEADER", "REPLAY_HEADER", "FlowEvent", "Forwarder", "ForwarderError",
           "replay_marker"]

_NOT_FORWARDED = HOP_BY_HOP | {"host", "content-length", "expect"} | CONTROL_HEADERS
# aiohttp would add these on its own to a WebSocket handshake; a passthrough sends only what the client sent.
_SKIP_AUTO = ("Accept", "Accept-Encoding", "User-Agent", "Content-Type")

SWITCH_INTERVAL = 0.001


class ForwarderError(Exception):
    """The forwarder cannot start as configured (bad upstream, address, translate spec)."""


def shorten_switch_interval() -> None:
    """Before serving: other threads of this process (the store writer, a UI rendering a big
    payload) hold the GIL in long stretches; by default a waiting thread gets it back only after
    5 ms, which would land on every relayed chunk. 1 ms bounds that stall."""
    if sys.getswitchinterval() > SWITCH_INTERVAL:
        sys.setswitchinterval(SWITCH_INTERVAL)

class Forwarder(Served):
    """Serves one upstream as `options` say (its upstream, mode, limits, proxy mode). `access`: the
    policy shared by the routes of one launch (routes.Router), else one of its own."""

    def __init__(self, options: Options, *, store: Store, on_event: Callable[[FlowEvent], None] | None = None,
                 access: AccessPolicy | None = None) -> None:
        if options.upstream is None:
            raise ForwarderError("a forwarder needs an --upstream URL")
        self.options = options
        upstream, host, translate, repair = options.upstream, options.host, options.translate, options.repair
        timeout, max_body, limits, proxy = options.timeout, options.max_body, options.limits, options.proxy
        shown = redact_url(upstream)
        try:
            parts = urlsplit(upstream)
            _ = parts.port  # reading it checks its range, which would otherwise fail every request
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
        if not is_loopback(host) and not options.allow_remote:
            raise ForwarderError(
                f"refusing to listen on {host}: it is reachable from other machines and the forwarder "
                "relays your API keys; pass --allow-remote (allow_remote=True) if you mean it"
            )
        self.upstream = upstream.rstrip("/")
        self.upstream_shown = redact_url(self.upstream)  # what may be printed, stored or put in an error
        # The userinfo of the upstream URL travels as a header, so that the client's own
        # Authorization, when it sends one, can win (aiohttp refuses the two together).
        auth = basic_auth(self.upstream)
        upstream_auth = () if auth is None else (("Authorization", auth),)
        upstream_secrets = secret_values(list(upstream_auth), url=self.upstream)
        self._origin, self._base_path = origin_of(base.scheme, base.raw_authority), base.raw_path.rstrip("/")
        # Routes of one launch share one policy (see routes.Router), so one count says what it refused.
        self.access = access or AccessPolicy(host, allow_hosts=options.allow_hosts, allow_origins=options.allow_origins)
        if self.access.token is not None:  # a body that quotes the base URL it was given quotes the token
            upstream_secrets += (self.access.token,)
        self.route = options.route  # None: the unnamed route, at `/` of its own port
        self.mount = ""  # the path prefix a Router serves this route under ("/r/NAME"), "" on a port of its own
        self.store = store
        self.host = host
        self.translate = translate
        self.repair = repair
        self.timeout = timeout
        self.max_body = max_body
        self.limits = limits
        # The chain of hooks, in request order; an intercepted request gets the first two alone.
        self.vault = CredentialVault(upstream_secrets)
        self._addons: list[Addon] = [self.vault, ReplayMarking()]
        try:
            # Repair first: it fixes the request in the dialect the client speaks, before translation.
            if repair:
                self._addons.append(RepairFactory(self.upstream))
            if translate:
                self._addons.append(TransformFactory(translate))
            # Last: a signature covers what the hooks before it rewrote.
            self._addons.append(Signing(self.upstream, translate.partition(":")[2] if translate else None))
        except TransformError as exc:
            raise ForwarderError(str(exc)) from exc
        self.recorder = Recorder(store, None if on_event is None else Notifier(on_event))
        self._policy = Policy(self.upstream_shown, max_body, timeout, limits.client_timeout, unsendable_head,
                              _NOT_FORWARDED, upstream_auth)
        self.mode = Mode.TRANSLATE if translate else Mode.REPAIR if repair else Mode.PASSTHROUGH
        self._active: set[asyncio.Task] = set()  # requests in flight, to cut on stop()
        self._session: aiohttp.ClientSession | None = None  # the WebSocket relay's upstream client
        self._pool: Pool | None = None  # the HTTP relay's
        # Proxy mode (connect.py): CONNECT is answered, provider hosts intercepted with the local CA.
        try:
            intercepts = InterceptList(proxy.intercept)
        except InterceptError as exc:
            raise ForwarderError(str(exc)) from exc
        self.connect = ConnectHandler(self.access, intercepts, ca_dir=proxy.ca_dir, allow_connect=proxy.allow_connect,
                                      handshake_timeout=limits.client_timeout, max_tunnels=proxy.max_tunnels,
                                      idle_timeout=proxy.tunnel_idle)
        upstream_ca = proxy.upstream_ca
        self._upstream_ssl: ssl.SSLContext | None = None  # the default verification
        if upstream_ca is not None:
            # Trusted besides the usual roots, e.g. a test upstream's own CA.
            self._upstream_ssl = ssl.create_default_context()
            try:
                self._upstream_ssl.load_verify_locations(upstream_ca)
            except (OSError, ssl.SSLError) as exc:
                raise ForwarderError(f"--upstream-ca {upstream_ca}: cannot load it as PEM certificates: "
                                     f"{exc}") from None
        self._server = ServerThread(
            self.app, host, options.port, name="toolwire-forwarder", setup=self.open_client, teardown=self.close_client,
            limits=limits, connect=self.connect, websocket=True, relay_control=True,
        )

    @property
    def proxy(self) -> ProxyOptions:
        """Proxy mode as launched."""
        return self.options.proxy

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
        self._pool = Pool(self._upstream_ssl, _connect_timeout(self.timeout))
        self._session = aiohttp.ClientSession(
            skip_auto_headers=_SKIP_AUTO,
            timeout=aiohttp.ClientTimeout(total=None, connect=_connect_timeout(self.timeout)),
            connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300, ssl=self._upstream_ssl or True),
            cookie_jar=aiohttp.DummyCookieJar(),
        )

    async def close_client(self) -> None:
        await self.connect.close()
        if self._pool is not None:
            self._pool.close()
        if self._session is not None:
            await self._session.close()

    def _target(self, path: str, query: str, intercepted: Interception | None) -> tuple[Origin, str]:
        """Where a checked target (see access.target_problem) goes, and its request target: the
        upstream's own origin (an intercepted tunnel's, in proxy mode), its base path followed by `path`."""
        target = path + "?" + query if query else path
        if intercepted is not None:
            return origin_of(intercepted.scheme, intercepted.authority), intercepted.base_path + target
        return self._origin, self._base_path + target

    def _upstream_url(self, path: str, query: str, intercepted: Interception | None = None) -> URL:
        """The same as a URL, for the WebSocket client."""
        origin, target = self._target(path, query, intercepted)
        return URL(f"{origin.scheme}://{origin.host_header}{target}", encoded=True)

    def credentials(self, flow_id: int) -> list[tuple[str, str]]:
        """The secret headers the client sent with that flow (memory only, for replay)."""
        return self.vault.credentials(flow_id)

    # -- the ASGI app ------------------------------------------------------------------------

    async def app(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] not in ("http", "websocket"):
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
            await refused.send(send, scope["type"])
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
            if scope["type"] == "websocket":
                await self._socket(scope, receive, send, raw_path, raw_query, t0, started_at, intercepted, refusal)
            elif refusal is None:
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
               intercepted: Interception | None, addons: Iterable[Addon], *, socket: bool = False) -> _Driver:
        """The exchange of an admitted request, with the hooks `addons` give it, and its driver."""
        if intercepted is None:
            mode, translate, policy = self.mode, self.translate, self._policy
        else:
            mode, translate = Mode.PASSTHROUGH, None
            policy = replace(self._policy, upstream_shown=intercepted.shown, upstream_auth=())
        path = raw_path.decode("latin-1")
        query = raw_query.decode("latin-1")
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        flow = Flow(
            id=self.store.next_flow_id(), session_id=self.store.session_id or 0, started_at=started_at,
            method=scope.get("method", "GET"), path=path, query=redact_query(query), request_headers=redact_headers(headers),
            mode=mode, translate=translate, route="" if intercepted is not None else self.route or "",
        )
        # The vault first, before any submit: every path below records the flow, and the store scrubs its secrets.
        hooks = [hook for addon in addons if (hook := addon.hook(flow, headers, query)) is not None]
        if socket:
            return _Driver(self, SocketExchange(policy, flow, headers, query, hooks), t0, intercepted)
        push = is_server_push(flow.method, path, next((v for k, v in headers if k.lower() == "accept"), ""))
        return _Driver(self, Exchange(policy, flow, headers, query, hooks, server_push=push), t0, intercepted)

    async def _socket(self, scope: dict, receive: Callable, send: Callable, raw_path: bytes, raw_query: bytes,
                      t0: float, started_at: float, intercepted: Interception | None,
                      refusal: tuple[int, str, str] | None) -> None:
        """Relay and record one WebSocket session (or answer its upgrade with a refusal). Only the
        credential and replay hooks apply: frames are relayed as they are, or not at all (426)."""
        if (await receive())["type"] != "websocket.connect":
            return  # the client left before its handshake was read whole
        driver = self._begin(scope, raw_path, raw_query, t0, started_at, intercepted, self._addons[:2], socket=True)
        exchange = driver.exchange
        assert isinstance(exchange, SocketExchange)
        commands: Sequence[Command | SocketCommand]
        if refusal is not None:
            exchange.flow.route = ""
            commands = [Record(), *exchange.refuse(*refusal, driver.at())]
        else:
            commands = exchange.upgrade()
        opening = commands[-1]
        if type(opening) is not OpenSocket:
            await _SocketDriver(driver, send).run(commands)
            return
        await _SocketDriver(driver, send).relay(receive, opening, commands[:-1])

    async def _refuse(self, scope: dict, receive: Callable, send: Callable, raw_path: bytes, raw_query: bytes,
                      t0: float, started_at: float, status: int, kind: str, message: str) -> None:
        """Record an admitted request that goes to no upstream and answer it with `status`: the
        flow keeps the whole path the client sent and names no route."""
        driver = self._begin(scope, raw_path, raw_query, t0, started_at, None, (self.vault,))
        exchange = driver.exchange
        flow = exchange.flow
        flow.route = ""
        flow.mode, flow.translate = Mode.PASSTHROUGH, None
        body, refused = await _read_body(receive, self.max_body, self.limits.client_timeout)
        if refused is not None and refused[0] is None:  # nobody is left to answer
            await driver.run(send, exchange.handle(BodyRefused(None, refused[1], body)))
            return
        flow.request_body = body
        await driver.run(send, [Record(), *exchange.refuse(status, kind, message, driver.at(),
                                                            close=refused is not None)])

    async def _forward(self, scope: dict, receive: Callable, send: Callable, raw_path: bytes, raw_query: bytes,
                       t0: float, started_at: float, intercepted: Interception | None = None) -> None:
        # Intercepted (proxy mode): relayed untransformed.
        driver = self._begin(scope, raw_path, raw_query, t0, started_at, intercepted,
                             self._addons if intercepted is None else self._addons[:2])
        body, refused = await _read_body(receive, self.max_body, self.limits.client_timeout)
        event = BodyRead(body) if refused is None else BodyRefused(refused[0], refused[1], body)
        commands = driver.exchange.handle(event)
        if commands and type(commands[0]) is SendUpstream:
            await driver.relay(send, commands[0], commands[1:], scope["extensions"][GONE_EXTENSION])
        else:
            await driver.run(send, commands)


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


class _Driver:
    """Carries one exchange: feeds it the events of the client and the upstream, carries out its
    commands. Owns the transport (upstream.py's connection, ASGI downstream) and the timers, no policy."""

    __slots__ = ("forwarder", "exchange", "t0", "intercepted", "silence")

    def __init__(self, forwarder: Forwarder, exchange: Exchange, t0: float, intercepted: Interception | None) -> None:
        self.forwarder = forwarder
        self.exchange = exchange
        self.t0 = t0
        self.intercepted = intercepted
        self.silence: _Silence | None = None

    def at(self) -> float:
        return time.perf_counter() - self.t0

    async def run(self, send: Callable, commands: list[Command]) -> None:
        """Carry out `commands` in order (never a SendUpstream: relay() starts that)."""
        silence = self.silence
        for command in commands:
            kind = type(command)
            if kind is SendData:
                assert isinstance(command, SendData)
                if command.more:
                    if silence is not None:
                        silence.waiting = False  # a slow client is not a silent upstream
                    await send({"type": "http.response.body", "body": command.data, "more_body": True})
                    if silence is not None:
                        silence.last = time.perf_counter()
                        silence.waiting = True
                else:
                    if silence is not None:
                        silence.last = time.perf_counter()
                        silence.waiting = False
                    await send({"type": "http.response.body", "body": command.data, "more_body": False})
            elif kind is SendHead:
                assert isinstance(command, SendHead)
                await send({"type": "http.response.start", "status": command.status,
                            "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in command.headers]})
            else:
                self.settle(command)

    def settle(self, command: Command) -> None:
        """Carry out a command that sends nothing (Record, Finish, Abort): possible while cancelled."""
        recorder = self.forwarder.recorder
        flow = self.exchange.flow
        if type(command) is Finish:
            assert isinstance(command, Finish)
            flow.state = command.state  # last: the store treats a non-pending flow as final
            recorder.finished(flow)
        elif type(command) is Record:
            recorder.started(flow)
        elif type(command) is Abort:
            raise _AbortResponse()

    async def relay(self, send: Callable, request: SendUpstream, then: list[Command], gone: asyncio.Future) -> None:
        """Send `request` upstream from this task (no task of its own: it costs a loop turn) and relay
        its answer. `gone`: the server's GONE_EXTENSION, done when the client hangs up."""
        forwarder = self.forwarder
        assert forwarder._pool is not None
        for command in then:
            self.settle(command)
        origin, target = forwarder._target(request.path, request.query, self.intercepted)
        await self._response(forwarder._pool.request(origin, request.method, target, request.headers, request.body),
                             gone, send)

    async def _response(self, request: Awaitable[Connection], watcher: asyncio.Future, send: Callable) -> None:
        forwarder = self.forwarder
        exchange = self.exchange
        timeout = forwarder.timeout
        task = asyncio.current_task()
        assert task is not None
        cut = False  # this task was cancelled here, to end the wait for the head: not by stop()

        def cut_short(_: object = None) -> None:  # the silence's timer, or the client gone (`watcher` done)
            nonlocal cut
            if not cut:
                cut = True
                task.cancel()  # the upstream sees its connection close

        # Until the head comes, the connect time counts on top: a slow connect has its own error.
        silence = self.silence = _Silence(None if exchange.server_push else timeout, _connect_timeout(timeout),
                                          forwarder.limits.client_timeout, cut_short)
        watcher.add_done_callback(cut_short)
        try:
            try:
                response = await request
            except asyncio.CancelledError:
                if cut:
                    task.uncancel()
                event: UpstreamSilent | Stopped | ClientGone
                if silence.fired:
                    event = UpstreamSilent(self.at())
                elif not watcher.done():  # this task itself is cancelled: stop() cuts it
                    event = Stopped(self.at())
                else:
                    event = ClientGone(self.at())
                await self.run(send, exchange.handle(event))
                return
            except NoAnswer as exc:
                await self.run(send, exchange.handle(UpstreamFailed(exc.kind, str(exc), self.at())))
                return
            finally:
                watcher.remove_done_callback(cut_short)

            silence.arrived(response.close)
            try:
                await self._relay_body(response, watcher, send, silence)
            finally:
                response.release()
        finally:
            silence.cancel()

    async def _relay_body(self, response: Connection, watcher: asyncio.Future, send: Callable,
                          silence: _Silence) -> None:
        exchange = self.exchange
        handle = exchange.handle
        t0 = self.t0
        perf_counter = time.perf_counter
        raw_headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.raw_headers]
        await self.run(send, handle(UpstreamHead(response.status, raw_headers, perf_counter() - t0)))
        if exchange.done:
            return

        # A client that hangs up closes the upstream response at once, even mid-wait between
        # two chunks: the upstream sees its connection close and stops generating.
        def client_gone(_: asyncio.Future) -> None:
            response.close()

        watcher.add_done_callback(client_gone)
        read = response.read
        try:
            while data := await read():
                now = perf_counter()
                silence.last = now
                if watcher.done():
                    break
                commands = handle(UpstreamData(data, now - t0))
                if commands:
                    await self.run(send, commands)
                    if exchange.done:
                        return
            if watcher.done():
                await self.run(send, handle(ClientGone(self.at())))
                return
            # Once the response is complete, receive() reports a disconnect too: not a hang-up.
            watcher.remove_done_callback(client_gone)
            await self.run(send, handle(UpstreamEnd(self.at())))
        except BodyBroken as exc:
            if silence.fired:
                event: UpstreamSilent | ClientGone | UpstreamFailed = UpstreamSilent(self.at())
            elif watcher.done():
                event = ClientGone(self.at())
            else:
                event = UpstreamFailed("failed", str(exc), self.at())
            await self.run(send, handle(event))
        except asyncio.CancelledError:
            for command in handle(Stopped(self.at(), stalled=silence.stalled)):
                self.settle(command)
            raise
        finally:
            watcher.remove_done_callback(client_gone)


class _SocketDriver:
    """Carries one WebSocket exchange: the client's socket through ASGI (uvicorn's protocol, see
    server._Socket), the upstream's through aiohttp; the machine decides, this sends."""

    __slots__ = ("driver", "exchange", "send", "upstream")

    def __init__(self, driver: _Driver, send: Callable) -> None:
        self.driver = driver
        exchange = driver.exchange
        assert isinstance(exchange, SocketExchange)
        self.exchange = exchange
        self.send = send
        self.upstream: aiohttp.ClientWebSocketResponse | None = None

    async def run(self, commands: Sequence[Command | SocketCommand]) -> None:
        for command in commands:
            kind = type(command)
            if kind is SendFrame:
                assert isinstance(command, SendFrame)
                if command.to_client:
                    await self.send({"type": "websocket.send", "text": command.payload.decode()} if command.text
                                    else {"type": "websocket.send", "bytes": command.payload})
                else:
                    assert self.upstream is not None
                    await self.upstream.send_frame(command.payload, aiohttp.WSMsgType.TEXT if command.text
                                                   else aiohttp.WSMsgType.BINARY)
            elif kind is SendControl:
                assert isinstance(command, SendControl)
                if command.to_client:
                    await self.send({"type": PING_MESSAGE if command.ping else PONG_MESSAGE, "bytes": command.payload})
                else:
                    assert self.upstream is not None
                    try:
                        await (self.upstream.ping if command.ping else self.upstream.pong)(command.payload)
                    except (OSError, aiohttp.ClientError, RuntimeError):
                        pass  # the upstream is going: its close or loss comes as an event of its own
            elif kind is Close:
                assert isinstance(command, Close)
                await self._close(command)
            elif kind is Accept:
                assert isinstance(command, Accept)
                await self.send({"type": "websocket.accept", "subprotocol": command.subprotocol,
                                 "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in command.headers]})
            elif kind is SendHead:
                assert isinstance(command, SendHead)
                await self.send({"type": "websocket.http.response.start", "status": command.status,
                                 "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in command.headers]})
            elif kind is SendData:
                assert isinstance(command, SendData)
                await self.send({"type": "websocket.http.response.body", "body": command.data, "more_body": False})
            else:
                assert isinstance(command, (Record, Finish, Abort))
                self.driver.settle(command)

    async def _close(self, command: Close) -> None:
        try:
            if command.client:
                await self.send({"type": "websocket.close", "code": command.code, "reason": command.reason})
            elif self.upstream is not None:
                await self.upstream.close(code=command.code, message=command.reason.encode())
        except (OSError, aiohttp.ClientError, RuntimeError):
            pass  # that side is gone already: what there was to close is closed

    async def relay(self, receive: Callable, opening: OpenSocket, then: Sequence[Command | SocketCommand]) -> None:
        driver = self.driver
        forwarder = driver.forwarder
        exchange = self.exchange
        assert forwarder._session is not None
        connecting = asyncio.ensure_future(forwarder._session.ws_connect(
            forwarder._upstream_url(opening.path, opening.query, driver.intercepted), headers=opening.headers,
            protocols=opening.subprotocols, compress=15 if opening.compress else 0,
            # autoping off: the upstream's pings go to the client, and the client's pongs answer them.
            max_msg_size=forwarder.limits.max_message, autoping=False, autoclose=True,
            timeout=aiohttp.ClientWSTimeout(ws_receive=None, ws_close=10.0)))
        await self.run(then)
        try:
            try:
                async with asyncio.timeout(forwarder.timeout):
                    upstream = await connecting
            except aiohttp.WSServerHandshakeError as exc:
                headers = [] if exc.headers is None else list(exc.headers.items())
                await self.run(exchange.socket_event(SocketRefused(exc.status, headers, driver.at())))
                return
            except TimeoutError:
                await self.run(exchange.socket_event(UpstreamFailed(
                    "failed", f"no answer to the upgrade in {forwarder.timeout:g} s", driver.at())))
                return
            except aiohttp.ConnectionTimeoutError:
                await self.run(exchange.socket_event(UpstreamFailed(
                    "connect_timeout", f"{_connect_timeout(forwarder.timeout):g} s", driver.at())))
                return
            except aiohttp.ClientConnectorError as exc:
                await self.run(exchange.socket_event(UpstreamFailed(
                    "unreachable", connect_reason(exc.os_error), driver.at())))
                return
            except (aiohttp.ClientError, OSError) as exc:
                await self.run(exchange.socket_event(UpstreamFailed("failed", f"{type(exc).__name__}: {exc}",
                                                                    driver.at())))
                return
            self.upstream = upstream
            head = upstream._response  # aiohttp keeps the handshake's response only there
            raw_headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in head.raw_headers]
            await self.run(exchange.socket_event(SocketOpened(head.status, raw_headers, upstream.protocol,
                                                              driver.at())))
            # Each pump ends once the exchange is done: the side that closed first is answered, and
            # closing the other side ends the other pump's wait (uvicorn and aiohttp both wake it).
            pumps = [asyncio.ensure_future(self._from_client(receive)), asyncio.ensure_future(self._from_upstream())]
            try:
                await asyncio.gather(*pumps)
            finally:
                for pump in pumps:
                    pump.cancel()
                await asyncio.gather(*pumps, return_exceptions=True)
        except asyncio.CancelledError:  # stop() cuts the session: both sides are told, best effort
            connecting.cancel()
            commands = exchange.socket_event(Stopped(driver.at()))
            for command in commands:
                if type(command) is Close:
                    assert isinstance(command, Close)
                    try:
                        async with asyncio.timeout(1.0):
                            await self._close(command)
                    except (TimeoutError, asyncio.CancelledError):
                        pass
                elif isinstance(command, (Record, Finish)):  # nothing more is sent while cancelled
                    driver.settle(command)
            raise
        finally:
            if self.upstream is not None and not self.upstream.closed:
                self.upstream._response.close()  # nothing more goes either way: drop the connection

    async def _from_client(self, receive: Callable) -> None:
        exchange = self.exchange
        at = self.driver.at
        while not exchange.done:
            message = await receive()
            kind = message["type"]
            if kind == "websocket.receive":
                text = message.get("text")
                if text is not None:
                    event = FrameIn(True, True, text.encode(), at())
                else:
                    event = FrameIn(True, False, message.get("bytes") or b"", at())
                await self.run(exchange.socket_event(event))
            elif kind == "websocket.disconnect":
                await self.run(exchange.socket_event(Closed(True, message.get("code", 1005),
                                                            message.get("reason") or "", at())))
            elif kind == PING_MESSAGE or kind == PONG_MESSAGE:
                await self.run(exchange.socket_event(ControlIn(True, kind == PING_MESSAGE, message["bytes"], at())))

    async def _from_upstream(self) -> None:
        exchange = self.exchange
        upstream = self.upstream
        assert upstream is not None
        at = self.driver.at
        text_type, binary_type, close_type, error_type = (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY,
                                                          aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.ERROR)
        ping_type, pong_type = aiohttp.WSMsgType.PING, aiohttp.WSMsgType.PONG
        while not exchange.done:
            message = await upstream.receive()
            kind = message.type
            if kind is text_type:
                await self.run(exchange.socket_event(FrameIn(False, True, message.data.encode(), at())))
            elif kind is binary_type:
                await self.run(exchange.socket_event(FrameIn(False, False, message.data, at())))
            elif kind is ping_type or kind is pong_type:
                await self.run(exchange.socket_event(ControlIn(False, kind is ping_type, message.data, at())))
            elif kind is close_type:
                await self.run(exchange.socket_event(Closed(False, message.data, message.extra or "", at())))
            elif kind is error_type:
                await self.run(exchange.socket_event(UpstreamFailed("failed", f"{message.data}", at())))
            else:  # closed under us: no close frame came
                await self.run(exchange.socket_event(Closed(False, 1006, "", at())))


class _Silence:
    """Upstream silence and client stalls, measured here with one timer per request, moved only
    when it fires; the relay writes two fields per chunk (a timer re-armed per read would cost a
    loop call per chunk, and aiohttp's sock_read, used before, fired on connections already back in
    their pool). `timeout` None: the upstream may stay silent (a push stream is idle by design). A
    client that reads nothing for `stall` seconds while a chunk waits for it gets its request task
    cancelled, `stalled` telling why."""

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


def _connect_timeout(timeout: float) -> float:
    return min(timeout, 30.0)  # a live upstream accepts at once; waiting longer only hides an outage


class _AbortResponse(Exception):
    """Raised out of the app after the response started: uvicorn then cuts the connection, so the
    client sees a truncated body instead of a stream that looks complete."""


def _not_an_abort(record: logging.LogRecord) -> bool:
    # The abort is deliberate and already recorded on the flow; uvicorn need not log a traceback.
    return not (record.exc_info and isinstance(record.exc_info[1], _AbortResponse))


logging.getLogger("uvicorn.error").addFilter(_not_an_abort)
