"""The built-in demo: a fake upstream that answers the scripted turns, and the scripted agent
that sends them through the forwarder. No API key, no network: everything stays on loopback."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx
import orjson
import platformdirs

from .demo_script import DEMO_API_KEY, TURNS, Turn
from .mock import Canned, MockUpstream, Received, default_responder, json_response, provider_refusal, sse_response
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


def demo_upstream(turns: list[Turn] = TURNS, interval: float = STREAM_INTERVAL, port: int = 0) -> MockUpstream:
    """A fake upstream that answers as the provider would: what the checker says the provider
    rejects gets the provider's 400 (the scripted turn's own error text where it is one of the
    demo's turns), anything else the turn's scripted answer, or a plain reply for a request the
    script does not know (a fixed or edited replay). So replaying a failing turn as recorded fails
    again, and only its fixed replay passes."""
    scripted = {_key(turn.body): turn for turn in turns}

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
            if turn.stream:
                with client.stream("POST", turn.path, content=turn.body, headers=headers) as response:
                    for _ in response.iter_bytes():
                        pass
                    statuses.append(response.status_code)
            else:
                statuses.append(client.post(turn.path, content=turn.body, headers=headers).status_code)
    return statuses
