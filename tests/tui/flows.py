"""Real flows for the TUI tests and the screenshot script: the payloads an agent sends, with the
defects the checker knows, saved through the real Store."""

from __future__ import annotations

from typing import Any

import orjson

from inspector.flow import Chunk, Flow, FlowState
from inspector.wire.canned import Call
from inspector.wire.dialects.openai_chat.mock import chat_completion, chat_stream
from inspector.store import Store

# 2025-12-01 09:30:00 UTC: every test flow starts from here, so times render the same everywhere.
T0 = 1764581400.0
NOW = T0 + 3600.0  # the fixed clock: the same day, so times show with milliseconds

WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Current weather.",
                                            "parameters": {"type": "object",
                                                           "properties": {"city": {"type": "string"}},
                                                           "required": ["city"]}}}
# Seed 000: a genai Schema sent as-is (OC-05 twice).
GENAI_TOOL = {"type": "function", "function": {"name": "scrape_webpage", "parameters": {
    "type": "OBJECT", "properties": {"url": {"type": "STRING"}}, "required": ["url"]}}}


def clean_request(model: str = "gpt-4o-mini") -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": [WEATHER]}


def defective_request() -> dict[str, Any]:
    """Upper-case schema types (OC-05 ×2) and a tool message without content (OC-17)."""
    return {"model": "gpt-4o-mini", "tools": [GENAI_TOOL], "messages": [
        {"role": "user", "content": "Summarise example.com"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "scrape_webpage", "arguments": "{\"url\": \"https://example.com\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1"},
    ]}


def sse(events: list[Any]) -> list[bytes]:
    return [b"data: " + (e.encode() if isinstance(e, str) else orjson.dumps(e)) + b"\n\n" for e in events]


def save_flow(
    store: Store,
    request: dict[str, Any],
    *,
    offset: float = 0.0,
    path: str = "/v1/chat/completions",
    response: dict[str, Any] | None = None,
    stream: list[bytes] | None = None,
    status: int = 200,
    error: str | None = None,
    replay_of: int | None = None,
    upstream: str = "http://127.0.0.1:9",
    notes: list[str] | None = None,
    route: str = "",
    method: str = "POST",
    headers: list[tuple[str, str]] | None = None,
) -> int:
    """Write one finished flow through the real store and wait until it is committed."""
    assert store.session_id is not None
    flow = Flow(
        id=store.next_flow_id(), session_id=store.session_id, started_at=T0 + offset, method=method, path=path,
        request_headers=headers if headers is not None else [("content-type", "application/json"),
                                                              ("authorization", "[redacted]")],
        request_body=orjson.dumps(request), upstream_url=upstream + path, status=status,
        replay_of=replay_of, notes=list(notes or ()), route=route,
    )
    if stream is not None:
        flow.streamed = True
        flow.response_headers = [("content-type", "text/event-stream")]
        flow.chunks = [Chunk(0.120 + 0.015 * n, data) for n, data in enumerate(stream)]
        flow.response_body = b"".join(stream)
        flow.ttfb_ms, flow.latency_ms = 120.0, 120.0 + 15.0 * len(stream)
    else:
        flow.response_headers = [("content-type", "application/json")]
        flow.response_body = orjson.dumps(response if response is not None else chat_completion("Sunny, 21 °C."))
        flow.ttfb_ms, flow.latency_ms = 310.0, 342.5
    flow.state = FlowState.ERROR if error else FlowState.COMPLETE
    flow.error = error
    store.save(flow)
    return flow.id


def populate(store: Store) -> dict[str, int]:
    """Two sessions: an earlier one (1 flow) and the current one (5 flows), ids 1..6."""
    store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
    ids = {"earlier": save_flow(store, clean_request(), offset=-600)}
    store.new_session("http://127.0.0.1:9", "http://127.0.0.1:8787")
    ids["clean"] = save_flow(store, clean_request(), offset=0)
    ids["defective"] = save_flow(store, defective_request(), offset=2.5,
                                 response=chat_completion(calls=[Call("scrape_webpage", "{\"url\": \"x\"}")]))
    ids["streamed"] = save_flow(store, clean_request("gpt-4.1"), offset=5,
                                stream=sse(chat_stream("It is sunny in Paris.", pieces=3)))
    ids["failed"] = save_flow(store, clean_request(), offset=7, status=502, error="upstream unreachable")
    ids["replay"] = save_flow(store, defective_request(), offset=9, replay_of=ids["defective"])
    return ids
