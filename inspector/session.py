"""The session contract: what the UI knows of the forwarder it runs with, and may ask of it.

Two implementations: `inspector.child.ForwarderProcess` (the forwarder in a process of its own,
as the TUI runs it) and `LocalSession` (a Forwarder or Router in this process, as the demo's and
the tests' apps run it). The UI reads these attributes and calls these methods, never asks which
one it has."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from .flow import Mode, ReplayKind
from .proxy.options import ProxyOptions

if TYPE_CHECKING:
    from .child import Otlp
    from .proxy import Forwarder
    from .proxy.routes import Router
    from .store import Store
    from .store.deletion import Deletion


@dataclass(frozen=True, slots=True)
class RouteShown:
    """One route of a session serving several (what the header lists for it)."""

    route: str
    client_url: str
    upstream: str
    translate: str | None
    source: str = "--upstream"  # what set it (proxy/routes.py's Route.source)


def session_upstream(routes: Iterable[tuple[str, str]]) -> str:
    """A routed session's `upstream` as stored, from (name, redacted upstream) per route ("" for the
    unnamed one, first): `NAME=URL` per route, space-separated, the unnamed route as `=URL`. Replay
    reads it back with `session_routes`; the header shows `upstream_summary` of it."""
    return " ".join(f"{name}={url}" for name, url in routes)


def session_routes(upstream: str) -> dict[str, str] | None:
    """The routes of a session's stored `upstream` ({name: URL}, "" for the unnamed one), or None
    for a session of one plain --upstream."""
    if not upstream.startswith("=") and not re.match(r"[A-Za-z0-9][A-Za-z0-9_.-]*=", upstream):
        return None
    return dict(part.partition("=")[::2] for part in upstream.split(" "))


def upstream_summary(upstream: str) -> str:
    """What a header says of a session's stored `upstream`: a plain one as it is; of routes, the
    unnamed route's URL, else how many routes there are (each is listed with its settings)."""
    routes = session_routes(upstream)
    if routes is None:
        return upstream
    if "" in routes:
        return routes[""]
    return f"{len(routes)} route{'' if len(routes) == 1 else 's'}"


class AccessState(Protocol):
    """What the header reads of the access policy (proxy/access.AccessPolicy is one)."""

    @property
    def token(self) -> str | None: ...
    @property
    def refused(self) -> int: ...
    @property
    def last_refusal(self) -> str | None: ...


class Session(Protocol):
    @property
    def upstream_shown(self) -> str:
        """Redacted: what may be shown."""

    @property
    def client_url(self) -> str:
        """The base URL to give clients (its token and route prefix included)."""

    @property
    def base_url(self) -> str:
        """The forwarder's own URL (proxy mode's HTTPS_PROXY)."""

    @property
    def mode(self) -> Mode:
        """Of its one upstream; PASSTHROUGH for a session of routes, each with its own."""

    @property
    def translate(self) -> str | None: ...

    @property
    def all(self) -> tuple[RouteShown, ...]:
        """The routes, when it serves several."""

    @property
    def ignored(self) -> tuple[str, ...]:
        """A config file found and not applied, each a line saying why."""

    @property
    def proxy(self) -> ProxyOptions:
        """Proxy mode as launched."""

    @property
    def access(self) -> AccessState: ...

    @property
    def store_problem(self) -> str | None:
        """The store's latest write failure, None while it writes."""

    @property
    def otlp(self) -> Otlp | None:
        """The live OpenTelemetry export's counts (exported, failed, dropped); None without one."""

    @property
    def tunnelled(self) -> tuple[int, tuple[tuple[str, int], ...]]:
        """CONNECT tunnels relayed untouched and unrecorded (proxy mode, a host not intercepted): how
        many, and (host:port, tunnels) per target, the most first."""

    def replay(self, flow_id: int, *, kind: ReplayKind = ReplayKind.AS_RECORDED, body: bytes | None = None) -> int:
        """The new flow's id, or a ReplayError."""

    def delete(self, flow_ids: Collection[int]) -> Deletion:
        """Delete stored flows where the store's writer is (Store.delete): what was done, or a StoreError."""

    def request_stop(self) -> None:
        """Ask the forwarder to stop, without waiting."""


class LocalSession:
    """A Forwarder or a Router of this process as a Session. Its owner starts and stops it."""

    def __init__(self, forwarder: Forwarder | Router, store: Store, key_hosts: tuple[str, ...] = ()) -> None:
        from .proxy.routes import Router

        self.forwarder = forwarder
        self.store = store
        self.key_hosts = key_hosts  # where a replay may send the environment's key besides its provider
        if isinstance(forwarder, Router):
            self.mode, self.translate = Mode.PASSTHROUGH, None
            self.all = tuple(RouteShown(f.route or "", f.client_url, f.upstream, f.translate,
                                        forwarder.source_of(f.route)) for f in forwarder.all)
        else:
            self.mode, self.translate, self.all = forwarder.mode, forwarder.translate, ()
        self.ignored: tuple[str, ...] = ()
        self.proxy = forwarder.proxy

    @property
    def upstream_shown(self) -> str:
        return self.forwarder.upstream_shown

    @property
    def client_url(self) -> str:
        return self.forwarder.client_url

    @property
    def base_url(self) -> str:
        return self.forwarder.base_url

    @property
    def access(self) -> AccessState:
        return self.forwarder.access

    @property
    def store_problem(self) -> str | None:
        return self.store.last_error

    @property
    def otlp(self) -> Otlp | None:
        return None  # the live export runs in `record` and the TUI's child, not beside an app in-process

    @property
    def tunnelled(self) -> tuple[int, tuple[tuple[str, int], ...]]:
        connect = self.forwarder.connect
        return (0, ()) if connect is None else (connect.tunnelled, connect.tunnelled_hosts())

    def replay(self, flow_id: int, *, kind: ReplayKind = ReplayKind.AS_RECORDED, body: bytes | None = None) -> int:
        from .replay import replay_stored

        return replay_stored(self.store, self.forwarder, flow_id, kind=kind, body=body, key_hosts=self.key_hosts)

    def delete(self, flow_ids: Collection[int]) -> Deletion:
        return self.store.delete(flow_ids)

    def request_stop(self) -> None:
        pass  # its owner stops it, after the app
