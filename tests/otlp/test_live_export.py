"""Live export end to end: `record --otlp-endpoint` (a real subprocess) between the official SDKs and
fake upstreams on loopback, and a real OTLP/HTTP receiver that decodes what arrives. An openai-SDK
tool-calling loop, an anthropic-SDK call and an MCP tools/call give the spans the GenAI conventions
name, with the stored flows' own times, parents and findings. The same over OTLP/gRPC (the SDK's
gRPC exporter into a real grpcio server) where the otel-grpc extra is installed (`-m grpc`)."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys

import anthropic
import openai
import pytest
from mcp import Client

from inspector.analysis import analyse
from inspector.demo_script import GENAI_SCHEMA_TOOL
from inspector.mock import MockUpstream, json_response
from inspector.otlp.spans import FINDING_EVENT, session_trace_id, span_id
from inspector.store import Store
from inspector.wire.canned import Call
from inspector.wire.dialects.openai_chat.mock import chat_completion
from inspector.proxy.options import Options, OtlpOptions

from tests.e2e.test_mcp_e2e import TwoServers
from .receiver import GrpcReceiver, Receiver, span_attributes

QUESTION = [{"role": "user", "content": "Summarise https://example.org"}]
CALL = Call("scrape_webpage", '{"url": "https://example.org"}', "call_scrape_1")

# grpcio is a large native wheel: the gRPC case needs the otel-grpc extra, and says so when skipped.
GRPC = pytest.param("grpc", marks=[pytest.mark.grpc, pytest.mark.skipif(
    importlib.util.find_spec("opentelemetry.exporter.otlp.proto.grpc") is None,
    reason="OTLP/gRPC needs the otel-grpc extra: pip install -e '.[test,otel-grpc]'")])


@pytest.fixture
def mcp_upstream():
    servers = TwoServers()
    servers.thread.start()
    yield f"http://127.0.0.1:{servers.thread.port}"
    servers.thread.stop()


def start_record(tmp_path, *argv: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen, dict[str, str]]:
    """`record` with routes (`env`: variables besides these); the client URL of each route, read from its stderr."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "OTEL_EXPORTER_OTLP_TIMEOUT": "2", **(env or {})}
    proc = subprocess.Popen([sys.executable, "-m", "inspector", "record", "--port", "0", *argv],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    routes: dict[str, str] = {}
    count = None
    for line in proc.stderr:
        if line.startswith("forwarding "):
            count = int(line.split()[1])
        elif line.startswith("route "):
            words = line.split()
            routes[words[1]] = words[2]
        if count is not None and len(routes) == count:
            return proc, routes
    raise AssertionError(f"record exited {proc.wait()}")


async def drive(routes: dict[str, str]) -> None:
    """Through `record`'s routes: an openai-SDK tool loop with the demo's upper-case schema on `oa`
    (its upstream has the tool call and the final answer queued), an anthropic-SDK call on `an`, an
    MCP tools/call on `files`."""
    chat = openai.OpenAI(api_key="sk-otlp-live-test-1234", base_url=f"{routes['oa']}/v1", max_retries=0)
    first = chat.chat.completions.create(model="gpt-4o-mini", messages=QUESTION, tools=[GENAI_SCHEMA_TOOL])
    (call,) = first.choices[0].message.tool_calls
    history = [*QUESTION, first.choices[0].message.model_dump(exclude_none=True),
               {"role": "tool", "tool_call_id": call.id, "content": "Example Domain"}]
    chat.chat.completions.create(model="gpt-4o-mini", messages=history, tools=[GENAI_SCHEMA_TOOL])
    claude = anthropic.Anthropic(api_key="sk-ant-otlp-live-test", base_url=routes["an"], max_retries=0)
    claude.messages.create(model="claude-sonnet-4-6", max_tokens=16, messages=[{"role": "user", "content": "hi"}])
    async with Client(f"{routes['files']}/mcp") as client:
        await client.call_tool("lookup", {"query": "otlp"})


def stop(proc: subprocess.Popen) -> str:
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    return err


def ns(seconds: float) -> int:
    return int(round(seconds * 1e9))


@pytest.mark.parametrize("protocol", ["http/protobuf", GRPC])
async def test_record_exports_the_genai_spans_of_a_tool_loop_a_claude_call_and_an_mcp_call(tmp_path, mcp_upstream,
                                                                                           protocol):
    db = tmp_path / "flows.sqlite3"
    with GrpcReceiver() if protocol == "grpc" else Receiver() as receiver, MockUpstream() as oa, MockUpstream() as an:
        oa.push(json_response(chat_completion(None, [CALL])), json_response(chat_completion("It is a test page.")))
        proc, routes = start_record(tmp_path, "--store", str(db), "--route", f"oa={oa.base_url}",
                                    "--route", f"an={an.base_url}", "--route", f"files={mcp_upstream}/alpha",
                                    "--otlp-endpoint", receiver.url, "--capture-content",
                                    env={"OTEL_EXPORTER_OTLP_PROTOCOL": protocol})
        try:
            await drive(routes)
        finally:
            err = stop(proc)
    with Store(db, read_only=True) as store:
        flows = [store.get(row.id) for row in store.rows()]
        (session,) = store.sessions()
    spans = receiver.spans()
    by_flow: dict[int, list] = {}
    for span in spans:
        by_flow.setdefault(span_attributes(span)["toolwire.flow.id"], []).append(span)
    chat_flows = [f for f in flows if f.route == "oa"]
    (claude_flow,) = [f for f in flows if f.route == "an"]
    mcp_flows = [f for f in flows if f.route == "files"]
    methods = [json.loads(f.request_body).get("method") if f.request_body else None for f in mcp_flows]
    assert sorted(methods) == ["server/discover", "tools/call", "tools/list"]  # the 2.x client lists before it calls

    # Names: one span per LLM call, one per MCP request, and the tool the model asked for.
    names = sorted(span.name for span in spans)
    assert names == ["chat claude-sonnet-4-6", "chat gpt-4o-mini", "chat gpt-4o-mini", "execute_tool scrape_webpage",
                     "server/discover", "tools/call lookup", "tools/list"]
    assert f"otlp: {len(spans)} spans exported, 0 failed, 0 flows dropped" in err

    # One trace per session; every flow's span is a root of it, with the flow's id as its span id.
    trace = session_trace_id(session.id, session.started_at).to_bytes(16, "big")
    assert {span.trace_id for span in spans} == {trace}
    for flow in flows:
        for span in by_flow.get(flow.id, []):
            if span.name.startswith("execute_tool"):
                continue
            assert span.parent_span_id == b""
            assert span.start_time_unix_nano == ns(flow.started_at)
            assert span.end_time_unix_nano == ns(flow.started_at + flow.latency_ms / 1000.0)
    first_flow, second_flow = chat_flows
    chat_span = next(s for s in by_flow[first_flow.id] if s.name == "chat gpt-4o-mini")
    assert chat_span.span_id == span_id(first_flow.id).to_bytes(8, "big")

    # The tool ran from the end of the response that asked for it to the request that brought its result.
    (tool_span,) = [s for s in spans if s.name == "execute_tool scrape_webpage"]
    assert tool_span.parent_span_id == chat_span.span_id
    assert tool_span.start_time_unix_nano == ns(first_flow.started_at + first_flow.latency_ms / 1000.0)
    assert tool_span.end_time_unix_nano == ns(second_flow.started_at)
    assert span_attributes(tool_span) == {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "scrape_webpage",
        "gen_ai.tool.call.id": "call_scrape_1", "gen_ai.tool.type": "function", "toolwire.flow.id": first_flow.id,
        "toolwire.result_flow.id": second_flow.id, "gen_ai.tool.call.result": "Example Domain"}

    # The LLM call's attributes, and its findings as events (the demo's upper-case genai schema).
    attrs = span_attributes(chat_span)
    port = int(oa.base_url.rsplit(":", 1)[1])
    content = {k: attrs.pop(k) for k in ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.definitions",
                                         "toolwire.request.body", "toolwire.response.body")}
    assert (content["toolwire.request.body"].encode(), content["toolwire.response.body"].encode()) == (
        first_flow.request_body, first_flow.response_body)
    assert attrs == {
        "toolwire.flow.id": first_flow.id, "toolwire.session.id": session.id, "toolwire.mode": "passthrough",
        "toolwire.path": "/v1/chat/completions",
        "toolwire.flow.command": f"toolwire-inspect open {db.resolve()} --flow {first_flow.id}",
        "server.address": "127.0.0.1", "server.port": port, "http.response.status_code": 200, "toolwire.route": "oa",
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.system": "openai",
        "gen_ai.request.model": "gpt-4o-mini", "gen_ai.response.finish_reasons": ["tool_calls"],
        "gen_ai.response.id": json.loads(first_flow.response_body)["id"], "gen_ai.response.model": "gpt-4o-mini",
        **usage(first_flow)}
    assert json.loads(content["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": "Summarise https://example.org"}]}]
    assert json.loads(content["gen_ai.output.messages"]) == [
        {"role": "assistant", "finish_reason": "tool_calls",
         "parts": [{"type": "tool_call", "id": "call_scrape_1", "name": "scrape_webpage",
                    "arguments": {"url": "https://example.org"}}]}]
    assert json.loads(content["gen_ai.tool.definitions"]) == [GENAI_SCHEMA_TOOL]
    findings = [(v.rule, v.severity.value, v.pointer, v.where, v.message, v.why) for v in analyse(first_flow).violations]
    assert findings and {f[0] for f in findings} >= {"OC-05"}
    assert [(e.name, tuple(span_attributes(e)[k] for k in ("toolwire.rule_id", "toolwire.severity", "toolwire.pointer",
                                                            "toolwire.where", "toolwire.message", "toolwire.effect")),
             e.time_unix_nano) for e in chat_span.events] == [
        (FINDING_EVENT, finding, chat_span.end_time_unix_nano) for finding in findings]

    (claude_span,) = by_flow[claude_flow.id]
    claude_attrs = span_attributes(claude_span)
    assert (claude_span.name, claude_span.kind, claude_attrs["gen_ai.provider.name"],
            claude_attrs["gen_ai.request.model"], claude_attrs["gen_ai.request.max_tokens"]) == (
        "chat claude-sonnet-4-6", 3, "anthropic", "claude-sonnet-4-6", 16)

    (mcp_call,) = [s for s in spans if s.name == "tools/call lookup"]
    mcp_attrs = span_attributes(mcp_call)
    call_flow = mcp_flows[methods.index("tools/call")]
    result = json.loads(mcp_attrs.pop("gen_ai.tool.call.result"))
    assert mcp_attrs == {
        "toolwire.flow.id": call_flow.id, "toolwire.session.id": session.id, "toolwire.mode": "passthrough",
        "toolwire.path": "/mcp",
        "toolwire.flow.command": f"toolwire-inspect open {db.resolve()} --flow {call_flow.id}",
        "server.address": "127.0.0.1", "server.port": int(mcp_upstream.rsplit(":", 1)[1]),
        "http.response.status_code": 200, "toolwire.route": "files",
        "mcp.method.name": "tools/call", "mcp.protocol.version": "2026-07-28", "jsonrpc.request.id": "2",
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup",
        "gen_ai.tool.call.arguments": '{"query": "otlp"}'}
    assert result["structuredContent"] == {"result": "alpha: otlp"}

    # The GenAI metrics went with the spans; each export carries the cumulative histograms, so the last says all.
    last = {metric.name: metric for metric in receiver.metrics()}
    assert {name: sorted((span_attributes(p)["gen_ai.request.model"], span_attributes(p).get("gen_ai.token.type"),
                          p.count) for p in metric.histogram.data_points) for name, metric in last.items()} == {
        "gen_ai.client.operation.duration": [("claude-sonnet-4-6", None, 1), ("gpt-4o-mini", None, 2)],
        "gen_ai.client.token.usage": [("claude-sonnet-4-6", "input", 1), ("claude-sonnet-4-6", "output", 1),
                                      ("gpt-4o-mini", "input", 2), ("gpt-4o-mini", "output", 2)]}

    # Credentials never travel, whatever the content setting.
    wire = b"".join(request.SerializeToString() for request in [*receiver.requests, *receiver.metric_requests])
    assert b"sk-otlp-live-test-1234" not in wire and b"sk-ant-otlp-live-test" not in wire


def usage(flow) -> dict[str, int]:
    body = json.loads(flow.response_body)["usage"]
    return {"gen_ai.usage.input_tokens": body["prompt_tokens"], "gen_ai.usage.output_tokens": body["completion_tokens"]}


def test_the_tuis_forwarder_process_exports_live_too(tmp_path):
    """The TUI's forwarder runs in a child process (inspector.child): `--otlp-endpoint` reaches it."""
    from inspector.child import ForwarderProcess

    with Receiver() as receiver, MockUpstream() as upstream:
        upstream.push(json_response(chat_completion("hello")))
        child = ForwarderProcess.start(Options(upstream.base_url, store=str(tmp_path / "flows.sqlite3"), port=0, otlp=OtlpOptions(receiver.url)))
        try:
            with openai.OpenAI(api_key="sk-child-otlp-test", base_url=f"{child.client_url}/v1", max_retries=0) as c:
                c.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
        finally:
            child.stop()
        spans = receiver.spans()
    assert [(s.name, span_attributes(s)["toolwire.flow.id"], "gen_ai.input.messages" in span_attributes(s))
            for s in spans] == [("chat gpt-4o-mini", 1, False)]


async def test_mcp_stdio_exports_live_too(tmp_path):
    """An MCP server over stdio through `mcp-stdio --otlp-endpoint`: its tools/call is a span."""
    from pathlib import Path

    from mcp import StdioServerParameters

    root = Path(__file__).resolve().parents[2]
    with Receiver() as receiver:
        stdio = StdioServerParameters(
            command=sys.executable, cwd=str(root), env={**os.environ, "PYTHONPATH": str(root)},
            args=["-m", "inspector", "mcp-stdio", "--store", str(tmp_path / "flows.sqlite3"), "--name", "beta",
                  "--otlp-endpoint", receiver.url, "--", sys.executable, "-m", "tests.mcp_servers", "sdk", "beta"])
        async with Client(stdio) as client:
            await client.call_tool("lookup", {"query": "stdio"})
        receiver.wait(1)
        spans = receiver.spans()
    (call,) = [s for s in spans if s.name == "tools/call lookup"]
    attrs = span_attributes(call)
    assert (attrs["mcp.method.name"], attrs["gen_ai.tool.name"], attrs["server.address"], attrs["toolwire.path"]) == (
        "tools/call", "lookup", "beta", "stdio:beta")
