"""OpenInference attributes, opt-in, on the same spans as the GenAI ones (Phoenix reads both): an
openai-SDK tool loop and a Claude call recorded through a real forwarder (conftest), their spans
built with and without the option, each attribute asserted."""

from __future__ import annotations

import json

from inspector.demo_script import GENAI_SCHEMA_TOOL
from inspector.otlp.spans import TraceBuilder, options
from inspector.store import Store

OI_PREFIXES = ("openinference.", "llm.", "input.", "output.", "tool.", "session.")


def spans_of(recorded, **chosen):
    with Store(recorded.path, read_only=True) as store:
        flows = [store.get(row.id) for row in store.rows()]
        builder = TraceBuilder(options(**chosen), get=store.get)
        return flows, builder.spans(flows)


def openinference(span) -> dict:
    return {k: v for k, v in span.attributes.items() if k.startswith(OI_PREFIXES)}


def test_off_by_default(recorded, monkeypatch):
    monkeypatch.delenv("TOOLWIRE_OTLP_OPENINFERENCE", raising=False)
    _, spans = spans_of(recorded, content=True)
    assert [openinference(span) for span in spans] == [{}] * 4


def test_the_llm_and_tool_spans_carry_openinference_attributes_with_content(recorded):
    flows, spans = spans_of(recorded, content=True, openinference=True)
    first, tool, second, claude = spans
    assert [s.name for s in spans] == ["chat gpt-4o-mini", "execute_tool scrape_webpage", "chat gpt-4o-mini",
                                       "chat claude-sonnet-4-6"]
    schema = json.dumps(GENAI_SCHEMA_TOOL, ensure_ascii=False)
    usage = json.loads(flows[0].response_body)["usage"]
    assert openinference(first) == {
        "openinference.span.kind": "LLM", "session.id": "toolwire-session-1", "llm.provider": "openai",
        "llm.system": "openai", "llm.model_name": "gpt-4o-mini",
        "llm.token_count.prompt": usage["prompt_tokens"], "llm.token_count.completion": usage["completion_tokens"],
        "llm.token_count.total": usage["prompt_tokens"] + usage["completion_tokens"],
        "llm.invocation_parameters": "{}",
        "input.value": flows[0].request_body.decode(), "input.mime_type": "application/json",
        "output.value": flows[0].response_body.decode(), "output.mime_type": "application/json",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "Summarise https://example.org",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "scrape_webpage",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"url": "https://example.org"}',
        "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_scrape_1",
        "llm.tools.0.tool.json_schema": schema}
    assert openinference(tool) == {
        "openinference.span.kind": "TOOL", "tool.name": "scrape_webpage", "session.id": "toolwire-session-1",
        "input.value": '{"url": "https://example.org"}', "input.mime_type": "application/json",
        "output.value": "Example Domain"}
    second_attrs = openinference(second)
    assert {k: v for k, v in second_attrs.items() if k.startswith("llm.input_messages.")} == {
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "Summarise https://example.org",
        "llm.input_messages.1.message.role": "assistant",
        "llm.input_messages.1.message.tool_calls.0.tool_call.function.name": "scrape_webpage",
        "llm.input_messages.1.message.tool_calls.0.tool_call.function.arguments": '{"url": "https://example.org"}',
        "llm.input_messages.1.message.tool_calls.0.tool_call.id": "call_scrape_1",
        "llm.input_messages.2.message.role": "tool", "llm.input_messages.2.message.content": "Example Domain",
        "llm.input_messages.2.message.tool_call_id": "call_scrape_1"}
    assert {k: v for k, v in second_attrs.items() if k.startswith("llm.output_messages.")} == {
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "It is a test page."}
    claude_attrs = openinference(claude)
    claude_usage = json.loads(flows[2].response_body)["usage"]
    assert {k: v for k, v in claude_attrs.items() if not k.startswith(("input.", "output.", "llm.input_messages",
                                                                        "llm.output_messages"))} == {
        "openinference.span.kind": "LLM", "session.id": "toolwire-session-1", "llm.provider": "anthropic",
        "llm.system": "anthropic", "llm.model_name": json.loads(flows[2].response_body)["model"],
        "llm.token_count.prompt": claude_usage["input_tokens"],
        "llm.token_count.completion": claude_usage["output_tokens"],
        "llm.token_count.total": claude_usage["input_tokens"] + claude_usage["output_tokens"],
        "llm.invocation_parameters": '{"max_tokens": 16}'}


def test_without_content_no_message_body_or_argument_travels(recorded, monkeypatch):
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    _, spans = spans_of(recorded, openinference=True)
    assert [sorted(openinference(span)) for span in spans] == [
        ["llm.invocation_parameters", "llm.model_name", "llm.provider", "llm.system", "llm.token_count.completion",
         "llm.token_count.prompt", "llm.token_count.total", "openinference.span.kind", "session.id"],
        ["openinference.span.kind", "session.id", "tool.name"],
        ["llm.invocation_parameters", "llm.model_name", "llm.provider", "llm.system", "llm.token_count.completion",
         "llm.token_count.prompt", "llm.token_count.total", "openinference.span.kind", "session.id"],
        ["llm.invocation_parameters", "llm.model_name", "llm.provider", "llm.system", "llm.token_count.completion",
         "llm.token_count.prompt", "llm.token_count.total", "openinference.span.kind", "session.id"]]


def test_the_variable_turns_it_on(recorded, monkeypatch):
    monkeypatch.setenv("TOOLWIRE_OTLP_OPENINFERENCE", "true")
    _, spans = spans_of(recorded)
    assert [span.attributes.get("openinference.span.kind") for span in spans] == ["LLM", "TOOL", "LLM", "LLM"]
