"""Replay a recorded flow through a running forwarder, so the replay is recorded like any flow
and linked to its original. Credentials come from the forwarder's memory or the environment,
never from disk (the store holds only redacted headers). A key from the environment goes only
where it belongs: to the provider host its variable is for (OPENAI_API_KEY to api.openai.com, ...,
wire/profiles.PROVIDER_HOSTS), or to a host the user names (`--key-host`); where the replay goes
is decided by the forwarder it is sent through, never by the stored flow, so an edited or planted
store cannot send a key elsewhere. A flow sent with a key that no source may supply is refused,
with the reason, rather than sent without it. Only a request that goes where it went
when recorded is resent: a stored target that is not a plain path, or a flow recorded against
another upstream, is refused rather than sent, with a key from the environment, somewhere else.
A flow recorded in proxy mode is resent the way it came, through a tunnel to its host, when
that host is on the forwarder's intercept list.

The forwarder is on loopback and the request is already built, so the standard library's client
is all this needs; httpx would drag rich into the core (its package imports its CLI module)."""

from __future__ import annotations

import asyncio
import http.client
import os
import ssl
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlencode, urlsplit

import aiohttp
import orjson

from .analysis import analyse, safe_repairs
from .flow import Flow, ReplayKind
from .proxy.access import TOKEN_HEADER, origin, target_problem
from .proxy.ca import CAError
from .proxy.forwarder import FLOW_ID_HEADER, REPLAY_AUTH_HEADER, REPLAY_HEADER, replay_marker
from .proxy.routes import Router
from .proxy.server import is_loopback
from .proxy.stdio import STDIO_SCHEME
from .sockets import turn_frame
from .redact import REDACTED, SECRET_QUERY_KEYS, query_pairs, secret_header
from .wire import jsonsafe
from .wire.dialect import Dialect, from_path
from .wire.dialects import Outgoing, auth_headers, provider
from .wire.profiles import PROVIDER_HOSTS, is_provider_host

if TYPE_CHECKING:
    from .proxy.connect import InterceptList
    from .proxy.forwarder import Forwarder
    from .store import Store

# Recomputed by the HTTP client for the request it actually sends (curl's too, see inspector.curl).
NOT_REPLAYED = frozenset({"host", "content-length", "transfer-encoding", "connection", "keep-alive", "expect",
                           REPLAY_HEADER, REPLAY_AUTH_HEADER})


class ReplayError(Exception):
    """The replay was refused, could not be sent, or its answer carried no flow id."""


class ReplayRefused(ReplayError):
    """The replay was refused before anything was sent (the `replay` command exits 2 for it)."""


def key_variables(dialect: Dialect | None) -> tuple[str, ...]:
    """The environment variables a key for `dialect` is read from (none for MCP or an unknown path):
    those its provider's SDK reads, in the order it reads them."""
    found = provider(dialect)
    return found.key_variables if found is not None else ()


def credentials_from_env(dialect: Dialect | None, env: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """The header a fresh process can authenticate `dialect` with, from the usual variables, put
    where its provider wants it (`Provider.auth`)."""
    env = os.environ if env is None else env
    found = provider(dialect)
    if found is None or found.auth is None:
        return []
    key = next((env[name] for name in found.key_variables if env.get(name)), None)
    return found.auth(Outgoing("POST", "", []), key).headers if key else []


def env_credentials(flow: Flow, host: str, *, key_hosts: Collection[str] = (),
                    env: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """The environment's key for `flow`'s dialect, for a replay that goes to `host`: only when
    `host` is the provider's own for that key, or one of `key_hosts` (named by the user). None for a
    flow sent without a key, unless it may go; a ReplayRefused saying why for a flow sent with one."""
    dialect = from_path(flow.path)
    found = credentials_from_env(dialect, env)
    host = host.lower()
    if found and (is_provider_host(host, dialect) or host in {name.lower() for name in key_hosts}):
        return found
    carried = recorded_key(flow)
    if carried is None:
        return []
    raise ReplayRefused(missing_key(flow, carried, host, have_key=bool(found)))


def missing_key(flow: Flow, carried: str, host: str, *, have_key: bool) -> str:
    """Why a flow sent with a key (`carried`: where it was) is not replayed to `host`: the one text
    the `replay` command and the TUI's `r` both give."""
    dialect = from_path(flow.path)
    names = " or ".join(key_variables(dialect))
    why = f"flow #{flow.id} was sent with a key ({carried}) and the store keeps none"
    if not names:
        return f"{why}, and no environment variable holds a key for {flow.path!r}"
    if not have_key:
        return f"{why}: set {names} to replay it"
    assert dialect is not None  # it has key variables
    return (f"{why}: {names} goes only to {PROVIDER_HOSTS[dialect]}, and this replay goes to {host} "
            f"(--key-host {host} sends it there)")


def recorded_key(flow: Flow) -> str | None:
    """Where the recorded request carried a key that the store holds redacted: a header's name, or
    `NAME in the query`; None when it was sent without one (a local model server, a mock)."""
    for name, value in flow.request_headers:
        if name.lower() in auth_headers() and value == REDACTED:
            return name.lower()
    for name, value in query_pairs(flow.query or ""):
        if name.lower() in SECRET_QUERY_KEYS and value == REDACTED:
            return f"{name} in the query"
    return None


def replay_request(flow: Flow, credentials: list[tuple[str, str]] | None,
                   *, kind: ReplayKind = ReplayKind.AS_RECORDED) -> tuple[str, list[tuple[str, str]]]:
    """(path with query, headers) to resend `flow`: its recorded headers minus the redacted
    secrets and the framing, plus `credentials` and the replay link. A ReplayError if the recorded
    target is not one the forwarder would send upstream."""
    if flow.upstream_url.startswith(STDIO_SCHEME):
        raise ReplayRefused(f"flow #{flow.id} is not replayed: it was recorded over stdio (mcp-stdio), and a replay "
                          f"is sent over HTTP")
    problem = target_problem(flow.path, flow.query)
    if problem is not None:
        raise ReplayRefused(f"flow #{flow.id} is not replayed: {problem}")
    headers = [(k, v) for k, v in flow.request_headers
               if k.lower() not in NOT_REPLAYED and not (secret_header(k) and v == REDACTED)]
    if kind is not ReplayKind.AS_RECORDED:
        # A fixed or edited body is written decoded: the recorded content-encoding no longer applies.
        headers = [(k, v) for k, v in headers if k.lower() != "content-encoding"]
    given = {k.lower() for k, _ in credentials or ()}
    headers = [(k, v) for k, v in headers if k.lower() not in given]
    headers += list(credentials or ())
    headers += replay_marker(flow.id, kind=kind)
    query = flow.query
    if query:
        # A redacted `?key=` is useless; the key travels as a header from `credentials` instead.
        pairs = query_pairs(query)
        kept = [(k, v) for k, v in pairs if not (k.lower() in SECRET_QUERY_KEYS and v == REDACTED)]
        if len(kept) != len(pairs):
            query = urlencode(kept, safe=":/,")
    return flow.path + (f"?{query}" if query else ""), headers


def intercepted_host(flow: Flow, intercepts: InterceptList | None) -> tuple[str, int, str] | None:
    """(host, port, where it goes) of the tunnel a flow recorded in proxy mode came through (where it
    goes: the host the forwarder sends that tunnel's requests to), when `intercepts`
    (a forwarder's list; None: it answers no CONNECT) holds that host today and sends its requests
    where they went then; None for a flow that came by a base URL. A ReplayError for an intercepted
    flow that would not go there: the host is off the list, or goes elsewhere now. Only the list
    decides, never the stored flow's own word: a store can be edited or imported, and a replay
    carries the user's keys."""
    hosts = [value for name, value in flow.request_headers if name.lower() == "host"]
    if len(hosts) != 1 or not flow.upstream_url:
        return None
    parts = urlsplit(f"//{hosts[0]}")
    try:
        host, port = (parts.hostname or "").lower(), parts.port or 443
    except ValueError:  # a port out of range: the forwarder admitted no such flow
        return None
    if not host or is_loopback(host):
        return None
    went = origin(flow.upstream_url)
    interception = None if intercepts is None else intercepts.match(host, port)
    if interception is None:
        # Recorded from a tunnel to https://HOST, off this forwarder's list: not replayed there.
        if went == origin(f"https://{hosts[0]}"):
            raise ReplayRefused(f"flow #{flow.id} is not replayed: it was intercepted from {host}, which this "
                              f"forwarder does not intercept (--intercept {host} adds it); a replay goes only to "
                              "hosts on the intercept list, never to any host a stored flow names")
        return None
    going = origin(f"{interception.scheme}://{interception.authority}")
    if going is None or went != going:
        raise ReplayRefused(f"flow #{flow.id} is not replayed: it went to {went or flow.upstream_url} through a "
                          f"tunnel to {host}, which this forwarder sends to {interception.shown}; its credentials "
                          "are not sent anywhere else")
    return host, port, urlsplit(going).hostname or host


def _through_tunnel(flow: Flow, via: Forwarder | Router, tunnel: tuple[str, int, str]
                    ) -> tuple[ssl.SSLContext, dict[str, str]]:
    """What a replay through the forwarder's proxy tunnel needs, as a client in proxy mode has it: the
    TLS context trusting the local CA, and the CONNECT's headers (the forwarder's token, if any)."""
    assert via.connect is not None  # intercepted_host found the tunnel's host on its list
    try:
        context = via.connect.client_context()
    except CAError as exc:
        raise ReplayRefused(f"replay of #{flow.id} through a tunnel to {tunnel[0]}: {exc}") from exc
    token = via.access.token
    return context, {} if token is None else {TOKEN_HEADER: token}


def _route(flow: Flow, via: Forwarder | Router, elsewhere: bool
           ) -> tuple[Forwarder | Router, tuple[str, int, str] | None, str]:
    """(what a replay of `flow` goes through: the route it came through, or in proxy mode the
    forwarder whose tunnel it takes; that tunnel; the host it reaches), or a ReplayRefused when it
    would go to another upstream than it went to."""
    tunnel = None if elsewhere else intercepted_host(flow, None if via.connect is None else via.connect.intercepts)
    if tunnel is not None:
        host = tunnel[2]
    else:
        if isinstance(via, Router):
            route = via.forwarder(flow.route)
            if route is None:
                came = f"route {flow.route!r}" if flow.route else "the unnamed route (--upstream)"
                raise ReplayRefused(f"flow #{flow.id} is not replayed: it came through {came}, which this forwarder "
                                  "does not serve")
            via = route
        if not elsewhere and flow.upstream_url:
            went, going = origin(flow.upstream_url), origin(via.upstream)
            if went is None or went != going:
                raise ReplayRefused(f"flow #{flow.id} is not replayed: it went to {went or flow.upstream_url}, not "
                                  f"to this forwarder's upstream {going}; its credentials are not sent anywhere else")
        host = urlsplit(via.upstream).hostname or ""
    return via, tunnel, host


def replay(flow: Flow, *, via: Forwarder | Router, credentials: list[tuple[str, str]] | None = None,
           body: bytes | None = None, kind: ReplayKind = ReplayKind.AS_RECORDED, timeout: float = 600.0,
           elsewhere: bool = False, key_hosts: Collection[str] = ()) -> int:
    """Send the recorded request (or `body`) through `via`, a forwarder of this process (a Router:
    through the route the flow came through; a flow recorded in proxy mode: through a tunnel to
    its host, see intercepted_host); the new flow's id. `credentials`: those the flow's client sent
    (the forwarder that recorded it keeps them in memory); without them, the environment's key
    where it may go (env_credentials, with `key_hosts`). `kind`: what `body` is, the request with
    the safe repairs applied or as the user edited it (the new flow says so). `elsewhere`: the
    caller chose `via`'s upstream knowing the flow went to another."""
    via, tunnel, host = _route(flow, via, elsewhere)
    if not credentials:
        credentials = env_credentials(flow, host, key_hosts=key_hosts)
    target, headers = replay_request(flow, credentials, kind=kind)
    content = flow.request_body if body is None else body
    parts = urlsplit(via.client_url)
    address = parts.hostname or "127.0.0.1", parts.port or 80
    if tunnel is None:
        connection = http.client.HTTPConnection(*address, timeout=timeout)
        prefix = parts.path  # the token prefix of the client URL, if any, goes first
    else:
        context, connect_headers = _through_tunnel(flow, via, tunnel)
        # The way a client in proxy mode sends it: CONNECT to the forwarder, then TLS to the host.
        connection = http.client.HTTPSConnection(*address, timeout=timeout, context=context)
        connection.set_tunnel(*tunnel[:2], headers=connect_headers)
        prefix = ""
    try:
        connection.putrequest(flow.method, prefix + target, skip_host=False, skip_accept_encoding=True)
        for name, value in headers:
            connection.putheader(name, value)
        connection.putheader("Content-Length", str(len(content)))
        connection.endheaders(content)
        response = connection.getresponse()
        while response.read(65536):
            pass  # the forwarder records the body; only its end matters here
        new_id = response.getheader(FLOW_ID_HEADER)
    except ValueError as exc:  # a recorded method or header http.client will not write (a control character)
        raise ReplayRefused(f"replay of #{flow.id}: the recorded request cannot be sent as HTTP: {exc}") from exc
    except (OSError, http.client.HTTPException) as exc:
        raise ReplayError(f"replay of #{flow.id} through {via.base_url} failed: {exc}") from exc
    finally:
        connection.close()
    if new_id is None:
        raise ReplayError(f"{via.base_url} answered without {FLOW_ID_HEADER}: is it a toolwire-inspect forwarder?")
    return int(new_id)


def fixed_request(flow: Flow) -> bytes:
    """The request body with every safe repair applied (what "replay fixed" sends). ReplayRefused
    says why there is none."""
    try:
        repaired = safe_repairs(analyse(flow), flow)
    except jsonsafe.Unfaithful as exc:
        raise ReplayRefused(f"cannot fix faithfully: {exc}") from None
    if repaired is None:
        raise ReplayRefused("nothing to fix: the request is not JSON of a known dialect")
    return orjson.dumps(repaired.payload)


def replay_stored(store: Store, forwarder: Forwarder | Router, flow_id: int, *,
                  kind: ReplayKind = ReplayKind.AS_RECORDED, body: bytes | None = None,
                  key_hosts: Collection[str] = ()) -> int:
    """Replay stored flow `flow_id` through `forwarder` with the credentials its client sent (the
    forwarder keeps them in memory) or else the environment's where it may go (see replay); the new
    flow's id. `kind` FIXED: with every safe repair applied; EDITED: `body`, the request as the user
    edited it. A ReplayError says why not."""
    flow = store.get(flow_id)
    if flow is None:
        raise ReplayError("not in the store")
    if kind is ReplayKind.FIXED:
        body = fixed_request(flow)
    elif kind is ReplayKind.AS_RECORDED:
        body = None
    if flow.socket_of is not None:
        return replay_turn(flow, via=forwarder, credentials=forwarder.credentials(flow.socket_of), body=body,
                           kind=kind, key_hosts=key_hosts)
    return replay(flow, via=forwarder, credentials=forwarder.credentials(flow_id), body=body, kind=kind,
                  key_hosts=key_hosts)


# The handshake headers aiohttp's client writes itself: the recorded ones belong to the recorded socket.
_HANDSHAKE_PREFIX = "sec-websocket-"
_TURN_ENDS = frozenset({"response.completed", "response.failed", "response.incomplete", "error"})


def replay_turn(flow: Flow, *, via: Forwarder | Router, credentials: list[tuple[str, str]] | None = None,
                body: bytes | None = None, kind: ReplayKind = ReplayKind.AS_RECORDED, timeout: float = 600.0,
                key_hosts: Collection[str] = ()) -> int:
    """Replay socket turn `flow` (a Responses-over-WebSocket turn, inspector/sockets.py) on a socket of
    its own through `via`, as an HTTP replay goes: the same route and upstream (in proxy mode, a tunnel
    to the host it came through), the same credential rules, the signed replay header, so the
    forwarder records the new socket linked to the turn (and its one turn after it); the new socket
    flow's id. It sends the turn's `response.create` (or
    `body`) with the history it continued as full input (sockets.turn_frame), reads the answer to its
    end and closes the socket."""
    via, tunnel, host = _route(flow, via, False)
    if not credentials:
        credentials = env_credentials(flow, host, key_hosts=key_hosts)
    target, headers = replay_request(flow, credentials, kind=kind)
    protocols = tuple(part.strip() for name, value in headers if name.lower() == "sec-websocket-protocol"
                      for part in value.split(",") if part.strip())
    headers = [(k, v) for k, v in headers if not k.lower().startswith(_HANDSHAKE_PREFIX) and k.lower() != "upgrade"]
    try:
        frame = turn_frame(flow, body)
    except ValueError as exc:
        raise ReplayRefused(f"flow #{flow.id} is not replayed: {exc}") from exc
    parts = urlsplit(via.client_url)
    tunnelled: _Tunnel | None = None
    if tunnel is None:
        url = f"ws://{parts.netloc}{parts.path}{target}"
    else:
        # The way a client in proxy mode opens it: CONNECT to the forwarder, TLS to the host, then the upgrade.
        context, connect_headers = _through_tunnel(flow, via, tunnel)
        tunnelled = _Tunnel(f"http://{parts.netloc}", connect_headers, context)
        url = f"wss://{tunnel[0]}:{tunnel[1]}{target}"
    try:
        return asyncio.run(_send_turn(url, headers, protocols, frame.decode(), timeout, tunnelled))
    except (aiohttp.ClientError, OSError) as exc:  # a timeout is an OSError too
        raise ReplayError(f"replay of #{flow.id} through {via.base_url} failed: {exc}") from exc


@dataclass(frozen=True, slots=True)
class _Tunnel:
    """The forwarder a turn recorded in proxy mode is replayed through, as its proxy."""

    proxy: str
    headers: dict[str, str]
    context: ssl.SSLContext


async def _send_turn(url: str, headers: list[tuple[str, str]], protocols: tuple[str, ...], frame: str,
                     timeout: float, tunnel: _Tunnel | None) -> int:
    answered: list[str] = []

    async def handshake(session: object, context: object, params: aiohttp.TraceRequestEndParams) -> None:
        # The upgrade's answer: aiohttp's socket keeps no public handle on its headers.
        answered.extend(params.response.headers.getall(FLOW_ID_HEADER, []))

    trace = aiohttp.TraceConfig()
    trace.on_request_end.append(handshake)
    async with aiohttp.ClientSession(trace_configs=[trace], timeout=aiohttp.ClientTimeout(total=timeout)) as session:
        async with session.ws_connect(url, headers=headers, protocols=protocols, max_msg_size=0,
                                      proxy=None if tunnel is None else tunnel.proxy,
                                      proxy_headers=None if tunnel is None else tunnel.headers,
                                      ssl=True if tunnel is None else tunnel.context) as ws:
            await ws.send_str(frame)
            async for message in ws:
                if message.type is aiohttp.WSMsgType.TEXT:
                    try:
                        event = orjson.loads(message.data)
                    except orjson.JSONDecodeError:
                        continue
                    if isinstance(event, dict) and event.get("type") in _TURN_ENDS:
                        break
            await ws.close(code=1000, message=b"replayed")
    if not answered:
        raise ReplayError(f"{url} answered without {FLOW_ID_HEADER}: is it a toolwire-inspect forwarder?")
    return int(answered[0])
