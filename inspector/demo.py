"""The built-in demo: a fake upstream that answers the scripted turns, and the scripted agent
that sends them through the forwarder. No API key, no network: everything stays on loopback."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx
import platformdirs

from .demo_script import DEMO_API_KEY, TURNS, Turn
from .mock import Canned, MockUpstream, json_response, sse_response
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


def demo_upstream(turns: list[Turn] = TURNS, interval: float = STREAM_INTERVAL) -> MockUpstream:
    """A fake upstream scripted with the answer of every turn, in order (the agent is sequential)."""
    return MockUpstream([canned(turn, interval) for turn in turns])


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
