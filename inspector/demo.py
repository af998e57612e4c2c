"""The built-in demo: a fake upstream that answers the scripted turns, and the scripted agent
that sends them through the forwarder. No API key, no network: everything stays on loopback."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import httpx
import orjson
import platformdirs

from .demo_script import DEMO_API_KEY, ROUTES, TURNS, Turn
from .mock import Canned, MockUpstream, Received, default_responder, json_response, provider_refusal, sse_response
from .proxy import FlowEvent, Forwarder
from .proxy.options import Options, RouteFlags
from .proxy.routes import Router, open_forwarder, parse_mode
from .proxy.transform import Repairing, TransformFactory
from .store import Store
from .wire.dialect import Dialect, from_path

# Streamed demo answers arrive piece by piece, as a real model's would.
STREAM_INTERVAL = 0.04


def default_demo_store() -> Path:
    """The demo records into its own file, so it never mixes with real recordings."""
    return Path(platformdirs.user_data_dir("toolwire-inspect")) / "demo.sqlite3"


def canned(turn: Turn, interval: float = STREAM_INTERVAL) -> Canned:
    if turn.stream:
        assert isinstance(turn.response, list)
        return sse_response(turn.response, interval=interval, status=turn.status)
    assert isinstance(turn.response, dict)
    return json_response(turn.response, status=turn.status)


def _key(body: bytes) -> bytes | None:
    """A request body as the demo knows it, whatever its spacing and key order."""
    try:
        return orjson.dumps(orjson.loads(body), option=orjson.OPT_SORT_KEYS)
    except orjson.JSONDecodeError:
        return None


def demo_options(upstream_url: str, *, port: int = 0, store: str | None = None) -> Options:
    """What the demo's forwarder serves: the fake upstream at `/` as recorded, and each demo route
    (ROUTES) below `/r/NAME/` in its mode, to the same fake upstream; no config file's routes."""
    return Options(upstream_url, port=port, store=store,
                   routes=RouteFlags(route=tuple(f"{name}={upstream_url}" for name in ROUTES),
                                     route_mode=tuple(f"{name}={mode}" for name, mode in ROUTES.items()),
                                     builtin=True))


def demo_forwarder(upstream_url: str, store: Store, *, port: int = 0,
                   on_event: Callable[[FlowEvent], None] | None = None) -> Router | Forwarder:
    """The demo's forwarder in this process (headless, tests), not started; its clients' base URL
    is `client_url`."""
    from .cli.common import route_table

    options = demo_options(upstream_url, port=port)
    return open_forwarder(route_table(options), options, store=store, on_event=on_event)


def client_path(turn: Turn) -> str:
    """Where the scripted agent sends the turn: its route's prefix, if it has one."""
    return turn.path if turn.route is None else f"/r/{turn.route}{turn.path}"


def upstream_request(turn: Turn) -> tuple[bytes, str]:
    """The body and path of the turn as the upstream receives it: rewritten by its route's mode
    the way the forwarder rewrites it (repaired first, then translated), else as the agent sent it."""
    body, path = turn.body, turn.path
    if turn.route is None:
        return body, path
    translate, repair = parse_mode(ROUTES[turn.route], f"demo route {turn.route}")
    if repair:
        # The profile depends only on the upstream's host; every demo upstream is on loopback.
        body, path = Repairing("http://127.0.0.1").request(body, path)
    if translate is not None:
        body, path = TransformFactory(translate)().request(body, path)
    return body, path


def demo_upstream(turns: list[Turn] = TURNS, interval: float = STREAM_INTERVAL, port: int = 0) -> MockUpstream:
    """A fake upstream that answers as the provider would: what the checker says the provider
    rejects gets the provider's 400 (the scripted turn's own error text where it is one of the
    demo's turns), anything else the turn's scripted answer, or a plain reply for a request the
    script does not know (a fixed or edited replay). So replaying a failing turn as recorded fails
    again, and only its fixed replay passes."""
    scripted = {_key(upstream_request(turn)[0]): turn for turn in turns}

    def answer(request: Received) -> Canned:
        turn = scripted.get(_key(request.body))
        refused = provider_refusal(request)
        if refused is not None:
            return canned(turn) if turn is not None and turn.status >= 400 else refused
        if turn is not None and turn.status < 400:
            return canned(turn, interval)
        return default_responder(request, interval=interval)

    return MockUpstream(responder=answer, port=port)


def credentials(dialect: Dialect | None) -> dict[str, str]:
    """The demo key, sent the way each provider's SDK sends it (the store must redact all of them)."""
    if dialect is Dialect.ANTHROPIC:
        return {"x-api-key": DEMO_API_KEY, "anthropic-version": "2023-06-01"}
    if dialect is Dialect.GEMINI:
        return {"x-goog-api-key": DEMO_API_KEY}
    return {"authorization": f"Bearer {DEMO_API_KEY}"}


def run_agent(base_url: str, turns: list[Turn] = TURNS, *, pause: float = 0.0,
              stop: threading.Event | None = None) -> list[int]:
    """Send every turn through the forwarder at `base_url`, one after the other; the statuses.

    `pause` spaces the turns out so a person watching the list sees them arrive."""
    statuses: list[int] = []
    stop = stop or threading.Event()
    with httpx.Client(base_url=base_url, timeout=30.0) as client:
        for turn in turns:
            if stop.wait(pause):
                break
            headers = {"content-type": "application/json", **credentials(from_path(turn.path))}
            path = client_path(turn)
            if turn.stream:
                with client.stream("POST", path, content=turn.body, headers=headers) as response:
                    for _ in response.iter_bytes():
                        pass
                    statuses.append(response.status_code)
            else:
                statuses.append(client.post(path, content=turn.body, headers=headers).status_code)
    return statuses
