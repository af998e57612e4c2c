"""Proxy mode: the forwarder answers CONNECT, for clients that take no base URL but honour
HTTPS_PROXY. A tunnel to a host on the intercept list (the LLM providers, plus `--intercept HOST`)
is terminated with a certificate for that host from the local CA (ca.py); its requests are then
served by the forwarder's own app like any other, the upstream being `https://HOST` (or the URL
given with `--intercept HOST=URL`). A tunnel to any other host is relayed untouched and
unrecorded, with the flow control of the transports bounding what it holds.

Who may open a tunnel (access.py's admit_connect): web pages cannot send CONNECT at all, so the
risk is a local process, or a remote one when the forwarder listens beyond loopback, using it to
reach what it could not reach itself. A tunnel to a loopback, private, link-local or otherwise
non-global address is refused unless its host is allowed by name (`--allow-connect HOST`): the
address checked is the one connected to, so a name that resolves to 127.0.0.1 is caught too.

What a tunnel may hold: at most `max_tunnels` are open at once (relayed, intercepted, or still
being set up), so a process opening tunnels without end gets a 503 instead of spending the
descriptors every other client needs; a relayed tunnel through which no byte has moved either
way for `idle_timeout` seconds is closed. An intercepted tunnel is an HTTP connection of the
forwarder's once TLS ends, so the server's own client limits (server.ClientLimits) bound its idling."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from yarl import URL

from ..redact import redact_url
from ..wire.dialects import homes
from .access import AccessPolicy, Refusal, error_body
from .ca import CAError, LocalCA
from .options import DEFAULT_MAX_TUNNELS, DEFAULT_TUNNEL_IDLE

# The hosts of the known LLM APIs, from the providers' records (dialects/<name>/providers.py); "*."
# matches any subdomain (Azure names one per resource). The providers' own hosts come first, then
# those of other servers speaking their dialects.
DEFAULT_INTERCEPTS = tuple(dict.fromkeys(host for p in sorted((p for each in homes() for p in each.providers),
                                                              key=lambda p: not p.host) for host in p.intercepts))

_ESTABLISHED = b"HTTP/1.1 200 Connection established\r\n\r\n"
_TUNNEL_CONNECT_TIMEOUT = 30.0
# Distinct tunnel targets counted by name; a process opening tunnels to ever new hosts costs no more.
_TARGETS_KEPT = 256


class InterceptError(Exception):
    """An --intercept or --allow-connect value that cannot be used."""


@dataclass(frozen=True, slots=True)
class Interception:
    """One intercepted tunnel, as the forwarder's app sees it in the request scope: the host the
    client asked for, and the upstream its requests go to."""

    host: str
    port: int
    scheme: str
    authority: str
    base_path: str
    shown: str  # the upstream as it may be printed or stored


@dataclass(frozen=True, slots=True)
class _Rule:
    # A host name, "*.suffix" / "*-suffix" for any name ending so, or a "*" label inside a name
    # ("bedrock-runtime.*.amazonaws.com", a provider's records): one label, any region.
    pattern: str
    upstream: URL | None  # None: https://HOST:PORT as the client asked

    def matches(self, host: str) -> bool:
        if self.pattern.startswith("*"):
            suffix = self.pattern[1:]
            return host.endswith(suffix) and len(host) > len(suffix)
        if "*" in self.pattern:
            labels, wanted = host.split("."), self.pattern.split(".")
            return len(labels) == len(wanted) and all(w == label or (w == "*" and label)
                                                      for w, label in zip(wanted, labels, strict=True))
        return host == self.pattern


class InterceptList:
    """Which CONNECT targets are terminated and recorded, and where their requests go."""

    def __init__(self, specs: Iterable[str] = ()) -> None:
        # The given ones first: they may send a default host's requests elsewhere.
        self._rules = tuple([_parse_rule(spec) for spec in specs] + [_Rule(host, None) for host in DEFAULT_INTERCEPTS])

    @property
    def hosts(self) -> list[str]:
        """The host patterns intercepted, the given ones first (their upstream URLs left out)."""
        return [rule.pattern for rule in self._rules]

    def match(self, host: str, port: int) -> Interception | None:
        for rule in self._rules:
            if rule.matches(host):
                if rule.upstream is None:
                    authority = host if port == 443 else f"{host}:{port}"
                    if ":" in host:
                        authority = f"[{host}]" + ("" if port == 443 else f":{port}")
                    return Interception(host, port, "https", authority, "", f"https://{authority}")
                url = rule.upstream
                return Interception(host, port, url.scheme, url.raw_authority, url.raw_path.rstrip("/"),
                                    redact_url(str(url)).rstrip("/"))
        return None


def _parse_rule(spec: str) -> _Rule:
    pattern, equals, target = spec.partition("=")
    pattern = pattern.strip().lower()
    bare = pattern[2:] if pattern.startswith("*.") else pattern[1:] if pattern.startswith("*-") else pattern
    if not bare or not all(part and part.replace("-", "").isalnum() for part in bare.split(".")):
        raise InterceptError(f"--intercept {spec!r}: expected a host name such as api.example.com or "
                             "*.example.com, optionally =URL of the upstream to send its requests to")
    if not equals:
        return _Rule(pattern, None)
    try:
        url = URL(target.strip(), encoded=True)
        valid = url.scheme in ("http", "https") and bool(url.raw_host) and url.port is not None
    except ValueError:
        valid = False
    if not valid or url.user is not None or url.password is not None or url.raw_query_string or url.raw_fragment:
        raise InterceptError(f"--intercept {spec!r}: the upstream after '=' must be an http(s) base URL without "
                             "credentials, query or fragment, such as https://127.0.0.1:9443")
    return _Rule(pattern, url)


def _authority(target: bytes) -> tuple[str, int] | None:
    """(host, port) of a CONNECT target `host:port` / `[v6]:port`, or None."""
    text = target.decode("latin-1").lower()
    if text.startswith("["):
        host, bracket, port = text[1:].partition("]")
        if not bracket or not port.startswith(":"):
            return None
        port = port[1:]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return None
    else:
        host, colon, port = text.rpartition(":")
        if not colon or not host or not all(part and part.replace("-", "").replace("_", "").isalnum()
                                            for part in host.split(".")):
            return None
    if not (port.isascii() and port.isdigit()) or not 0 < int(port) < 65536:
        return None
    return host, int(port)


# IPv6 prefixes whose last 32 bits are an IPv4 address that a packet to them reaches: IPv4-mapped,
# IPv4-translated (RFC 2765), IPv4-compatible (deprecated) and the well-known NAT64 prefix (RFC 6052).
_LAST_32_IS_IPV4 = tuple(ipaddress.IPv6Network(net) for net in ("::ffff:0:0/96", "::ffff:0:0:0/96", "::/96",
                                                                   "64:ff9b::/96"))
# Never public, whatever they embed: Teredo (2001::/32), where the relay decides where a packet goes,
# and local-use NAT64 (RFC 8215), whose IPv4 sits where the local operator's prefix length puts it.
_NEVER_PUBLIC = tuple(ipaddress.IPv6Network(net) for net in ("2001::/32", "64:ff9b:1::/48"))


def public_address(address: str) -> bool:
    """Whether a tunnel to `address` leaves the machine's own networks. An IPv6 address that
    carries an IPv4 one is as public as the IPv4 address it leads to."""
    ip = ipaddress.ip_address(address.partition("%")[0])
    if isinstance(ip, ipaddress.IPv4Address):
        return ip.is_global
    if any(ip in net for net in _NEVER_PUBLIC):
        return False
    if any(ip in net for net in _LAST_32_IS_IPV4):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF).is_global
    if ip.sixtofour is not None:
        return ip.sixtofour.is_global
    return ip.is_global


class ConnectHandler:
    """Serves CONNECT requests on the forwarder's loop. `take` is called by the server protocol
    (server.py) with the connection, which is this handler's from then on."""

    def __init__(self, access: AccessPolicy, intercepts: InterceptList, *, ca_dir: Path | str | None = None,
                 allow_connect: Iterable[str] = (), handshake_timeout: float = 10.0,
                 max_tunnels: int = DEFAULT_MAX_TUNNELS, idle_timeout: float = DEFAULT_TUNNEL_IDLE) -> None:
        self.access = access
        self.intercepts = intercepts
        self.allow_connect = {host.strip("[]").lower() for host in allow_connect}
        self.handshake_timeout = handshake_timeout
        self.max_tunnels = max_tunnels
        self.idle_timeout = idle_timeout
        self.tunnelled = 0  # tunnels relayed untouched and unrecorded: the UI's header says so
        # host:port of each, for `run`'s doctor: traffic that reached the proxy but was not recorded.
        self.tunnelled_to: Counter[str] = Counter()
        self._ca_dir = ca_dir
        self._ca: LocalCA | None = None
        self._ca_lock = threading.Lock()
        self._tasks: set[asyncio.Task] = set()  # CONNECTs being answered
        self._tunnels: set[_Tunnel] = set()  # relayed
        self._intercepted = 0  # intercepted tunnels whose HTTP connection is open

    def tunnelled_hosts(self) -> tuple[tuple[str, int], ...]:
        """(host:port, tunnels) of each target relayed unrecorded, the most tunnelled first: a copy,
        taken off the loop (the child's outbox, the header) while the loop counts on."""
        return tuple(sorted(self.tunnelled_to.copy().items(), key=lambda item: (-item[1], item[0])))

    @property
    def open_tunnels(self) -> int:
        """Tunnels open or being set up, of every kind."""
        return len(self._tasks) + len(self._tunnels) + self._intercepted

    def released(self) -> None:
        """An intercepted tunnel's HTTP connection is lost (called by the server protocol)."""
        self._intercepted -= 1

    def take(self, transport: asyncio.Transport, target: bytes, headers: list[tuple[bytes, bytes]], rest: bytes,
             serve: Callable[[Interception], asyncio.Protocol]) -> None:
        """`rest`: what the client sent after the CONNECT head; `serve`: a fresh HTTP protocol for
        the requests of an intercepted tunnel."""
        transport.pause_reading()  # nothing is read until the connection has its next protocol
        task = asyncio.get_running_loop().create_task(self._serve(transport, target, headers, rest, serve))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        """Cut every tunnel and pending CONNECT: the forwarder stops."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for tunnel in list(self._tunnels):
            tunnel.abort()

    async def _serve(self, transport: asyncio.Transport, target: bytes, headers: list[tuple[bytes, bytes]],
                     rest: bytes, serve: Callable[[Interception], asyncio.Protocol]) -> None:
        try:
            refusal = self.access.admit_connect(headers)  # first: a client without the token learns nothing
            if refusal is not None:
                _refuse(transport, refusal)
                return
            authority = _authority(target)
            if authority is None:
                shown = target.decode("latin-1")
                _refuse(transport, self.access.count(Refusal(
                    400, "toolwire_bad_target", f"refused: CONNECT target {shown!r} is not host:port")))
                return
            if self.open_tunnels - 1 >= self.max_tunnels:  # this CONNECT's own task aside
                _refuse(transport, self.access.count(Refusal(
                    503, "toolwire_too_many_tunnels",
                    f"refused: {self.open_tunnels - 1} tunnels are open, as many as --max-tunnels allows")))
                return
            host, port = authority
            interception = self.intercepts.match(host, port)
            if interception is None:
                await self._tunnel(transport, host, port, rest)
            else:
                await self._intercept(transport, interception, rest, serve)
        except asyncio.CancelledError:
            transport.abort()
            raise

    # -- intercepted: TLS ends here, the forwarder's app serves the requests --------------------

    async def _intercept(self, transport: asyncio.Transport, interception: Interception, rest: bytes,
                         serve: Callable[[Interception], asyncio.Protocol]) -> None:
        host = interception.host
        if rest:  # a TLS client waits for the 200 before its first byte
            _refuse(transport, self.access.count(Refusal(
                400, "toolwire_bad_request", f"refused: the client sent bytes after CONNECT {host} before the "
                                             "tunnel was open")))
            return
        try:
            context = await asyncio.to_thread(self._server_context, host)  # disk and signing: off the loop
        except CAError as exc:
            _refuse(transport, self.access.count(Refusal(502, "toolwire_ca_error", f"cannot intercept {host}: {exc}")))
            return
        transport.write(_ESTABLISHED)
        early = _Early()
        loop = asyncio.get_running_loop()
        try:
            tls = await loop.start_tls(transport, early, context, server_side=True,
                                       ssl_handshake_timeout=self.handshake_timeout)
        except (OSError, TimeoutError, ssl.SSLError) as exc:
            transport.abort()
            self.access.count(Refusal(  # counted and shown; no answer can reach a client that refused TLS
                403, "toolwire_tls_refused",
                f"TLS with a client for {host} failed ({_tls_reason(exc)}): a client that does not trust the "
                "proxy CA refuses its certificate; `toolwire-inspect ca` says how to trust it"))
            return
        if tls is None or early.lost:
            return
        protocol = serve(interception)
        tls.set_protocol(protocol)
        self._intercepted += 1  # until the protocol's connection_lost calls released()
        protocol.connection_made(tls)  # type: ignore[arg-type]
        if early.data:
            protocol.data_received(b"".join(early.data))
        if early.eof:
            protocol.eof_received()

    def _server_context(self, host: str) -> ssl.SSLContext:
        return self._local_ca().server_context(host)

    def client_context(self) -> ssl.SSLContext:
        """A client's TLS context that trusts this handler's CA, and only it: for a replay sent
        through an intercepted tunnel (replay.py). A CAError when the CA cannot be made or read."""
        return ssl.create_default_context(cafile=str(self._local_ca().cert_path))

    def _local_ca(self) -> LocalCA:
        with self._ca_lock:  # the CA is made once, on the first intercepted tunnel
            if self._ca is None:
                self._ca = LocalCA(self._ca_dir, self.intercepts.hosts)
            return self._ca

    # -- tunnelled: bytes both ways, untouched ---------------------------------------------------

    async def _tunnel(self, transport: asyncio.Transport, host: str, port: int, rest: bytes) -> None:
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError) as exc:
            _refuse(transport, self.access.count(Refusal(
                502, "toolwire_upstream_unreachable", f"CONNECT {host}:{port}: cannot resolve host ({exc})")))
            return
        if host not in self.allow_connect:
            infos = [info for info in infos if public_address(info[4][0])]
            if not infos:
                _refuse(transport, self.access.count(Refusal(
                    403, "toolwire_connect_not_allowed",
                    f"refused: CONNECT {host}:{port} leads to a loopback or private address; pass "
                    f"--allow-connect {host} to tunnel there")))
                return
        tunnel = _Tunnel(self._tunnels, self.idle_timeout)
        client, upstream = tunnel.client, tunnel.upstream
        why = ""
        for family, _, proto, _, address in infos:  # in the resolver's order, as a client would
            try:
                async with asyncio.timeout(_TUNNEL_CONNECT_TIMEOUT):
                    # The address checked above is the one connected to: no second lookup to rebind.
                    await loop.create_connection(lambda: upstream, address[0], address[1], family=family,
                                                 proto=proto)
                break
            except (OSError, TimeoutError) as exc:
                why = "timed out" if isinstance(exc, TimeoutError) else exc.strerror or str(exc)
        else:
            _refuse(transport, self.access.count(Refusal(
                502, "toolwire_upstream_unreachable", f"CONNECT {host}:{port}: {why}")))
            return
        if transport.is_closing():
            upstream.transport.close()
            return
        transport.write(_ESTABLISHED + b"".join(upstream.held))
        upstream.held.clear()
        transport.set_protocol(client)
        client.connection_made(transport)
        tunnel.open()
        if rest:
            upstream.transport.write(rest)
        self.tunnelled += 1
        target = f"{host}:{port}"
        if target in self.tunnelled_to or len(self.tunnelled_to) < _TARGETS_KEPT:
            self.tunnelled_to[target] += 1
        if upstream.ended:  # the far side said all it had to say before the join
            transport.close()
            return
        transport.resume_reading()
        upstream.transport.resume_reading()


class _Tunnel:
    """A relayed tunnel: its two ends, in `registry` from joining until both are lost, and the
    timer that closes it once no byte has moved either way for `idle` seconds (one timer, moved
    only when it fires; each read writes one field). Closing waits for what is buffered to be
    written; a side still open a further `idle` seconds later (its reader stalled) is aborted."""

    __slots__ = ("client", "upstream", "last", "idle", "_registry", "_handle", "_closing", "_time")

    def __init__(self, registry: set[_Tunnel], idle: float) -> None:
        self.client = _Pipe(self)
        self.upstream = _Pipe(self)
        self.client.peer, self.upstream.peer = self.upstream, self.client
        self.idle = idle
        self._registry = registry
        self._handle: asyncio.TimerHandle | None = None
        self._closing = False
        self._time = asyncio.get_running_loop().time
        self.last = self._time()

    def open(self) -> None:
        """Both ends are joined."""
        self._registry.add(self)
        self.last = self._time()
        self._handle = asyncio.get_running_loop().call_later(self.idle, self._check)

    def moved(self) -> None:
        self.last = self._time()

    def lost(self) -> None:
        if self.client.lost and self.upstream.lost:
            self._registry.discard(self)
            if self._handle is not None:
                self._handle.cancel()
                self._handle = None

    def abort(self) -> None:
        for pipe in (self.client, self.upstream):
            if pipe.transport is not None:
                pipe.transport.abort()

    def _check(self) -> None:
        now = self._time()
        if now - self.last < self.idle:
            self._handle = asyncio.get_running_loop().call_later(self.last + self.idle - now, self._check)
            return
        if self._closing:
            self.abort()
            self._handle = None
            return
        self._closing = True
        for pipe in (self.client, self.upstream):
            pipe.transport.close()
        self.last = now
        self._handle = asyncio.get_running_loop().call_later(self.idle, self._check)


class _Pipe(asyncio.Protocol):
    """One side of a tunnel: what it reads goes to its peer. A peer's full write buffer pauses
    this side's reading (so a tunnel holds at most the transports' high-water marks), and either
    side closing closes the other once its buffer is written."""

    def __init__(self, tunnel: _Tunnel) -> None:
        self.tunnel = tunnel
        self.peer: _Pipe | None = None
        self.transport: asyncio.Transport = None  # type: ignore[assignment]
        self.lost = False
        self.ended = False  # sent its EOF or was lost
        self.held: list[bytes] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        transport.pause_reading()  # type: ignore[attr-defined]  # until both ends are joined

    def data_received(self, data: bytes) -> None:
        assert self.peer is not None
        self.tunnel.moved()
        if self.peer.transport is None:
            # The far side spoke first, before the client's end is joined (the event loop may
            # start reading before connection_made's pause takes effect): held until joined.
            self.held.append(data)
            self.transport.pause_reading()
            return
        self.peer.transport.write(data)

    def eof_received(self) -> None:
        assert self.peer is not None
        if self.peer.transport is None:
            self.ended = True  # before the join: the client's end is closed once joined
            return
        self.peer.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = self.ended = True
        peer = self.peer
        if peer is not None and peer.transport is not None:
            if exc is None:
                peer.transport.close()
            else:
                peer.transport.abort()
        self.tunnel.lost()

    def pause_writing(self) -> None:
        assert self.peer is not None
        self.peer.transport.pause_reading()

    def resume_writing(self) -> None:
        assert self.peer is not None
        self.tunnel.moved()  # a slow reader drained its buffer: bytes moved
        self.peer.transport.resume_reading()


class _Early(asyncio.Protocol):
    """Holds what arrives between the end of the TLS handshake and the HTTP protocol taking over
    (a TLS 1.3 client's first request may come in the same packet as its Finished)."""

    def __init__(self) -> None:
        self.data: list[bytes] = []
        self.eof = False
        self.lost = False

    def data_received(self, data: bytes) -> None:
        self.data.append(data)

    def eof_received(self) -> bool:
        self.eof = True
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True


def _tls_reason(exc: BaseException) -> str:
    if isinstance(exc, ssl.SSLError):
        return exc.reason or str(exc)
    if isinstance(exc, TimeoutError):
        return "handshake timed out"
    return f"{type(exc).__name__}: {exc}"


_REFUSED_HEAD = b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: %d\r\n\r\n"
_REASONS = {400: b"Bad Request", 403: b"Forbidden", 502: b"Bad Gateway", 503: b"Service Unavailable"}


def _refuse(transport: asyncio.Transport, refusal: Refusal) -> None:
    body = error_body(refusal.kind, refusal.message, refusal.status)
    transport.write(_REFUSED_HEAD % (refusal.status, _REASONS[refusal.status], len(body)) + body)
    transport.close()
