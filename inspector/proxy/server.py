"""An ASGI app served by uvicorn on its own thread and event loop.

The forwarder and the mock upstream both run this way so that nothing else in the process (the
TUI's loop, a test's loop, a slow render) can stall their I/O."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import threading
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import httptools
import uvicorn
# httptools comes with uvicorn[standard], a dependency: the protocol below builds on it.
from uvicorn.protocols.http.httptools_impl import HEADER_RE, HEADER_VALUE_RE, STATUS_LINE, HttpToolsProtocol
# websockets comes with uvicorn[standard] too: the upgraded connection's protocol builds on it.
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.exceptions import InvalidState
from websockets.frames import Frame, Opcode
from websockets.server import ServerProtocol

from .options import ClientLimits

ASGIApp = Callable[[dict, Callable[[], Awaitable[dict]], Callable[[dict], Awaitable[None]]], Awaitable[None]]


class ListenError(Exception):
    """The server cannot listen where it was asked to."""


TARGET_EXTENSION = "toolwire.request_target"
# ASGI has no control frames: a server that relays them (ServerThread(relay_control=True)) gives the
# app the client's pings and pongs as these messages, and sends the ones the app gives it.
PING_MESSAGE = "toolwire.websocket.ping"
PONG_MESSAGE = "toolwire.websocket.pong"
INTERCEPT_EXTENSION = "toolwire.intercepted"  # connect.Interception of a request in an intercepted tunnel
# A future the protocol resolves when the client's connection is lost before the request's response
# is complete: how an app learns of a hang-up without a task of its own waiting on receive().
GONE_EXTENSION = "toolwire.client_gone"


def request_target(scope: dict) -> bytes:
    """The request target exactly as the client sent it (path and query)."""
    target = scope.get("extensions", {}).get(TARGET_EXTENSION)
    if target is not None:
        return target
    raw_path = scope.get("raw_path") or scope["path"].encode()
    return raw_path + b"?" + scope["query_string"] if scope["query_string"] else raw_path


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def unsendable_head(status: int, headers: list[tuple[str, str]]) -> str | None:
    """Why the HTTP layer below would refuse to send this response head, or None. It raises on
    such a head and the client gets a closed connection: an upstream's head is checked here first,
    by the layer's own rules, so that the client gets an error saying why instead."""
    if status not in STATUS_LINE:
        return f"status {status}, outside 100-599"
    for name, value in headers:  # str holding the bytes as latin-1, as the forwarder relays them
        if HEADER_RE.search(name.encode("latin-1")):
            return f"header name {name!r}, not an HTTP token"
        if (bad := HEADER_VALUE_RE.search(value.encode("latin-1"))) is not None:
            return f"header {name!r} holds control byte 0x{bad.group()[0]:02x}"
    return None


def _new_loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop
    except ImportError:  # uvloop is not built for every platform; asyncio's loop works
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


_HEAD_TOO_LARGE = (b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; charset=utf-8\r\n"
                   b"connection: close\r\ncontent-length: %d\r\n\r\n%s")


_NOT_ALLOWED = (b"HTTP/1.1 405 Method Not Allowed\r\ncontent-type: text/plain; charset=utf-8\r\n"
                b"connection: close\r\ncontent-length: %d\r\n\r\n%s")


class ConnectTaker(Protocol):
    def take(self, transport: asyncio.Transport, target: bytes, headers: list[tuple[bytes, bytes]], rest: bytes,
             serve: Callable[[Any], asyncio.Protocol]) -> None: ...

    def released(self) -> None:
        """The connection of an intercepted tunnel (a protocol `serve` made) is lost."""


class _BoundedHttpTools(HttpToolsProtocol):
    """uvicorn's httptools protocol with a bounded request head, a deadline to send it and a
    cap on open connections. Nothing is recorded for what it refuses: no request exists yet.

    It also keeps the request target as sent: httptools reduces an absolute-form target
    (`POST http://elsewhere/v1/x`) to its path, and the apps must see it in order to refuse it."""

    limits = ClientLimits()
    # Proxy mode (connect.py): takes the connection over when a CONNECT request comes; None answers 405.
    connect: ConnectTaker | None = None
    intercepted: Any = None  # a connect.Interception on the protocol serving an intercepted tunnel's requests

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._connect_target: bytes | None = None
        self._head_bytes = 0
        self._in_head = True  # awaiting a request head: the first one, or the next on this connection
        self._head_timer: asyncio.TimerHandle | None = None
        self._gone: asyncio.Future[None] | None = None  # the GONE_EXTENSION of the latest request
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            transport.abort()
            return
        self._head_timer = self.loop.call_later(self.limits.client_timeout, self._head_timed_out)

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_head_timer()
        answering = self.cycle is not None and not self.cycle.response_complete
        super().connection_lost(exc)
        gone = self._gone
        if answering and gone is not None and not gone.done():
            gone.set_result(None)
        if self.intercepted is not None and self.connect is not None:
            self.connect.released()  # its place among the tunnels is free

    def data_received(self, data: bytes) -> None:
        if self._in_head:
            self._head_bytes += len(data)
            if self._head_timer is None:  # a new request on a kept-alive connection
                self._head_timer = self.loop.call_later(self.limits.client_timeout, self._head_timed_out)
        # uvicorn's data_received, but for what follows an upgrade: the offset of the bytes after
        # a CONNECT head, which belong to the tunnel, is only in the exception.
        self._unset_keepalive_if_required()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            message = "Invalid HTTP request received."
            self.logger.warning(message)
            self.send_400_response(message)
            return
        except httptools.HttpParserUpgrade as upgrade:
            if self._connect_target is not None:
                self._hand_over(data[upgrade.args[0]:])
                return
            if self._should_upgrade():
                self.handle_websocket_upgrade()
                return
            self._unsupported_upgrade_warning()
        # Checked after feeding: one read (at most a few hundred KiB) past the limit is held
        # at most, and a read that holds the head's end and the body's start is never refused.
        if self._in_head and self._head_bytes > self.limits.max_head and not self.transport.is_closing():
            refusal = f"request head larger than {self.limits.max_head} bytes".encode()
            self.transport.write(_HEAD_TOO_LARGE % (len(refusal), refusal))
            self.transport.close()

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._stop_head_timer()
        if self.parser.get_method() == b"CONNECT":  # no ASGI request: the connection becomes a tunnel
            self._connect_target = bytes(self.url)
            return
        extensions = self.scope.setdefault("extensions", {})
        extensions[TARGET_EXTENSION] = bytes(self.url)
        self._gone = extensions[GONE_EXTENSION] = self.loop.create_future()
        if self.intercepted is not None:
            extensions[INTERCEPT_EXTENSION] = self.intercepted
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        if self._connect_target is not None:
            return
        # The request is read whole: what comes next on this connection is the next head.
        self._in_head = True
        self._head_bytes = 0
        super().on_message_complete()

    def handle_websocket_upgrade(self) -> None:
        if self.cycle is not None and not self.cycle.response_complete:
            self.transport.abort()  # pipelined behind a request still answering: no clean reply exists
            return
        super().handle_websocket_upgrade()
        # The connection is the socket protocol's now (ws=_Socket), its handshake read and its app
        # task created but not yet run: it learns what this protocol knew, as an HTTP request's scope does.
        protocol = self.transport.get_protocol()
        assert isinstance(protocol, _Socket)
        protocol.adopt(bytes(self.url), self.intercepted, self.connect)
        self.intercepted = None  # the socket's protocol releases the tunnel's place now

    def _hand_over(self, rest: bytes) -> None:
        """The CONNECT head is read: the connection leaves uvicorn's care for the connect taker's."""
        self.connections.discard(self)
        self._unset_keepalive_if_required()
        if self.cycle is not None and not self.cycle.response_complete:
            self.transport.abort()  # pipelined behind a request still answering: no clean reply exists
            return
        if self.connect is None or self.intercepted is not None:  # nor inside a tunnel
            message = b"CONNECT is not served here"
            self.transport.write(_NOT_ALLOWED % (len(message), message))
            self.transport.close()
            return
        self.connect.take(self.transport, self._connect_target, self.headers, rest, self._serve_intercepted)

    def _serve_intercepted(self, intercepted: object) -> _BoundedHttpTools:
        """A fresh protocol, on this server, for the requests of an intercepted tunnel."""
        protocol = type(self)(self.config, self.server_state, self.app_state, _loop=self.loop)
        protocol.intercepted = intercepted
        return protocol

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self._in_head:
            self.transport.close()

    def _stop_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None


class _RelayedPings(ServerProtocol):
    """websockets' server protocol, but a ping is not answered here: it goes to `relay`, with the
    pongs, and the app answers it (with the pong the other end of the relay gives)."""

    relay: Callable[[Frame], None]

    def recv_frame(self, frame: Frame) -> None:
        if frame.opcode is Opcode.PING or frame.opcode is Opcode.PONG:
            self.relay(frame)
            self.events.append(frame)  # as the base does: uvicorn reads its keepalive's pongs there
            return
        super().recv_frame(frame)


class _Socket(WebSocketsSansIOProtocol):
    """uvicorn's WebSocket protocol (websockets' sans-io framing) for an upgraded request: its scope
    carries the request target and the tunnel it came through, like an HTTP request's. With
    `relay_control`, pings and pongs go to the app and come from it (PING_MESSAGE, PONG_MESSAGE)."""

    intercepted: Any = None
    connect: ConnectTaker | None = None
    relay_control = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.relay_control:
            # The connection uvicorn made, as it made it (extensions, limits), answering no ping itself.
            self.conn.__class__ = _RelayedPings
            assert isinstance(self.conn, _RelayedPings)
            self.conn.relay = self._control_in

    def _control_in(self, frame: Frame) -> None:
        data = bytes(frame.data)
        if frame.opcode is Opcode.PONG and data == self.pending_ping_payload:
            return  # the answer to uvicorn's own keepalive ping: this hop's, not the upstream's
        self.queue.put_nowait({"type": PING_MESSAGE if frame.opcode is Opcode.PING else PONG_MESSAGE, "bytes": data})

    def adopt(self, target: bytes, intercepted: Any, connect: ConnectTaker | None) -> None:
        """Take over from the HTTP protocol that read the upgrade request: its target as sent, and
        the tunnel it came through."""
        self.intercepted = intercepted
        self.connect = connect
        scope = getattr(self, "scope", None)  # none when websockets refused the handshake itself
        if scope is not None:
            extensions = scope["extensions"]
            extensions[TARGET_EXTENSION] = target
            if intercepted is not None:
                extensions[INTERCEPT_EXTENSION] = intercepted

    async def send(self, message: Any) -> None:
        kind = message["type"]
        if kind == PING_MESSAGE or kind == PONG_MESSAGE:
            if self.disconnected or self.close_sent or self.transport.is_closing():
                return  # a control frame for a closing socket has no one left to answer
            try:
                (self.conn.send_ping if kind == PING_MESSAGE else self.conn.send_pong)(message["bytes"])
            except InvalidState:
                return
            self.transport.write(b"".join(self.conn.data_to_send()))
            return
        await super().send(message)
        if message["type"] == "websocket.http.response.body" and not message.get("more_body", False):
            # Answered without a socket (a refusal, a 426): done, not the failed handshake uvicorn logs.
            self.handshake_complete = True

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if self.intercepted is not None and self.connect is not None:
            self.connect.released()


class Served:
    """What a server behind an access policy tells its clients (the forwarder, a router of routes, the
    mock upstream): its port, its own URL, and the URL to give clients, with the access token in the
    path when one is needed and a route's prefix when it shares a port (`mount`)."""

    _server: ServerThread
    access: Any  # an AccessPolicy (proxy/access.py)
    mount = ""

    @property
    def port(self) -> int:
        return self._server.port

    @property
    def base_url(self) -> str:
        return self._server.base_url

    @property
    def client_url(self) -> str:
        return self.base_url + self.access.url_prefix + self.mount


class ServerThread:
    """Serve `app` on (host, port); `setup`/`teardown` run on the server's loop around serving."""

    def __init__(
        self,
        app: ASGIApp,
        host: str,
        port: int,
        *,
        name: str,
        setup: Callable[[], Awaitable[None]] | None = None,
        teardown: Callable[[], Awaitable[None]] | None = None,
        limits: ClientLimits = ClientLimits(),
        connect: ConnectTaker | None = None,
        tls: tuple[str, str] | None = None,
        websocket: bool = False,
        relay_control: bool = False,
    ) -> None:
        self.app = app
        self.websocket = websocket  # upgrades reach the app as ASGI websocket scopes; else a plain request
        self.relay_control = relay_control  # the clients' pings and pongs go to the app (see _Socket)
        self.connect = connect
        self.tls = tls  # (certificate chain file, key file): serve HTTPS
        self.host = host
        self.port = port
        self.name = name
        self._setup = setup
        self._teardown = teardown
        self.limits = limits
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    @property
    def base_url(self) -> str:
        """The URL of `/` on this server (an IPv6 host in brackets); its port once started."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'http' if self.tls is None else 'https'}://{host}:{self.port}"

    def start(self) -> None:
        """Bind, then serve on a new thread; returns once the socket listens and the loop runs."""
        sock = self._bind()
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            interface="asgi3",  # bound methods fool uvicorn's guess
            lifespan="off",
            http=type("BoundedHttpTools", (_BoundedHttpTools,), {"limits": self.limits, "connect": self.connect}),
            timeout_keep_alive=self.limits.keep_alive,
            proxy_headers=False,  # relay X-Forwarded-* untouched; nothing here trusts them
            log_config=None,  # never reconfigure the host application's logging
            log_level="warning",
            access_log=False,
            # The upstream's own Date/Server headers are relayed; uvicorn must not add its own.
            server_header=False,
            date_header=False,
            ws=("none" if not self.websocket else
                type("RelayingSocket", (_Socket,), {"relay_control": True}) if self.relay_control else _Socket),
            ws_max_size=self.limits.max_message,
            timeout_graceful_shutdown=1,
            ssl_certfile=None if self.tls is None else self.tls[0],
            ssl_keyfile=None if self.tls is None else self.tls[1],
        )
        self._server = uvicorn.Server(config)
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = _new_loop()
            self.loop = loop
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._serve(sock, ready))
            except BaseException as exc:  # reported to start() when it happens before ready
                failure.append(exc)
                ready.set()
            finally:
                sock.close()
                loop.close()

        self._thread = threading.Thread(target=run, name=self.name, daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            raise ListenError(f"{self.name} failed to start: {failure[0]}") from failure[0]

    async def _serve(self, sock: socket.socket, ready: threading.Event) -> None:
        assert self._server is not None
        if self._setup is not None:
            await self._setup()
        try:
            # The socket already listens, so connections made from here on queue in its backlog.
            ready.set()
            await self._server.serve(sockets=[sock])
        finally:
            if self._teardown is not None:
                await self._teardown()

    def _bind(self) -> socket.socket:
        if not 0 <= self.port <= 65535:  # getaddrinfo would wrap 70000 to 4464 and listen there
            raise ListenError(f"cannot listen on port {self.port}: ports go from 0 to 65535")
        try:
            infos = socket.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        except socket.gaierror as exc:
            raise ListenError(f"cannot resolve listen host {self.host!r}: {exc}") from exc
        family, kind, proto, _, address = infos[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
            sock.listen(2048)
        except OSError as exc:
            sock.close()
            raise ListenError(f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}") from exc
        sock.setblocking(False)
        return sock

    def stop(self) -> None:
        if self._server is None or self._thread is None:
            return
        self._server.should_exit = True
        self._thread.join()
        self._server = None
        self._thread = None
