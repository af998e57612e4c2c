"""The forwarder's HTTP/1.1 client to its upstreams: one request at a time per connection, kept
alive in a pool per origin, the response head and body parsed by httptools (llhttp, the parser
uvicorn uses for the client's side).

Why not aiohttp's client, which the forwarder used before: per request it builds a URL, two
header multidicts, a request and a response object, a payload writer and a stream reader, and
takes the connector's locks; measured in tests/bench/proxy_overhead.py that was about a fifth of
the forwarder thread's CPU per small request. This client does what a relay needs and no more: it
sends the head and body it is given as they are (no header of its own but Host and the length),
relays the body bytes as they came (no decompression: the client asked for that encoding), and
says what went wrong in words the flow can keep. The WebSocket relay still uses aiohttp.

Everything the upstream sends is hostile: the head is bounded (MAX_HEAD), llhttp refuses what is
not HTTP (bare CR or LF, control bytes, a length together with chunking), the body is read with
backpressure (the socket pauses while HIGH_WATER bytes wait for the client)."""

from __future__ import annotations

import asyncio
import re
import socket
import ssl
import time
from collections.abc import Sequence
from functools import lru_cache
from typing import cast

import httptools
from yarl import URL

from .exchange import Failure

__all__ = ["MAX_HEAD", "BodyBroken", "ConnectTimeout", "Connection", "NoAnswer", "Origin", "Pool", "Unanswered",
           "Unreachable", "connect_reason", "origin_of"]

MAX_HEAD = 256 * 1024  # bytes of response head (status line and headers) accepted before it is refused
HIGH_WATER = 256 * 1024  # body bytes waiting for the client before the socket stops reading
KEEPALIVE = 15.0  # seconds an idle connection stays in the pool
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})  # RFC 9110 9.2.2: may be sent twice

_CHUNKED = b"chunked"
_SPLITS = re.compile("[\r\n\0]")


class NoAnswer(Exception):
    """The upstream gave no usable answer (str: why, for the flow; `kind`: the exchange's word for it)."""

    kind: Failure = "failed"


class ConnectTimeout(NoAnswer):
    """No connection within the connect timeout."""

    kind: Failure = "connect_timeout"


class Unreachable(NoAnswer):
    """The connection was refused, or the host name does not resolve (`error`: the OS's)."""

    kind: Failure = "unreachable"

    def __init__(self, error: OSError) -> None:
        super().__init__(connect_reason(error))


class Unanswered(NoAnswer):
    """The upstream closed the connection without a byte of answer."""


class BodyBroken(Exception):
    """The response body stopped before its end (str: why)."""


class Origin:
    """Where requests go: scheme, host and port, the Host header they carry, and the pool's key."""

    __slots__ = ("scheme", "host", "port", "host_header", "key")

    def __init__(self, scheme: str, host: str, port: int) -> None:
        self.scheme = scheme
        self.host = host
        self.port = port
        shown = f"[{host}]" if ":" in host else host  # an IPv6 literal
        default = 443 if scheme == "https" else 80
        self.host_header = shown if port == default else f"{shown}:{port}"
        self.key = (scheme, host, port)


@lru_cache(maxsize=256)
def origin_of(scheme: str, authority: str) -> Origin:
    """The origin of a checked `scheme://authority` (an intercepted tunnel's come and go, with few names)."""
    url = URL.build(scheme=scheme, authority=authority, encoded=True)
    assert url.raw_host is not None and url.port is not None
    return Origin(scheme, url.raw_host, url.port)


class Pool:
    """The kept-alive connections of one forwarder, per origin. Its methods run on the loop that
    serves the forwarder."""

    def __init__(self, tls: ssl.SSLContext | None, connect_timeout: float) -> None:
        self._tls = tls  # None: the default verification, its context made at the first https connection
        self.connect_timeout = connect_timeout
        self._idle: dict[tuple[str, str, int], list[Connection]] = {}
        self._open: set[Connection] = set()
        self._sweep: asyncio.TimerHandle | None = None

    async def request(self, origin: Origin, method: str, target: str, headers: Sequence[tuple[str, str]],
                      body: bytes | None) -> Connection:
        """Send one request and wait for its response head: the connection, holding the status
        and headers, whose body is read with read() and which goes back with release(). Raises
        NoAnswer (or a subclass) when there is no head to relay. Cancelled, it drops the
        connection: the upstream sees it close. A kept-alive connection the upstream closes before
        a byte of answer (its idle timeout racing the request) carries an idempotent request again
        on a new one, once; any other request gets the error."""
        head = _request_head(origin, method, target, headers, body)
        connection = self._take(origin.key)
        if connection is not None:
            try:
                return await self._exchange(connection, head, body, method)
            except Unanswered:
                # The upstream closed the kept-alive connection as the request went out, before a byte
                # of answer: a request that may be sent twice goes again, on a new connection.
                if method not in IDEMPOTENT:
                    raise
        return await self._exchange(await self._connect(origin), head, body, method)

    async def _exchange(self, connection: Connection, head: bytes, body: bytes | None, method: str) -> Connection:
        connection.send(head, body, method == "HEAD")
        try:
            await connection.head()
        except BaseException:
            connection.close()
            raise
        return connection

    def _take(self, key: tuple[str, str, int]) -> Connection | None:
        idle = self._idle.get(key)
        while idle:
            connection = idle.pop()  # the most recent: the least likely to have been closed
            if connection.reusable():
                return connection
            connection.close()
        return None

    async def _connect(self, origin: Origin) -> Connection:
        loop = asyncio.get_running_loop()
        tls = None
        if origin.scheme == "https":
            if self._tls is None:
                self._tls = ssl.create_default_context()
            tls = self._tls
        try:
            async with asyncio.timeout(self.connect_timeout):
                _, connection = await loop.create_connection(
                    lambda: Connection(self, origin.key), origin.host, origin.port, ssl=tls,
                    server_hostname=origin.host if tls is not None else None)
        except TimeoutError:
            raise ConnectTimeout(f"{self.connect_timeout:g} s") from None
        except ssl.SSLCertVerificationError as exc:
            raise Unreachable(exc) from None
        except ssl.SSLError as exc:
            raise NoAnswer(f"TLS handshake failed: {exc.reason or exc}") from None
        except OSError as exc:
            raise Unreachable(exc) from None
        return connection

    def keep(self, connection: Connection) -> None:
        """`connection` answered in full and may carry the next request to its origin."""
        self._idle.setdefault(connection.key, []).append(connection)
        connection.idle_since = time.monotonic()
        if self._sweep is None:
            self._sweep = asyncio.get_running_loop().call_later(KEEPALIVE, self._close_stale)

    def _close_stale(self) -> None:
        self._sweep = None
        stale = time.monotonic() - KEEPALIVE
        for idle in self._idle.values():
            kept = [connection for connection in idle if connection.idle_since > stale]
            for connection in idle:
                if connection.idle_since <= stale:
                    connection.close()
            idle[:] = kept
        if any(self._idle.values()):
            self._sweep = asyncio.get_running_loop().call_later(KEEPALIVE, self._close_stale)

    def forget(self, connection: Connection) -> None:
        self._open.discard(connection)
        idle = self._idle.get(connection.key)
        if idle and connection in idle:
            idle.remove(connection)

    def close(self) -> None:
        """Close every connection, busy or idle."""
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None
        for connection in list(self._open):
            connection.close()
        self._idle.clear()


class Connection(asyncio.Protocol):
    """One connection to an upstream and the response it is reading. The parser's callbacks
    (on_*) run inside data_received."""

    __slots__ = ("pool", "key", "idle_since", "status", "raw_headers", "_transport", "_parser", "_head_size",
                 "_waiter", "_chunks", "_buffered", "_paused", "_headed", "_complete", "_informational", "_head_only",
                 "_until_close", "_keep", "_error", "_lost", "_received")

    def __init__(self, pool: Pool, key: tuple[str, str, int]) -> None:
        self.pool = pool
        self.key = key
        self.idle_since = 0.0
        self.status = 0
        self.raw_headers: list[tuple[bytes, bytes]] = []
        self._transport: asyncio.Transport | None = None
        self._parser = httptools.HttpResponseParser(self)
        self._waiter: asyncio.Future | None = None
        self._chunks: list[bytes] = []
        self._buffered = 0
        self._paused = False
        self._headed = False  # the head of the current response came
        self._complete = True  # no response is being read
        self._informational = False
        self._head_only = False
        self._until_close = False
        self._keep = False  # the upstream keeps the connection open after this response
        self._error: Exception | None = None
        self._lost = False
        self._head_size = 0  # bytes of the headers parsed so far
        self._received = 0  # bytes read before the head was complete

    # -- asyncio.Protocol ----------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)  # uvloop's is one, without the subclassing
        self.pool._open.add(self)
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data: bytes) -> None:
        if self._complete:  # bytes nobody asked for (past a HEAD answer's head, or between requests)
            self._spoil()
            return
        if not self._headed:
            self._received += len(data)
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(NoAnswer("the upstream switched protocols (101) on an HTTP request"))
        except httptools.HttpParserError as exc:
            if self._head_size > MAX_HEAD:  # on_header stopped the parser
                self._fail(NoAnswer(f"response head larger than {MAX_HEAD} bytes"))
            elif not self._headed:
                self._fail(NoAnswer(f"malformed response head: {exc}"))
            else:
                self._fail(BodyBroken(f"malformed response body: {exc}"))
        else:
            if not self._headed and self._received > MAX_HEAD:  # a head not ended yet
                self._fail(NoAnswer(f"response head larger than {MAX_HEAD} bytes"))

    def eof_received(self) -> bool:
        return False  # close the transport: connection_lost says what that means

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = True
        self.pool.forget(self)
        if self._complete:
            return
        if self._headed and self._until_close and exc is None:
            self._end()  # a body without a length ends where the connection does
        elif self._headed:
            self._fail(BodyBroken("the response body was cut short"))
        else:
            self._fail(Unanswered("the upstream closed the connection") if not self._received
                       else NoAnswer("the upstream closed the connection"))

    def pause_writing(self) -> None:
        pass  # a request's body is in memory whole: the transport buffers what the upstream has not read

    def resume_writing(self) -> None:
        pass

    # -- httptools callbacks ---------------------------------------------------------------------

    # Once the response is complete, the parser goes on with what follows in the same read: a
    # second answer to one request, which spoils the connection and changes nothing.

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._complete:
            self._spoil()
            return
        self._head_size += len(name) + len(value) + 4
        if self._head_size > MAX_HEAD:  # a head whole in one read: refused here, before it is relayed
            raise ValueError("response head too large")
        self.raw_headers.append((name, value))

    def on_headers_complete(self) -> None:
        if self._complete:
            self._spoil()
            return
        status = self._parser.get_status_code()
        if 100 <= status < 200:  # an interim answer, the real one follows (101 and its upgrade fail in feed_data)
            self._informational = True
            self.raw_headers = []
            return
        self.status = status
        self._headed = True
        self._until_close = _until_close(status, self.raw_headers)
        self._wake()
        if self._head_only:
            self._end()

    def on_body(self, body: bytes) -> None:
        if self._complete:  # a HEAD answer's body, which it should not have sent, or a stray answer's
            self._spoil()
            return
        self._chunks.append(body)
        self._buffered += len(body)
        if self._buffered > HIGH_WATER and not self._paused and self._transport is not None:
            self._paused = True
            self._transport.pause_reading()
        self._wake()

    def on_message_complete(self) -> None:
        if self._informational:
            self._informational = False
            return
        if not self._complete:
            self._keep = self._parser.should_keep_alive()  # llhttp forgets it once the next message begins
            self._end()

    # -- the request's side ----------------------------------------------------------------------

    def send(self, head: bytes, body: bytes | None, head_only: bool) -> None:
        transport = self._transport
        assert transport is not None and self._complete
        self.status = 0
        self.raw_headers = []
        self._head_size = self._received = 0
        self._headed = self._informational = self._until_close = False
        self._complete = self._keep = False
        self._head_only = head_only
        if body and len(body) < 65536:
            transport.write(head + body)  # one segment, no copy worth avoiding
        else:
            transport.write(head)
            if body:
                transport.write(body)

    async def head(self) -> None:
        """Wait for the response head (raises NoAnswer when none comes)."""
        while not self._headed:
            if self._error is not None:
                raise self._error
            await self._wait()

    async def read(self) -> bytes:
        """The body bytes that came since the last read, b"" at its end. Raises BodyBroken."""
        while True:
            chunks = self._chunks
            if chunks:
                data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
                self._chunks = []
                self._buffered = 0
                if self._paused and self._transport is not None:
                    self._paused = False
                    self._transport.resume_reading()
                return data
            if self._error is not None:
                raise self._error
            if self._complete:
                return b""
            await self._wait()

    def release(self) -> None:
        """The exchange is over: back to the pool if the response was read whole and the upstream
        keeps the connection open, else closed."""
        if self._complete and self._keep and self._error is None and not self._lost and not self._chunks:
            self.pool.keep(self)
        else:
            self.close()

    def reusable(self) -> bool:
        return not self._lost and self._transport is not None and not self._transport.is_closing()

    def close(self) -> None:
        """Drop the connection (the upstream sees it close); a read waiting is told the body broke."""
        self._spoil()
        if not self._complete:
            self._fail(BodyBroken("the response body was cut short") if self._headed
                       else NoAnswer("the connection was closed"))

    # -- internals ---------------------------------------------------------------------------------

    async def _wait(self) -> None:
        waiter = self._waiter = asyncio.get_running_loop().create_future()
        try:
            await waiter
        finally:
            self._waiter = None

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _end(self) -> None:
        self._complete = True
        self._wake()

    def _spoil(self) -> None:
        """The connection is not used again (it carries bytes of no request's, or it failed): dropped."""
        if self._transport is not None and not self._lost:
            self._transport.abort()
        self._lost = True

    def _fail(self, error: Exception) -> None:
        if self._error is None and not self._complete:
            self._error = error
        self._complete = True
        self._wake()
        self._spoil()


def _request_head(origin: Origin, method: str, target: str, headers: Sequence[tuple[str, str]],
                  body: bytes | None) -> bytes:
    """The request line and headers: Host first, then `headers` as given, then the body's length
    (none when there is no body, as the client sent none). Raises NoAnswer for a header that
    would split the head."""
    lines = [f"{method} {target or '/'} HTTP/1.1\r\nHost: {origin.host_header}\r\n"]
    for name, value in headers:
        if _SPLITS.search(name) or _SPLITS.search(value):
            raise NoAnswer(f"request header {name!r} holds a line break or NUL; not sent")
        lines.append(f"{name}: {value}\r\n")
    if body is not None:
        lines.append(f"Content-Length: {len(body)}\r\n")
    lines.append("\r\n")
    text = "".join(lines)
    try:
        return text.encode("latin-1")  # the bytes the client sent, which the forwarder holds as latin-1
    except UnicodeEncodeError:
        return text.encode("utf-8")  # a hook wrote text beyond latin-1


def _until_close(status: int, headers: list[tuple[bytes, bytes]]) -> bool:
    """Whether this response's body ends only where the connection does (RFC 9112 6.3)."""
    if status in (204, 304):
        return False
    length = chunked = False
    for name, value in headers:
        lower = name.lower()
        if lower == b"content-length":
            length = True
        elif lower == b"transfer-encoding":
            chunked = value.rsplit(b",", 1)[-1].strip().lower() == _CHUNKED
    return not length and not chunked


def connect_reason(error: OSError) -> str:
    """Why a connection could not be made, in the flow's words."""
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, socket.gaierror):
        return f"cannot resolve host ({error.strerror})"
    if isinstance(error, ssl.SSLCertVerificationError):
        return f"its TLS certificate is not trusted ({error.verify_message})"
    return error.strerror or str(error)
