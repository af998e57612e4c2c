"""Recorded sockets for the tests: a Responses session (a prewarm, a question, a tool result) saved
in a real store through its public write API, as the relay records one."""

from __future__ import annotations

from typing import Any

import orjson

from inspector.flow import Flow, FlowState, frame_chunk
from inspector.store import Store
from inspector.wire.frames import Direction
from tests.wire.test_responses_socket import _RESULT, session

STARTED = 1_700_000_000.0


def seeded() -> list[list[Any]]:
    """The session with its tool result answering a call no turn made."""
    entries = session()
    entries[9][1]["input"] = [{**_RESULT, "call_id": "call_unknown"}]
    return entries


def record_socket(store: Store, entries: list[list[Any]], *, path: str = "/v1/responses",
                  upstream: str = "https://api.openai.com", gap: float = 0.25) -> Flow:
    """Save a finished socket whose frames are `entries` ([direction, event]), `gap` seconds apart."""
    flow = Flow(id=store.next_flow_id(), session_id=store.session_id or 0, started_at=STARTED, method="GET",
                path=path, websocket=True, upstream_url=upstream + path, status=101,
                request_headers=[("openai-beta", "responses_websockets=2026-02-06")])
    for number, (direction, event) in enumerate(entries):
        payload = event if isinstance(event, bytes) else orjson.dumps(event)
        flow.chunks.append(frame_chunk(gap * (number + 1), Direction(direction), not isinstance(event, bytes),
                                       payload))
    flow.response_body = b"".join(chunk.data for chunk in flow.chunks)
    flow.state, flow.latency_ms = FlowState.COMPLETE, gap * (len(entries) + 1) * 1000
    store.save(flow)
    return flow
