"""Repair mode: the official openai SDK → forwarder (--repair) → mock upstream. What the forwarder
can safely fix goes up fixed; tool names it had to alias come back to the client as declared."""

from __future__ import annotations

import openai
import orjson

from inspector.analysis import analyse
from inspector.flow import Mode
from inspector.mock import json_response, sse_response
from inspector.wire.canned import Call
from inspector.wire.dialects.anthropic.mock import anthropic_message, anthropic_stream
from inspector.wire.dialects.openai_chat.mock import chat_completion, chat_stream
from inspector.wire.fix import fix

KEY = "sk-test-repair-0123456789"
DOTTED = "github.search_code"

# Seed 000 in one request: a genai schema sent as-is, a dotted MCP tool name, the same tool twice,
# and (seed 003) a tool message that lost its content.
TOOLS = [
    {"type": "function", "function": {"name": DOTTED, "parameters": {
        "type": "OBJECT", "properties": {"query": {"type": "STRING"}}, "required": ["query"]}}},
    {"type": "function", "function": {"name": "list_issues", "parameters": {"type": "object", "properties": {}}}},
    {"type": "function", "function": {"name": "list_issues", "parameters": {"type": "object", "properties": {}}}},
]
MESSAGES = [
    {"role": "user", "content": "find the parser"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": DOTTED, "arguments": '{"query": "parser"}'}}]},
    {"role": "tool", "tool_call_id": "call_a"},
]


def _client(rig) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{rig.url}/v1", api_key=KEY, max_retries=0)


def _expected_upstream() -> dict:
    request = {"model": "gpt-test", "messages": MESSAGES, "tools": TOOLS}
    return fix(request, "openai-chat").payload


def test_defects_are_fixed_upstream_and_aliased_names_restored_for_the_client(make_rig, mock, store):
    rig = make_rig(repair=True)
    alias = fix({"model": "m", "messages": MESSAGES, "tools": TOOLS}, "openai-chat").payload["tools"][0]["function"]["name"]
    mock.push(json_response(chat_completion(calls=[Call(alias, '{"query": "lexer"}', "call_b")])))

    answer = _client(rig).chat.completions.create(model="gpt-test", messages=MESSAGES, tools=TOOLS)

    assert [(c.function.name, c.function.arguments) for c in answer.choices[0].message.tool_calls] == [
        (DOTTED, '{"query": "lexer"}')]
    sent = orjson.loads(mock.received[0].body)
    assert sent == _expected_upstream()
    assert (sent["tools"][0]["function"]["name"], sent["messages"][2]["content"]) == (alias, "")
    assert [t["function"]["name"] for t in sent["tools"]] == [alias, "list_issues"]

    rig.events.completed()
    store.flush()
    flow = store.get(rig.events.all[-1].flow.id)
    assert flow.mode is Mode.REPAIR
    assert orjson.loads(flow.upstream_request_body) == _expected_upstream()
    assert [note.split(":")[0] for note in flow.notes] == [
        f"repaired {r.rule} ({r.action}) at {r.pointer or '/'}" for r in fix(
            {"model": "gpt-test", "messages": MESSAGES, "tools": TOOLS}, "openai-chat").repairs]
    analysis = analyse(flow)
    assert [v.rule for v in analysis.violations if v.where == "upstream" and v.severity.value == "error"] == []
    # What the repair fixed stays visible in the client's request, as repaired (it never reached OpenAI);
    # the response, whose names were restored to the client's own, is not judged against OpenAI's pattern.
    request = [v for v in analysis.violations if v.where == "request"]
    assert sorted({(v.rule, v.severity.value) for v in request}) == [
        ("OC-02", "info"), ("OC-05", "info"), ("OC-17", "info"), ("XL-03", "info")]
    assert all(v.message.startswith("repaired on the way: ") for v in request)
    assert [v for v in analysis.violations if v.where == "response"] == []
    assert analysis.errors == 0


def test_a_streamed_answer_gets_its_names_back_chunk_by_chunk(make_rig, mock, store):
    rig = make_rig(repair=True)
    alias = _expected_upstream()["tools"][0]["function"]["name"]
    mock.push(sse_response(chat_stream(calls=[Call(alias, '{"query": "lexer"}', "call_b")], pieces=4)))

    stream = _client(rig).chat.completions.create(model="gpt-test", messages=MESSAGES, tools=TOOLS, stream=True)
    names = [tc.function.name for chunk in stream for tc in (chunk.choices[0].delta.tool_calls or [])
             if chunk.choices and tc.function and tc.function.name]
    assert names == [DOTTED]
    rig.events.completed()
    store.flush()
    # The restored name is the client's own: the reassembled stream is not an OC-02 error.
    analysis = analyse(store.get(rig.events.all[-1].flow.id))
    assert [(v.rule, v.pointer) for v in analysis.violations if v.where == "stream"] == []
    assert analysis.errors == 0


def test_a_request_with_nothing_to_repair_goes_up_byte_for_byte(make_rig, mock, store):
    rig = make_rig(repair=True)
    mock.push(json_response(chat_completion("fine")))
    body = b'{"model": "gpt-test",  "messages": [{"role": "user", "content": "hi"}]}'
    response = rig.client.post("/v1/chat/completions", content=body, headers={"content-type": "application/json"})
    assert (response.status_code, mock.received[0].body) == (200, body)
    rig.events.completed()
    store.flush()
    flow = store.get(rig.events.all[-1].flow.id)
    assert (flow.mode, flow.upstream_request_body, flow.notes) == (Mode.REPAIR, None, [])
    assert response.content == orjson.dumps(chat_completion("fine"))


def _translated_upstream() -> dict:
    """What an Anthropic upstream gets when the chat request is repaired, then translated."""
    from inspector.wire.translate import get_bridge

    return get_bridge("openai-chat", "anthropic").request(_expected_upstream(), "/v1/chat/completions").payload


def test_repair_and_translate_on_one_route_repair_first_then_translate(make_rig, mock, store):
    rig = make_rig(repair=True, translate="openai-chat:anthropic")
    alias = _expected_upstream()["tools"][0]["function"]["name"]
    mock.push(json_response(anthropic_message(calls=[Call(alias, '{"query": "lexer"}', "toolu_b")])))

    answer = _client(rig).chat.completions.create(model="gpt-test", messages=MESSAGES, tools=TOOLS)

    # Translated back to Chat, then the alias restored: the client gets the name it declared.
    assert [(c.id, c.function.name, c.function.arguments) for c in answer.choices[0].message.tool_calls] == [
        ("toolu_b", DOTTED, '{"query":"lexer"}')]
    upstream = mock.received[0]
    assert (upstream.path, orjson.loads(upstream.body)) == ("/v1/messages", _translated_upstream())
    sent = orjson.loads(upstream.body)
    assert [t["name"] for t in sent["tools"]] == [alias, "list_issues"]
    assert sent["tools"][0]["input_schema"]["properties"] == {"query": {"type": "string"}}

    rig.events.completed()
    store.flush()
    flow = store.get(rig.events.all[-1].flow.id)
    assert (flow.mode, flow.translate, flow.state.value, flow.status) == (
        Mode.TRANSLATE, "openai-chat:anthropic", "complete", 200)
    assert orjson.loads(flow.upstream_request_body) == _translated_upstream()
    repairs = [f"repaired {r.rule} ({r.action}) at {r.pointer or '/'}" for r in fix(
        {"model": "gpt-test", "messages": MESSAGES, "tools": TOOLS}, "openai-chat").repairs]
    assert [note.split(":")[0] for note in flow.notes if note.startswith("repaired ")] == repairs
    assert orjson.loads(flow.upstream_response_body)["content"][0]["name"] == alias
    assert orjson.loads(flow.response_body)["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == DOTTED


def test_repair_and_translate_on_one_route_restore_names_in_the_translated_stream(make_rig, mock, store):
    rig = make_rig(repair=True, translate="openai-chat:anthropic")
    alias = _expected_upstream()["tools"][0]["function"]["name"]
    mock.push(sse_response(anthropic_stream(calls=[Call(alias, '{"query": "lexer"}', "toolu_b")])))

    stream = _client(rig).chat.completions.create(model="gpt-test", messages=MESSAGES, tools=TOOLS, stream=True)
    names = [tc.function.name for chunk in stream for tc in (chunk.choices[0].delta.tool_calls or [])
             if chunk.choices and tc.function and tc.function.name]

    assert names == [DOTTED]
    rig.events.completed()
    store.flush()
    flow = store.get(rig.events.all[-1].flow.id)
    assert (flow.streamed, flow.state.value, alias.encode() in flow.upstream_response_body,
            alias.encode() in flow.response_body, DOTTED.encode() in flow.response_body) == (
        True, "complete", True, False, True)
