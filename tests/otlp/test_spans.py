"""The mapping's own cases through a real forwarder: a client's W3C traceparent and an MCP request's
params._meta trace context are honoured, a replay links to its origin, and a trace written by another
GenAI instrumentation (messages in gen_ai.* attributes, or the older gen_ai.content.* events) opens
with its findings."""

from __future__ import annotations

import json

import httpx
import openai
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from inspector.analysis import analyse
from inspector.demo_script import GENAI_SCHEMA_TOOL
from inspector.flow import FlowState
from inspector.formats.registry import load
from inspector.mock import MockUpstream, json_response
from inspector.formats.otlp_json import dumps
from inspector.otlp.spans import TraceBuilder, options, span_id
from inspector.proxy import Forwarder
from inspector.proxy.forwarder import replay_marker
from inspector.store import Store
from inspector.wire.dialects.openai_chat.mock import chat_completion
from inspector.proxy.options import Options
from tests.e2e.conftest import Completed

CLIENT_TRACE = "0af7651916cd43dd8448eb211c80319c"
CLIENT_SPAN = "b7ad6b7169203331"
TRACEPARENT = f"00-{CLIENT_TRACE}-{CLIENT_SPAN}-01"
MCP_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
MCP_SPAN = "00f067aa0ba902b7"


def record(tmp_path, send) -> list:
    with MockUpstream() as mock, Store(tmp_path / "flows.sqlite3") as store:
        store.new_session(mock.base_url, "127.0.0.1:0")
        completed = Completed()
        forwarder = Forwarder(Options(mock.base_url, port=0), store=store, on_event=completed)
        forwarder.start()
        try:
            count = send(mock, forwarder)
            completed.wait(count)
        finally:
            forwarder.stop()
        flows = [store.get(row.id) for row in store.rows()]
        started = store.sessions()[0].started_at
    return flows, started


def test_a_client_traceparent_and_mcp_meta_trace_context_make_the_spans_children_of_the_clients(tmp_path):
    def send(mock, forwarder):
        mock.push(json_response(chat_completion("hi")),
                  json_response({"jsonrpc": "2.0", "id": 1, "result": {"content": [], "isError": False}}))
        with openai.OpenAI(api_key="sk-traceparent-test", base_url=f"{forwarder.base_url}/v1", max_retries=0) as client:
            client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}],
                                           extra_headers={"traceparent": TRACEPARENT})
        httpx.post(f"{forwarder.base_url}/mcp", json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "lookup", "arguments": {}, "_meta": {"traceparent": f"00-{MCP_TRACE}-{MCP_SPAN}-01"}}})
        return 2

    flows, started = record(tmp_path, send)
    spans = TraceBuilder(options(), session_started=lambda _: started).spans(flows)
    assert [(s.name, f"{s.context.trace_id:032x}", f"{s.parent.span_id:016x}", s.parent.is_remote) for s in spans] == [
        ("chat gpt-4o-mini", CLIENT_TRACE, CLIENT_SPAN, True), ("tools/call lookup", MCP_TRACE, MCP_SPAN, True)]


def test_a_replay_links_to_its_origins_span(tmp_path):
    def send(mock, forwarder):
        mock.push(json_response(chat_completion("one")), json_response(chat_completion("two")))
        body = b'{"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}'
        httpx.post(f"{forwarder.base_url}/v1/chat/completions", content=body)
        httpx.post(f"{forwarder.base_url}/v1/chat/completions", content=body, headers=dict(replay_marker(1)))
        return 2

    flows, started = record(tmp_path, send)
    assert [f.replay_of for f in flows] == [None, 1]
    origin, replay = TraceBuilder(options(), get={f.id: f for f in flows}.get,
                                  session_started=lambda _: started).spans(flows)
    (link,) = replay.links
    assert (link.context.trace_id, link.context.span_id, dict(link.attributes)) == (
        origin.context.trace_id, span_id(1), {"toolwire.link": "replay_of", "toolwire.flow.id": 1})


def foreign_trace(tmp_path, attributes: dict, events: list[tuple[str, dict]] = ()):
    """A trace file another instrumentation wrote: one chat span with these attributes and events."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    span = provider.get_tracer("some.genai.instrumentation").start_span("chat gpt-4o", attributes=attributes,
                                                                          start_time=1_700_000_000_000_000_000)
    for name, values in events:
        span.add_event(name, values)
    span.end(end_time=1_700_000_000_250_000_000)
    path = tmp_path / "foreign.json"
    path.write_bytes(dumps(exporter.get_finished_spans()))
    return path


def test_a_trace_with_semconv_messages_opens_as_a_rebuilt_flow_with_its_findings(tmp_path):
    messages = [{"role": "user", "parts": [{"type": "text", "content": "Summarise it"}]},
                {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "scrape_webpage",
                                                 "arguments": {"url": "https://example.org"}}]},
                {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "Example"}]}]
    output = [{"role": "assistant", "parts": [{"type": "text", "content": "A test page."}], "finish_reason": "stop"}]
    path = foreign_trace(tmp_path, {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o",
        "gen_ai.input.messages": json.dumps(messages), "gen_ai.output.messages": json.dumps(output),
        "gen_ai.tool.definitions": json.dumps([GENAI_SCHEMA_TOOL]), "gen_ai.response.id": "chatcmpl-9",
        "server.address": "api.openai.com"})
    (turn,) = load(path)
    flow = turn.flow
    assert json.loads(flow.request_body) == {"model": "gpt-4o", "messages": [
        {"role": "user", "content": "Summarise it"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "scrape_webpage",
                                                          "arguments": '{"url": "https://example.org"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Example"}], "tools": [GENAI_SCHEMA_TOOL]}
    assert (flow.started_at, flow.latency_ms, flow.status, flow.state, flow.request_headers, flow.upstream_url) == (
        1_700_000_000.0, 250.0, None, FlowState.COMPLETE, [], "https://api.openai.com/v1/chat/completions")
    assert flow.notes == ["read from an OTLP span: the bodies are rebuilt from its gen_ai message attributes; the "
                          "span recorded no raw bytes, no headers and no stream chunks"]
    rules = [(v.rule, v.pointer) for v in analyse(flow).violations]
    assert ("OC-05", "/tools/0/function/parameters/type") in rules


def test_a_trace_with_the_older_prompt_events_opens(tmp_path):
    prompt = [{"role": "user", "content": "hi"}]
    path = foreign_trace(tmp_path, {"gen_ai.operation.name": "chat", "gen_ai.system": "openai",
                                    "gen_ai.request.model": "gpt-4o"},
                         [("gen_ai.content.prompt", {"gen_ai.prompt": json.dumps(prompt)}),
                          ("gen_ai.content.completion",
                           {"gen_ai.completion": json.dumps([{"role": "assistant", "content": "hello"}])})])
    (turn,) = load(path)
    assert json.loads(turn.flow.request_body) == {"model": "gpt-4o", "messages": prompt}
    assert json.loads(turn.flow.response_body)["choices"][0]["message"] == {"role": "assistant", "content": "hello"}


def test_a_streamed_answer_gives_its_time_to_first_chunk_and_its_reassembled_facts(tmp_path):
    from inspector.mock import sse_response
    from inspector.wire.dialects.openai_chat.mock import chat_stream

    def send(mock, forwarder):
        mock.push(sse_response(chat_stream("Hello, streamed world.")))
        with openai.OpenAI(api_key="sk-stream-test", base_url=f"{forwarder.base_url}/v1", max_retries=0) as client:
            stream = client.chat.completions.create(model="gpt-4o-mini", stream=True,
                                                    messages=[{"role": "user", "content": "hi"}])
            assert "".join(c.choices[0].delta.content or "" for c in stream) == "Hello, streamed world."
        return 1

    (flow,), started = record(tmp_path, send)
    (span,) = TraceBuilder(options(), session_started=lambda _: started).spans([flow])
    assert flow.streamed and flow.chunks
    assert {k: span.attributes[k] for k in ("gen_ai.response.time_to_first_chunk", "gen_ai.request.stream",
                                            "gen_ai.response.finish_reasons")} == {
        "gen_ai.response.time_to_first_chunk": round(flow.chunks[0].t, 6), "gen_ai.request.stream": True,
        "gen_ai.response.finish_reasons": ("stop",)}
