"""Hostile recorded bytes make spans, never an exception: what cannot be read is left out."""

from __future__ import annotations

import json

import pytest

from inspector.flow import Flow, FlowState
from inspector.formats.otlp_json import dumps, flows
from inspector.otlp.spans import TraceBuilder, options


def flow(path: str, request: bytes, response: bytes = b"", *, status: int | None = 200,
         state: FlowState = FlowState.COMPLETE, error: str | None = None, headers=()) -> Flow:
    return Flow(id=7, session_id=1, started_at=1_700_000_000.0, method="POST", path=path, request_body=request,
                request_headers=list(headers), upstream_url="http://127.0.0.1:1" + path, status=status,
                response_headers=[("content-type", "application/json")], response_body=response,
                latency_ms=5.0, state=state, error=error)


@pytest.mark.parametrize(("recorded", "names", "status"), [
    (flow("/mcp", json.dumps([1, "x", {"method": 3}, {"jsonrpc": "2.0", "id": True, "method": "tools/call",
                                                      "params": ["not", "an", "object"]}]).encode()),
     ["tools/call"], 0),
    (flow("/mcp", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                              "params": {"name": {"x": 1}, "_meta": {"traceparent": "00-zz-yy-01"}}}).encode(),
          json.dumps({"jsonrpc": "2.0", "id": 1, "error": {"code": {"deep": []}, "message": 5}}).encode()),
     ["tools/call"], 2),
    (flow("/v1/chat/completions", b'{"model": 5, "messages": "no"}', b"\xff\xfe not json", status=500),
     ["chat"], 2),
    (flow("/v1/chat/completions", b'{"model": "m", "messages": []}', b"", status=None, state=FlowState.ERROR,
          error="upstream unreachable", headers=[("traceparent", "not-a-traceparent")]),
     ["chat m"], 2),
    (flow("/v1/messages", b"[" * 100_000, b"{}"), ["chat"], 0),
    (flow("/not/an/api", b"\x00\x01", b"\x02"), ["POST /not/an/api"], 0),
    (flow("/mcp", json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                              "params": {"name": "t", "arguments": [1, {"x": None}]}}).encode(),
          json.dumps({"jsonrpc": "2.0", "id": 2, "result": "not an object"}).encode()),
     ["tools/call t"], 0),
])
@pytest.mark.parametrize("openinference", [False, True])
def test_hostile_flows_become_spans(recorded, names, status, openinference):
    spans = TraceBuilder(options(content=True, openinference=openinference)).spans([recorded])
    assert [(s.name, s.status.status_code.value) for s in spans] == [(name, status) for name in names]
    data = dumps(spans)
    llm = [s for s in spans if s.attributes.get("gen_ai.operation.name") in ("chat", "generate_content")]
    assert len(flows(data, "x")) == len(llm)


def test_a_translated_flow_names_the_provider_that_answered():
    from inspector.flow import Mode

    chat = flow("/v1/chat/completions", b'{"model": "claude-sonnet-4-6", "messages": [{"role": "user", "content": "hi"}]}',
                json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "model": "claude-sonnet-4-6",
                            "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"},
                                         "finish_reason": "stop"}]}).encode())
    chat.mode, chat.translate = Mode.TRANSLATE, "openai-chat:anthropic"
    chat.notes = ["dropped /messages/0/name: the Messages API has no field for it"]
    (span,) = TraceBuilder(options()).spans([chat])
    assert {k: span.attributes[k] for k in ("gen_ai.operation.name", "gen_ai.provider.name", "toolwire.translate",
                                            "toolwire.notes")} == {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic",
        "toolwire.translate": "openai-chat:anthropic",
        "toolwire.notes": ("dropped /messages/0/name: the Messages API has no field for it",)}
