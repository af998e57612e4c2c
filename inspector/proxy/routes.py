"""Several upstreams through one forwarder: the route table and the dispatcher in front of it.

A route is a name, an upstream base URL, a mode, and where clients reach it: below
`/r/NAME/` of the shared port, or at `/` of a port of its own (`NAME=URL@PORT`, for clients that
cannot take a path prefix). Each route is served by a Forwarder of its own (its upstream, mode and
connection pool); all share one store and one access policy. The Router is the small ASGI app
in front of the shared port: it admits a request once (Host, Origin, token), takes the route's
prefix off, and hands the rest to that route's Forwarder, which checks the target below its
upstream's base path like any other.

Routes come from, in order of precedence: `--route`/`--route-mode` flags, a TOML config file
(`--config PATH`, else `toolwire-inspect.toml` in the working directory once trusted, else in the
user config dir), and, when neither these nor `--upstream` name any, the defaults: OpenAI,
Anthropic and Gemini each under its own prefix. A config found in the working directory decides
where the user's keys go, and a cloned repository can ship one: it is ignored, with a notice
naming it and the command that trusts it, until `toolwire-inspect config trust` has recorded its
path and content (inspector/trust.py). The file in the user config dir is the user's own; it may
be a symlink (dotfile managers make them), but what it points to must be a regular file of the
user's that nobody else may write, else it is refused. Each route keeps where it came from.
`--upstream URL` is the unnamed route at `/`: alone, it is a plain Forwarder exactly as before;
with routes beside it, it gets every path no route claims.

    # toolwire-inspect.toml
    [routes.openai]
    url = "https://api.openai.com"
    [routes.claude]
    url = "https://api.anthropic.com"
    mode = "repair"                              # passthrough (default), repair, translate:SRC:DST,
                                                 # repair+translate:SRC:DST
    [routes.tools]
    url = "http://127.0.0.1:3000"
    port = 8790                                  # its own port, serving at /
"""

from __future__ import annotations

import re
import time
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit


from .. import config_file
from ..config_file import CONFIG_NAME, user_config  # noqa: F401  (cli/config.py and the tests name them here)
from ..redact import redact_url
from ..session import session_upstream
from ..store import Store
from ..wire.dialects import homes
from .access import AccessPolicy
from .connect import ConnectHandler
from .forwarder import FlowEvent, Forwarder, ForwarderError, shorten_switch_interval
from .options import ClientLimits, Options, ProxyOptions
from .server import INTERCEPT_EXTENSION, ListenError, Served, ServerThread, request_target

ROUTE_PREFIX = b"/r/"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_MODES = "passthrough, repair, translate:SRC:DST or repair+translate:SRC:DST"
# Where a route came from (Route.source), besides `config PATH`.
FROM_FLAG, FROM_DEFAULTS, FROM_UPSTREAM = "--route", "defaults", "--upstream"


class RouteError(ForwarderError):
    """The routes cannot be set up as given (a bad flag, a broken config file); one line."""


@dataclass(frozen=True, slots=True)
class Route:
    name: str
    upstream: str
    port: int | None = None  # a port of its own; None: below /r/NAME/ of the shared port
    translate: str | None = None
    repair: bool = False
    # What set it: `--route`, `config PATH` or `defaults` (shown by `record` and the TUI's header).
    source: str = field(default=FROM_FLAG, compare=False)

    @property
    def mode(self) -> str:
        if self.translate:
            return f"{'repair+' if self.repair else ''}translate:{self.translate}"
        return "repair" if self.repair else "passthrough"


def _default_routes() -> tuple[Route, ...]:
    """One route per provider with an upstream of its own (dialects/<name>/providers.py)."""
    providers = {p.name: p for each in homes() for p in each.providers if p.route}
    return tuple(Route(p.name, p.route, source=FROM_DEFAULTS) for p in providers.values())


DEFAULT_ROUTES = _default_routes()


@dataclass(frozen=True, slots=True)
class RouteTable:
    routes: tuple[Route, ...]
    upstream: str | None = None  # --upstream: the unnamed route at `/`
    source: str = "flags"  # where the routes came from, for the first line `record` prints
    # A config file found and not applied, each a line saying which and how to trust it.
    ignored: tuple[str, ...] = ()


def parse_route(text: str) -> Route:
    """`NAME=URL` or `NAME=URL@PORT` (the URL's own userinfo may hold an @: only digits after the
    last one make a port)."""
    name, equals, url = text.partition("=")
    if not equals or not url:
        raise RouteError(f"--route {text!r}: expected NAME=URL or NAME=URL@PORT")
    port = None
    head, at, tail = url.rpartition("@")
    if at and tail.isdecimal():
        url, port = head, _port(tail, f"--route {name}")
    return _route(name, url, port, f"--route {name}")


def parse_mode(text: str, where: str) -> tuple[str | None, bool]:
    """(translate, repair) of a route mode: `passthrough`, `repair`, `translate:SRC:DST` or both,
    `repair+translate:SRC:DST` (repaired in the client's dialect, then translated)."""
    if text == "passthrough":
        return None, False
    if text == "repair":
        return None, True
    repair, plus, rest = text.partition("+")
    if plus and repair == "repair":
        translate, _ = parse_mode(rest, where)
        if translate is not None:
            return translate, True
    kind, colon, spec = text.partition(":")
    if kind == "translate" and colon and spec:
        return spec, False
    raise RouteError(f"{where}: mode {text!r} is not one of {_MODES}")


def read_config(path: Path) -> bytes:
    """The bytes of a config file (config_file.read_config), or a RouteError."""
    try:
        return config_file.read_config(path)
    except config_file.ConfigError as exc:
        raise RouteError(str(exc)) from None


def load_config(path: Path, data: bytes) -> list[Route]:
    """The routes of the config file at `path`, `data` its bytes (read_config), or a RouteError
    naming the file and what is wrong with it."""
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RouteError(f"config {path} is not valid TOML: {exc}") from None
    unknown = set(document) - {"routes", "keys"}  # keys: the TUI's (tui/keymap.py)
    if unknown:
        raise RouteError(f"config {path}: unknown key(s) {', '.join(sorted(unknown))} (known: routes, keys)")
    tables = document.get("routes", {})
    if not isinstance(tables, dict):
        raise RouteError(f"config {path}: routes must be tables, [routes.NAME] with url = \"...\"")
    found = []
    for name, table in tables.items():
        where = f"config {path}: [routes.{name}]"
        if not isinstance(table, dict):
            raise RouteError(f"{where} must be a table with url = \"...\"")
        unknown = set(table) - {"url", "port", "mode"}
        if unknown:
            raise RouteError(f"{where}: unknown key(s) {', '.join(sorted(unknown))} (known: url, port, mode)")
        url, port, mode = table.get("url"), table.get("port"), table.get("mode", "passthrough")
        if not isinstance(url, str):
            raise RouteError(f"{where} needs url = \"http(s)://...\"")
        if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 0 < port <= 65535):
            raise RouteError(f"{where}: port must be a number from 1 to 65535")
        if not isinstance(mode, str):
            raise RouteError(f"{where}: mode must be a string: {_MODES}")
        translate, repair = parse_mode(mode, where)
        found.append(replace(_route(name, url, port, where), translate=translate, repair=repair,
                             source=f"config {path}"))
    return found


def find_config(cwd: Path | None = None) -> tuple[Path | None, bytes, tuple[str, ...]]:
    """The config that applies with no --config (config_file.find_config), or a RouteError."""
    try:
        return config_file.find_config(cwd)
    except config_file.ConfigError as exc:
        raise RouteError(str(exc)) from None


def resolve(*, upstream: str | None = None, routes: Iterable[str] = (), route_modes: Iterable[str] = (),
            config: str | None = None, translate: str | None = None, repair: bool = False,
            cwd: Path | None = None, builtin: bool = False) -> RouteTable:
    """The route table a launch serves. Flags win over the config file route by route; a route's
    own mode wins over `translate`/`repair`, which are the default mode of every route (and the
    mode of `--upstream`). `builtin`: the flags are the whole table, no config file is read."""
    ignored: tuple[str, ...] = ()
    if upstream is not None:
        upstream = shown_as_sent(upstream, "--upstream")
    path: Path | None = None
    if config is not None:
        path = Path(config)
        data = read_config(path)
    elif not builtin:
        path, data, ignored = find_config(cwd)
    by_name: dict[str, Route] = {}
    source = "flags"
    if path is not None:
        by_name = {route.name: route for route in load_config(path, data)}
        source = f"config {path}"
    own_mode = {name for name, route in by_name.items() if route.mode != "passthrough"}
    for text in routes:
        route = parse_route(text)
        if route.name in own_mode:  # the flag names no mode: the file's stays
            previous = by_name[route.name]
            route = replace(route, translate=previous.translate, repair=previous.repair)
        by_name[route.name] = route
    if not by_name and upstream is None:
        by_name = {route.name: route for route in DEFAULT_ROUTES}
        source = "defaults"
    for text in route_modes:
        name, equals, mode = text.partition("=")
        if not equals or name not in by_name:
            known = ", ".join(by_name) or "none"
            raise RouteError(f"--route-mode {text!r}: expected NAME=MODE for a route (routes: {known})")
        mode_translate, mode_repair = parse_mode(mode, f"--route-mode {name}")
        by_name[name] = replace(by_name[name], translate=mode_translate, repair=mode_repair)
        own_mode.add(name)
    if translate or repair:
        by_name = {name: route if name in own_mode else replace(route, translate=translate, repair=repair)
                   for name, route in by_name.items()}
    ports = [route.port for route in by_name.values() if route.port is not None]
    if len(ports) != len(set(ports)):
        raise RouteError(f"two routes ask for the same port: {sorted(ports)}")
    return RouteTable(tuple(by_name.values()), upstream, source, ignored)


def open_forwarder(table: RouteTable, options: Options, *, store: Store,
                   on_event: Callable[[FlowEvent], None] | None = None) -> Forwarder | Router:
    """What serves `table`, not started: a plain Forwarder for `--upstream` alone (its hot path
    stays as it was), else a Router. A ForwarderError when a route cannot be served. Proxy mode
    (`options.proxy`) is served on the plain Forwarder's port, or on a Router's shared port."""
    if not table.routes:
        assert table.upstream is not None
        return Forwarder(replace(options, upstream=table.upstream), store=store, on_event=on_event)
    access = AccessPolicy(options.host, allow_hosts=options.allow_hosts, allow_origins=options.allow_origins)
    # Proxy mode on the shared port: CONNECT is answered by one forwarder's handler (the unnamed
    # route's, else the first route's on that port), which relays what it intercepts.
    proxying = options.proxy
    root = None
    if table.upstream is not None:
        root = Forwarder(replace(options, upstream=table.upstream), store=store, on_event=on_event, access=access)
        proxying = ProxyOptions()
    mounted: list[Forwarder] = []
    own_port: list[Forwarder] = []
    for route in table.routes:
        shared = route.port is None
        try:
            forwarder = Forwarder(replace(options, upstream=route.upstream, port=route.port or 0,
                                          translate=route.translate, repair=route.repair, route=route.name,
                                          proxy=proxying if shared else ProxyOptions()),
                                  store=store, on_event=on_event, access=access)
        except ForwarderError as exc:
            raise RouteError(f"route {route.name}: {exc}") from None
        if shared:
            proxying = ProxyOptions()
        (mounted if shared else own_port).append(forwarder)
    return Router(mounted, own_port, root=root, access=access, store=store, host=options.host, port=options.port,
                  limits=options.limits, source=table.source,
                  sources={route.name: route.source for route in table.routes})


class Router(Served):
    """The routes of one launch: those below `/r/NAME/` on the shared port, dispatched here, and
    those on ports of their own, each its own Forwarder's server. Quacks like a Forwarder where the
    CLI and the UI use one (access, client_url, upstream_shown, mode, credentials, start, stop)."""

    def __init__(self, mounted: list[Forwarder], own_port: list[Forwarder], *, root: Forwarder | None,
                 access: AccessPolicy, store: Store, host: str, port: int, limits: ClientLimits = ClientLimits(),
                 source: str = "flags", sources: dict[str, str] | None = None) -> None:
        self.forwarders = mounted + own_port  # the named routes: those on the shared port first
        self.source = source
        self.sources = sources or {}  # each route's Route.source, by name
        self.root = root  # --upstream beside the routes: every path no route claims
        self.access = access
        self.store = store
        self.host = host
        self.translate = None  # each route has its own mode; the header names them per route
        self.mode = "routes"
        self._mounted = {f.route.encode(): f for f in mounted if f.route}
        self._own_port = own_port
        # The forwarder whose handler answers CONNECT on the shared port (see open_forwarder).
        self._proxy = root if root is not None else (mounted[0] if mounted else None)
        self._server = ServerThread(self._app, host, port, name="toolwire-router", setup=self._open_clients,
                                    teardown=self._close_clients, limits=limits, websocket=True,
                                    connect=None if self._proxy is None else self._proxy.connect)
        for forwarder in self._shared:
            forwarder.mount_on(self._server, "" if forwarder is root else f"/r/{forwarder.route}")

    def source_of(self, route: str | None) -> str:
        """What set the route named `route` (Route.source); the unnamed one is --upstream's."""
        return self.sources.get(route or "", FROM_UPSTREAM)

    @property
    def connect(self) -> ConnectHandler | None:
        """The handler that answers CONNECT on the shared port (None: no route is served there)."""
        return None if self._proxy is None else self._proxy.connect

    @property
    def proxy(self) -> ProxyOptions:
        """Proxy mode as launched, on the shared port."""
        return ProxyOptions() if self._proxy is None else self._proxy.proxy

    @property
    def _shared(self) -> list[Forwarder]:
        return [*self._mounted.values(), *([self.root] if self.root is not None else [])]

    @property
    def upstream_shown(self) -> str:
        root = [("", self.root.upstream_shown)] if self.root is not None else []
        return session_upstream(root + [(f.route or "", f.upstream_shown) for f in self.forwarders])

    def forwarder(self, route: str) -> Forwarder | None:
        """The Forwarder of the route named `route` ("" : the unnamed one), None if there is none."""
        if not route:
            return self.root
        return next((f for f in self.forwarders if f.route == route), None)

    def credentials(self, flow_id: int) -> list[tuple[str, str]]:
        for forwarder in self.all:
            found = forwarder.credentials(flow_id)
            if found:
                return found
        return []

    @property
    def all(self) -> list[Forwarder]:
        return [*([self.root] if self.root is not None else []), *self.forwarders]

    def start(self) -> None:
        """Listen on the shared port (if any route is served there) and on each route's own port;
        on a failure, what started is stopped again."""
        shorten_switch_interval()
        started: list = []
        try:
            if self._shared:
                try:
                    self._server.start()
                except ListenError as exc:
                    raise RouteError(str(exc)) from exc
                started.append(self._server)
            if self.store.session_id is None:  # before the routes on their own ports start one of their own
                self.store.new_session(self.upstream_shown, self.base_url, self.mode)
            for forwarder in self._own_port:
                try:
                    forwarder.start()
                except ForwarderError as exc:
                    raise RouteError(f"route {forwarder.route}: {exc}") from None
                started.append(forwarder)
        except BaseException:
            for thing in reversed(started):
                thing.stop()
            raise

    def stop(self) -> None:
        for forwarder in self._shared:
            forwarder.cut_in_flight()
        self._server.stop()
        for forwarder in self._own_port:
            forwarder.stop()

    def __enter__(self) -> Router:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _open_clients(self) -> None:
        for forwarder in self._shared:
            await forwarder.open_client()

    async def _close_clients(self) -> None:
        for forwarder in self._shared:
            await forwarder.close_client()

    async def _app(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] not in ("http", "websocket"):
            return
        if self._proxy is not None and INTERCEPT_EXTENSION in scope.get("extensions", {}):
            await self._proxy.app(scope, receive, send)  # a request in an intercepted tunnel: no route
            return
        t0 = time.perf_counter()
        started_at = time.time()
        raw_path, _, raw_query = request_target(scope).partition(b"?")
        raw_path, refused = self.access.admit(scope["headers"], raw_path)
        if refused is not None:
            await refused.send(send, scope["type"])
            return
        if raw_path.startswith(ROUTE_PREFIX):
            name, slash, rest = raw_path[len(ROUTE_PREFIX):].partition(b"/")
            forwarder = self._mounted.get(name)
            if forwarder is not None:
                await forwarder.handle(scope, receive, send, slash + rest or b"/", raw_query, t0, started_at)
                return
        if self.root is not None:
            await self.root.handle(scope, receive, send, raw_path, raw_query, t0, started_at)
            return
        # Admitted, so recorded like any flow: a client given a wrong base URL shows up in the list.
        known = ", ".join(f"/r/{name.decode()}/" for name in self._mounted)
        await next(iter(self._mounted.values())).handle(
            scope, receive, send, raw_path, raw_query, t0, started_at, refusal=(
                404, "toolwire_unknown_route", f"no route for {raw_path.decode('latin-1')!r}: paths start with "
                                               f"one of {known}"))


def _route(name: str, url: str, port: int | None, where: str) -> Route:
    if not _NAME.fullmatch(name):
        raise RouteError(f"{where}: a route name is letters, digits, '_', '.' or '-' (at most 64), got {name!r}")
    url = shown_as_sent(url, where)
    if urlsplit(url).scheme not in ("http", "https"):
        raise RouteError(f"{where}: the upstream must be an http(s) URL, got {redact_url(url)!r}")
    return Route(name, url, port)


def shown_as_sent(url: str, where: str) -> str:
    """An upstream URL as it is shown and sent: refused (a RouteError) if it holds a control
    character or whitespace, its host in its IDNA (punycode) form if that is not ASCII, the name
    DNS is asked for. A URL is printed on startup and in the header: an escape sequence or a bidi
    override would rewrite what the user reads, and `api.openаi.com` with a Cyrillic а must not
    look like the real one."""
    for at, char in enumerate(url):
        if char.isspace() or not char.isprintable():
            raise RouteError(f"{where}: the upstream URL holds a control character or whitespace "
                             f"(U+{ord(char):04X} at position {at + 1}); a URL has none")
    parts = urlsplit(url)
    userinfo, sign, hostport = parts.netloc.rpartition("@")
    if hostport.isascii():
        return url
    try:
        encoded = hostport.encode("idna").decode("ascii")
    except UnicodeError:
        raise RouteError(f"{where}: the upstream's host {ascii(hostport)} is not a valid internationalised "
                         "domain name") from None
    return parts._replace(netloc=f"{userinfo}{sign}{encoded}").geturl()


def _port(text: str, where: str) -> int:
    value = int(text)
    if not 0 < value <= 65535:
        raise RouteError(f"{where}: port {text} is not from 1 to 65535")
    return value
