"""An ASGI app served by uvicorn on its own thread and event loop.

The forwarder and the mock upstream both run this way so that nothing else in the process (the
TUI's loop, a test's loop, a slow render) can stall their I/O."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import threading
from collections.abc import Awaitable, Callable

import uvicorn

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # no httptools for this platform: h11 keeps the whole target in raw_path
    HttpToolsProtocol = None

ASGIApp = Callable[[dict, Callable[[], Awaitable[dict]], Callable[[dict], Awaitable[None]]], Awaitable[None]]


class ListenError(Exception):
    """The server cannot listen where it was asked to."""


TARGET_EXTENSION = "toolwire.request_target"


def request_target(scope: dict) -> bytes:
    """The request target exactly as the client sent it (path and query)."""
    target = scope.get("extensions", {}).get(TARGET_EXTENSION)
    if target is not None:
        return target
    raw_path = scope.get("raw_path") or scope["path"].encode()
    return raw_path + b"?" + scope["query_string"] if scope["query_string"] else raw_path


if HttpToolsProtocol is not None:
    class _TargetKeepingProtocol(HttpToolsProtocol):
        """httptools reduces an absolute-form target (`POST http://elsewhere/v1/x`) to its path; the
        apps must see what the client sent in order to refuse it."""

        def on_headers_complete(self) -> None:
            self.scope.setdefault("extensions", {})[TARGET_EXTENSION] = bytes(self.url)
            super().on_headers_complete()


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _new_loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop
    except ImportError:  # uvloop is not built for every platform; asyncio's loop works
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


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
    ) -> None:
        self.app = app
        self.host = host
        self.port = port
        self.name = name
        self._setup = setup
        self._teardown = teardown
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> None:
        """Bind, then serve on a new thread; returns once the socket listens and the loop runs."""
        sock = self._bind()
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            interface="asgi3",  # bound methods fool uvicorn's guess
            http=_TargetKeepingProtocol if HttpToolsProtocol is not None else "h11",
            lifespan="off",
            proxy_headers=False,  # relay X-Forwarded-* untouched; nothing here trusts them
            log_config=None,  # never reconfigure the host application's logging
            log_level="warning",
            access_log=False,
            # The upstream's own Date/Server headers are relayed; uvicorn must not add its own.
            server_header=False,
            date_header=False,
            ws="none",
            timeout_graceful_shutdown=1,
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
