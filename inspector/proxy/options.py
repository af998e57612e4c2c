"""The forwarder's options: one typed object from the command line to every Forwarder and across
the child process's pipe (sent there once, as JSON: `to_json` / `from_json`).

`Options` is what one launch serves (cli/common.options builds it from the flags); a Router gives
each route's Forwarder the same object with that route's upstream, port, mode and name
(`dataclasses.replace`). Light on imports: the CLI builds it before anything heavy loads."""

from __future__ import annotations

import resource
from dataclasses import asdict, dataclass, fields
from typing import Any

DEFAULT_MAX_BODY = 64 * 1024 * 1024
DEFAULT_TIMEOUT = 600.0  # seconds of upstream silence before giving up (LLMs can think long)
# As long as the forwarder waits on a silent upstream (DEFAULT_TIMEOUT): a tunnel to a provider
# off the intercept list carries the same requests, silent while the model thinks.
DEFAULT_TUNNEL_IDLE = 600.0


def descriptor_pairs() -> int:
    """How many client connections the descriptor limit allows, each with its upstream connection
    (two descriptors), 256 kept free for the store, logs and the UI. Plain connections and proxy
    mode's tunnels (DEFAULT_MAX_TUNNELS, a fifth) share them."""
    return (resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 256) // 2


# A fifth of the descriptor pairs: with the plain connections' share (ClientLimits), the two
# together stay within the process's descriptor limit.
DEFAULT_MAX_TUNNELS = max(16, min(2_000, descriptor_pairs() // 5))


def _tuples(options: Any) -> None:
    """Frozen means frozen: a list given for a tuple field becomes a tuple (JSON brings lists)."""
    for each in fields(options):
        value = getattr(options, each.name)
        if isinstance(value, list):
            object.__setattr__(options, each.name, tuple(value))


@dataclass(frozen=True, slots=True)
class ClientLimits:
    """What one client may hold of the server. uvicorn bounds neither the request head under
    httptools (it only bounds h11's, and httptools joins a header's pieces without limit) nor
    the time a client takes to send it, so proxy/server.py's protocol does both."""

    max_head: int = 64 * 1024  # request line and headers; real clients send a few KiB
    # Seconds a client may take to send a whole request head (from connecting, or from the first
    # byte of a next request), and may stay silent in the middle of a request body.
    client_timeout: float = 10.0
    keep_alive: int = 5  # idle seconds between two requests on one connection
    # Each relayed request holds two descriptors (client and upstream): refusing connections
    # beyond this keeps descriptors free for the upstream side, the store and the tunnels' fifth.
    max_connections: int = max(64, min(10_000, descriptor_pairs() - descriptor_pairs() // 5))
    # The largest WebSocket message relayed either way (uvicorn's default; the upstream client
    # takes the same): a bigger one closes the socket with 1009.
    max_message: int = 16 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ProxyOptions:
    """Proxy mode (proxy/connect.py): what is intercepted, where it may tunnel, which CA it trusts."""

    intercept: tuple[str, ...] = ()  # HOST or HOST=URL, besides the known LLM API hosts
    allow_connect: tuple[str, ...] = ()  # loopback or private hosts a tunnel may reach all the same
    ca_dir: str | None = None  # the local CA's folder (None: the user's data dir)
    upstream_ca: str | None = None  # PEM certificates trusted for upstream TLS, besides the usual roots
    tunnel_idle: float = DEFAULT_TUNNEL_IDLE
    max_tunnels: int = DEFAULT_MAX_TUNNELS

    def __post_init__(self) -> None:
        _tuples(self)


@dataclass(frozen=True, slots=True)
class RouteFlags:
    """The route flags of a launch (proxy/routes.resolve reads them with the config file)."""

    route: tuple[str, ...] = ()  # NAME=URL[@PORT]
    route_mode: tuple[str, ...] = ()  # NAME=MODE
    config: str | None = None  # --config PATH
    # The routes are these flags alone: no config file is looked for (the demo serves its own
    # routes; a user's or a checkout's config would mount real upstreams beside them).
    builtin: bool = False

    def __post_init__(self) -> None:
        _tuples(self)


@dataclass(frozen=True, slots=True)
class OtlpOptions:
    """The live OpenTelemetry export (otlp/live.open_live)."""

    endpoint: str | None = None  # None: the OTEL_EXPORTER_OTLP_* environment decides
    content: bool = False  # spans carry the messages (redacted)
    openinference: bool = False  # spans also carry OpenInference attributes (Phoenix)


@dataclass(frozen=True, slots=True)
class Options:
    """What a launch serves and how. `upstream` None: the routes of `routes`, else the defaults.
    `route`: the name of the route one Forwarder serves (None: the unnamed one, at `/`)."""

    upstream: str | None = None
    host: str = "127.0.0.1"
    port: int = 8787
    translate: str | None = None  # SRC:DST
    repair: bool = False  # with translate too: repaired in the client's dialect, then translated
    allow_remote: bool = False
    allow_hosts: tuple[str, ...] = ()
    allow_origins: tuple[str, ...] = ()
    timeout: float = DEFAULT_TIMEOUT
    max_body: int = DEFAULT_MAX_BODY
    limits: ClientLimits = ClientLimits()
    proxy: ProxyOptions = ProxyOptions()
    routes: RouteFlags = RouteFlags()
    route: str | None = None
    store: str | None = None  # the store's path (None: the default store)
    key_hosts: tuple[str, ...] = ()  # where a replay may send the environment's key besides its provider
    otlp: OtlpOptions | None = None  # None: no live export

    def __post_init__(self) -> None:
        _tuples(self)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values (tuples as lists): what crosses the child's pipe."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Options:
        """The Options `to_json` gave; a TypeError for a key it does not know."""
        nested = {"limits": ClientLimits, "proxy": ProxyOptions, "routes": RouteFlags, "otlp": OtlpOptions}
        return cls(**{key: nested[key](**value) if key in nested and value is not None else value
                      for key, value in data.items()})
