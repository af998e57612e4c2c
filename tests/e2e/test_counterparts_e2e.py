"""Counterparts of issue 18 end to end: each official SDK states a field in its own dialect, the real
forwarder in translate mode sends it to a fake upstream of another dialect in that dialect's field,
and what comes back reaches the SDK as its own dialect says it. Every upstream request passes the
upstream dialect's checker."""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import orjson
import pytest

from inspector.wire.dialect import Dialect

from .test_translate_e2e import Rig, _no_errors, chat_upstream, responses_upstream, rig  # noqa: F401  (rig: the fixture)


def anthropic_upstream(payload: dict[str, Any]) -> tuple[str, Any]:
    """Answers one call to the first tool it was given, under the name it received."""
    return "json", {"id": "msg_e2e", "type": "message", "role": "assistant", "model": payload["model"],
                    "content": [{"type": "tool_use", "id": "toolu_e2e", "name": payload["tools"][0]["name"],
                                 "input": {"tags": ["a"]}}],
                    "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 12, "output_tokens": 9}}


def gemini_upstream(payload: dict[str, Any]) -> tuple[str, Any]:
    name = payload["tools"][0]["functionDeclarations"][0]["name"]
    return "json", {"candidates": [{"index": 0, "finishReason": "STOP", "content": {"role": "model", "parts": [
        {"functionCall": {"name": name, "args": {"tags": ["a", "b"]}}}]}}],
        "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 9, "totalTokenCount": 21},
        "modelVersion": payload.get("model", "gemini-2.5-flash")}


def _notes(rig: Rig, count: int) -> list[str]:
    return [note for flow in rig.flows(count) for note in flow.notes]


# --- Responses namespace tools (Codex's MCP tools) ---------------------------------------------------

NAMESPACE = {"type": "namespace", "name": "crm", "description": "The CRM's MCP server", "tools": [
    {"type": "function", "name": "lookup", "description": "Find a customer", "strict": False,
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]}


@pytest.mark.parametrize("rig", [("openai-responses:openai-chat", chat_upstream)], indirect=True)
def test_openai_responses_namespace_tools_through_a_chat_upstream(rig: Rig) -> None:
    client = openai.OpenAI(base_url=f"{rig.forwarder.base_url}/v1", api_key="sk-test-namespace", max_retries=0)
    answer = client.responses.create(model="gpt-5", input="Customers in Paris and Oslo?", tools=[NAMESPACE])
    calls = [item for item in answer.output if item.type == "function_call"]
    assert [(c.namespace, c.name, c.call_id, c.arguments) for c in calls] == [
        ("crm", "lookup", "call_p1", '{"city":"Paris"}'), ("crm", "lookup", "call_p2", '{"city":"Oslo"}')]
    with client.responses.stream(model="gpt-5", input="Customers in Paris and Oslo?", tools=[NAMESPACE]) as stream:
        final = stream.get_final_response()
    assert [(c.namespace, c.name) for c in final.output if c.type == "function_call"] == [("crm", "lookup")] * 2
    # The next turn replays the calls under their namespace; the upstream sees the same flat name.
    history = [{"role": "user", "content": "Customers in Paris and Oslo?"},
               *(c.model_dump(exclude_none=True) for c in calls),
               *({"type": "function_call_output", "call_id": c.call_id, "output": "3 customers"} for c in calls)]
    client.responses.create(model="gpt-5", input=history, tools=[NAMESPACE])
    client.close()
    assert [payload["tools"][0]["function"]["name"] for _, payload in rig.upstream.received] == ["crm__lookup"] * 3
    replayed = rig.upstream.received[2][1]["messages"][1]["tool_calls"]
    assert [c["function"]["name"] for c in replayed] == ["crm__lookup"] * 2
    for _, payload in rig.upstream.received:
        _no_errors(payload, Dialect.OPENAI_CHAT)
    assert not any("built-in" in note for note in _notes(rig, 3))


# --- thinking, efforts and the end user -------------------------------------------------------------

@pytest.mark.parametrize("rig", [("anthropic:openai-chat", chat_upstream)], indirect=True)
def test_anthropic_thinking_and_user_reach_a_chat_upstream(rig: Rig) -> None:
    client = anthropic.Anthropic(base_url=rig.forwarder.base_url, api_key="sk-ant-test-thinking", max_retries=0)
    tools = [{"name": "get_weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]
    message = client.messages.create(model="o3", max_tokens=8000, tools=tools, metadata={"user_id": "user-7"},
                                     thinking={"type": "enabled", "budget_tokens": 3000},
                                     messages=[{"role": "user", "content": "Weather in Paris and Oslo?"}])
    client.close()
    assert [(b.name, b.input) for b in message.content if b.type == "tool_use"] == [
        ("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})]
    (path, sent), = rig.upstream.received
    assert (path, sent["reasoning_effort"], sent["user"]) == ("/v1/chat/completions", "medium", "user-7")
    _no_errors(sent, Dialect.OPENAI_CHAT)
    assert "converted /thinking/budget_tokens -> /reasoning_effort: a thinking budget of 3000 tokens is sent as the " \
           "effort 'medium' (the table's 8192; at most 2048 is low, at most 8192 medium, more is high)" in _notes(rig, 1)


@pytest.mark.parametrize("rig", [("openai-chat:anthropic", anthropic_upstream)], indirect=True)
def test_openai_effort_user_and_a_genai_schema_reach_an_anthropic_upstream(rig: Rig) -> None:
    client = openai.OpenAI(base_url=f"{rig.forwarder.base_url}/v1", api_key="sk-test-effort", max_retries=0)
    genai_schema = {"type": "OBJECT", "properties": {"tags": {"type": "ARRAY", "items": {"type": "STRING"}}}}
    answer = client.chat.completions.create(
        model="claude-sonnet-4-5", reasoning_effort="high", user="user-8",
        messages=[{"role": "user", "content": "Tag it"}],
        tools=[{"type": "function", "function": {"name": "tag", "parameters": genai_schema}}])
    client.close()
    assert [(c.function.name, orjson.loads(c.function.arguments)) for c in answer.choices[0].message.tool_calls] == [
        ("tag", {"tags": ["a"]})]
    (path, sent), = rig.upstream.received
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 24576}
    assert (sent["max_tokens"], sent["metadata"]) == (24576 + 4096, {"user_id": "user-8"})
    assert sent["tools"] == [{"name": "tag", "input_schema": {"type": "object", "properties": {
        "tags": {"type": "array", "items": {"type": "string"}}}}}]
    _no_errors(sent, Dialect.ANTHROPIC)


@pytest.mark.parametrize("rig", [("openai-chat:openai-responses", responses_upstream)], indirect=True)
def test_openai_chat_user_and_cache_key_reach_a_responses_upstream(rig: Rig) -> None:
    client = openai.OpenAI(base_url=f"{rig.forwarder.base_url}/v1", api_key="sk-test-user", max_retries=0)
    client.chat.completions.create(model="gpt-5", reasoning_effort="low", user="user-9", prompt_cache_key="tenant-a",
                                   messages=[{"role": "user", "content": "Weather?"}],
                                   tools=[{"type": "function", "function": {"name": "get_weather", "parameters": {
                                       "type": "object", "properties": {"city": {"type": "string"}}}}}])
    client.close()
    (path, sent), = rig.upstream.received
    assert (sent["safety_identifier"], sent["prompt_cache_key"], sent["reasoning"]) == (
        "user-9", "tenant-a", {"effort": "low"})
    _no_errors(sent, Dialect.OPENAI_RESPONSES)


# --- Gemini: thinkingConfig -------------------------------------------------------------------------

@pytest.mark.parametrize("rig", [("openai-chat:gemini", gemini_upstream)], indirect=True)
def test_openai_effort_reaches_a_gemini_upstream_as_its_thinking_budget(rig: Rig) -> None:
    client = openai.OpenAI(base_url=f"{rig.forwarder.base_url}/v1", api_key="sk-test-gemini", max_retries=0)
    schema = {"type": "object", "properties": {"tags": {"type": "array", "items": {}}}}
    answer = client.chat.completions.create(model="gemini-2.5-flash", reasoning_effort="medium",
                                            messages=[{"role": "user", "content": "Tag it"}],
                                            tools=[{"type": "function", "function": {"name": "tag",
                                                                                     "parameters": schema}}])
    client.close()
    (call,) = answer.choices[0].message.tool_calls
    assert (call.function.name, orjson.loads(call.function.arguments)) == ("tag", {"tags": ["a", "b"]})
    (path, sent), = rig.upstream.received
    assert path == "/v1beta/models/gemini-2.5-flash:generateContent"
    assert sent["tools"] == [{"functionDeclarations": [{"name": "tag", "parameters": {"type": "OBJECT", "properties": {
        "tags": {"type": "ARRAY", "items": {"type": "STRING"}}}}}]}]
    assert sent["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 8192}
    _no_errors(sent, Dialect.GEMINI)
