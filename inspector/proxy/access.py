"""The front door of the forwarder and the mock: who may send them requests, and which request
targets may be forwarded.

A web page can reach a loopback port through DNS rebinding (its own name, resolved to 127.0.0.1):
its requests carry that name as Host, and a browser adds Origin to them. So only loopback Host
names (and those allowed by name) get in, no request with an Origin does (no SDK sends one), nor
one a browser marks as made by another site (an <img> or form GET carries no Origin), and
a server listening beyond loopback wants its token besides. Refusals are counted, not recorded:
a page that may not use the forwarder may not write flows either."""

from __future__ import annotations

import base64
import binascii
import functools
import hmac
import re
import secrets
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import unquote

import orjson
from yarl import URL

from .server import is_loopback

TOKEN_HEADER = "x-toolwire-token"
TOKEN_PREFIX = b"/t/"  # http://host:port/t/<token>/v1 works wherever a client takes a base URL

# RFC 3986 pchar plus "/": anything else in a path is refused rather than guessed at.
_PATH = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*")
# Queries in the wild carry unencoded brackets, pipes and the like; none of that can leave the query.
_QUERY = re.compile(r"[!-\"$-~]*")  # printable ASCII but "#"
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_UNSAFE_DECODED = re.compile(r"[\x00-\x1f\x7f\\]|^//")
_DOT_SEGMENT = re.compile(r"(?:^|/)\.\.?(?:/|$)")
_NOT_A_PATH = ("is not a path; only /path?query targets are forwarded to the upstream (plain-HTTP proxying is "
               "not served: set the client's base URL to the forwarder, or HTTPS_PROXY for https:// URLs)")


def error_body(kind: str, message: str, status: int) -> bytes:
    # Shaped like the providers' own errors so SDK clients surface the message.
    return orjson.dumps({"error": {"type": kind, "message": message, "code": status}})


def target_problem(path: str, query: str) -> str | None:
    """Why `path?query` may not be sent to an upstream, or None. Only an origin-form target whose
    path stays below the upstream's base path once the upstream decodes it passes: no authority
    (`*@host`, `//host`, `http://host/`), no dot segments, backslashes or control characters, even
    percent-encoded, even twice."""
    why = None
    if not path.startswith("/") or path.startswith("//"):
        why = _NOT_A_PATH
    elif not _PATH.fullmatch(path) or (query and not _QUERY.fullmatch(query)):
        why = "holds characters a URL may not carry unencoded"
    elif "%" in path and _BAD_ESCAPE.search(path):
        why = "has a malformed percent escape"
    else:
        decoded = path
        while "%" in decoded:  # as often as it decodes: some servers decode twice
            once = unquote(decoded)
            if once == decoded:
                break
            decoded = once
        if decoded is not path and _UNSAFE_DECODED.search(decoded):
            why = "encodes a backslash, a control character or a leading //"
        elif "." in decoded and _DOT_SEGMENT.search(decoded):
            why = "has a dot segment, which would leave the upstream's base path"
    if why is None:
        return None
    return f"request target {path + (f'?{query}' if query else '')!r} {why}"


def origin(url: str) -> str | None:
    """`scheme://host[:port]` of `url` as aiohttp would reach it (no userinfo), or None."""
    try:
        return str(URL(url, encoded=True).origin())
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class Refusal:
    status: int
    kind: str
    message: str

    async def send(self, send: Callable, scope_type: str = "http") -> None:
        """Answer the request of an ASGI scope of `scope_type` ("websocket": an upgrade, refused
        with this status before any handshake)."""
        prefix = "websocket.http.response" if scope_type == "websocket" else "http.response"
        body = error_body(self.kind, self.message, self.status)
        await send({"type": f"{prefix}.start", "status": self.status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": f"{prefix}.body", "body": body, "more_body": False})


class AccessPolicy:
    """Admits a request or says why not. `refused` and `last_refusal` are written on the server's
    loop only; the CLI and the UI read them to report refusals away from that loop."""

    def __init__(self, listen_host: str, *, allow_hosts: Iterable[str] = (), allow_origins: Iterable[str] = ()) -> None:
        self.token = None if is_loopback(listen_host) else secrets.token_urlsafe(32)
        self._token = None if self.token is None else self.token.encode()
        # The listen address itself too: it is what a client (and our replay) uses to reach it.
        self._hosts = {name.strip("[]").lower() for name in (listen_host, *allow_hosts)}
        self._origins = {origin.lower().rstrip("/") for origin in allow_origins}
        self.refused = 0
        self.last_refusal: str | None = None
        # By kind (a fixed set of names), with each kind's last message: what `run`'s doctor reports.
        self.kinds: Counter[str] = Counter()
        self.reasons: dict[str, str] = {}

    @property
    def url_prefix(self) -> str:
        """What a client's base URL carries before its path: the token prefix when one is needed."""
        return "" if self.token is None else f"{TOKEN_PREFIX.decode()}{self.token}"

    def admit(self, headers: list[tuple[bytes, bytes]], raw_path: bytes) -> tuple[bytes, Refusal | None]:
        """(the path without its token prefix, None), or (raw_path, why the request is refused)."""
        hosts: list[bytes] = []
        origins: list[bytes] = []
        tokens: list[bytes] = []
        fetch_site = None
        for name, value in headers:
            name = name.lower()
            if name == b"host":
                hosts.append(value)
            elif name == b"origin":
                origins.append(value)
            elif name == b"x-toolwire-token":
                tokens.append(value)
            elif name == b"sec-fetch-site":
                fetch_site = value
        refusal = self._check_host(hosts) or self._check_origins(origins, fetch_site)
        path = raw_path
        if refusal is None and self._token is not None:
            if raw_path.startswith(TOKEN_PREFIX):
                given, slash, rest = raw_path[len(TOKEN_PREFIX):].partition(b"/")
                tokens.append(given)
                path = slash + rest or b"/"
            refusal = self._check_tokens(tokens, "the /t/<token> prefix of the base URL it printed")
        if refusal is not None:
            self.count(refusal)
            return raw_path, refusal
        return path, None

    def count(self, refusal: Refusal) -> Refusal:
        self.refused += 1
        self.last_refusal = refusal.message
        self.kinds[refusal.kind] += 1
        self.reasons[refusal.kind] = refusal.message
        return refusal

    def admit_connect(self, headers: list[tuple[bytes, bytes]]) -> Refusal | None:
        """Why a CONNECT may not open a tunnel, or None. Its Host names the target, not this server,
        and no web page can send one (fetch forbids the method, and DNS rebinding only reaches a
        server by its own name), so only the browser marks and the token are checked; the token
        may come as the password of the proxy URL (`http://any:TOKEN@host:port`)."""
        origins: list[bytes] = []
        tokens: list[bytes] = []
        fetch_site = None
        for name, value in headers:
            name = name.lower()
            if name == b"origin":
                origins.append(value)
            elif name == b"x-toolwire-token":
                tokens.append(value)
            elif name == b"sec-fetch-site":
                fetch_site = value
            elif name == b"proxy-authorization":
                scheme, _, credentials = value.partition(b" ")
                if scheme.lower() == b"basic":
                    try:
                        tokens.append(base64.b64decode(credentials.strip(), validate=True).partition(b":")[2])
                    except binascii.Error:
                        tokens.append(b"")
        refusal = self._check_origins(origins, fetch_site)
        if refusal is None and self._token is not None:
            refusal = self._check_tokens(tokens, "the password of the proxy URL (http://token:TOKEN@host:port)")
        return None if refusal is None else self.count(refusal)

    def admit_intercepted(self, headers: list[tuple[bytes, bytes]], host: str, port: int) -> Refusal | None:
        """Why a request inside an intercepted tunnel may not go on, or None. The tunnel was admitted
        as a whole; its requests must name the host it was opened for, which is where they go."""
        hosts = [value for name, value in headers if name.lower() == b"host"]
        if len(hosts) != 1:
            return self.count(Refusal(421, "toolwire_host_not_allowed",
                                      f"refused: a request needs exactly one Host header (it has {len(hosts)})"))
        value = hosts[0].decode("latin-1")
        name = _host_name(value)
        given_port = value.rpartition(":")[2] if name is not None and not value.endswith("]") and ":" in value else None
        if name == host and (given_port is None or int(given_port) == port):
            return None
        return self.count(Refusal(421, "toolwire_host_not_allowed",
                                  f"refused: Host {value!r} is not the host this tunnel was opened for "
                                  f"({host}:{port})"))

    def _check_tokens(self, tokens: list[bytes], where: str) -> Refusal | None:
        assert self._token is not None
        if not tokens:
            return Refusal(403, "toolwire_token_required",
                           "refused: this server listens beyond loopback and needs its access token, as "
                           f"the {TOKEN_HEADER} header or as {where}")
        if not all(hmac.compare_digest(given, self._token) for given in tokens):
            return Refusal(403, "toolwire_wrong_token", "refused: wrong access token")
        return None

    def _check_host(self, hosts: list[bytes]) -> Refusal | None:
        if len(hosts) != 1:
            return Refusal(421, "toolwire_host_not_allowed",
                           f"refused: a request needs exactly one Host header (it has {len(hosts)})")
        name = _host_name(hosts[0].decode("latin-1"))
        if name is not None and (name in self._hosts or _loopback_name(name)):
            return None
        shown = hosts[0].decode("latin-1") if name is None else name
        return Refusal(421, "toolwire_host_not_allowed",
                       f"refused: Host {shown!r} is not allowed (a web page reaching this port through DNS "
                       "rebinding sends its own name); only loopback names and those given with "
                       "--allow-host NAME are answered")

    def _check_origins(self, origins: list[bytes], fetch_site: bytes | None) -> Refusal | None:
        if not origins and fetch_site in (b"cross-site", b"same-site"):
            # A page's <img>, <script> or form GET carries no Origin; its browser still says who asked.
            return Refusal(403, "toolwire_origin_not_allowed",
                           f"refused: requests from web pages (Sec-Fetch-Site: {fetch_site.decode('latin-1')}, "
                           "no Origin) are not answered")
        for raw in origins:
            origin = raw.decode("latin-1")
            if origin.lower().rstrip("/") not in self._origins:
                return Refusal(403, "toolwire_origin_not_allowed",
                               f"refused: requests from web pages (Origin {origin!r}) are not answered; "
                               f"pass --allow-origin {origin} to allow that page")
        return None


@functools.lru_cache(maxsize=64)
def _loopback_name(name: str) -> bool:
    return is_loopback(name)  # parsing an address per request would cost more than the rest of the check


def _host_name(value: str) -> str | None:
    """The lower-cased name of a Host header value (`name`, `name:port`, `[v6]:port`), or None."""
    if value.startswith("["):
        name, bracket, port = value[1:].partition("]")
        if not bracket or (port and not port.startswith(":")):
            return None
        port = port[1:]
    else:
        name, _, port = value.partition(":")
    if not name or (port and not (port.isascii() and port.isdigit())):
        return None
    return name.lower()
