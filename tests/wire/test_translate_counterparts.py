"""Counterparts that exist and were reported missing (issue 18): Responses namespace tools, thinking
budgets and reasoning efforts, end-user identifiers, MCP structured results for Gemini, untyped
schema nodes and genai-typed schemas in JSON-Schema dialects. Every translated request passes the
target's own checker (`send`)."""

from __future__ import annotations

import orjson
import pytest

from inspector.wire.check import check_request, check_response, check_stream
from inspector.wire.dialect import Dialect
from inspector.wire.translate import get_bridge, translate_document
from inspector.wire.violations import Severity

from . import translate_cases as cases

CHAT, RESP, ANT, GEM, MCP = (Dialect.OPENAI_CHAT, Dialect.OPENAI_RESPONSES, Dialect.ANTHROPIC, Dialect.GEMINI,
                             Dialect.MCP)
PATH = {CHAT: "/v1/chat/completions", RESP: "/v1/responses", ANT: "/v1/messages",
        GEM: "/v1beta/models/gemini-2.5-flash:generateContent"}


def send(source: Dialect, target: Dialect, body: dict, path: str | None = None):
    sent = get_bridge(source, target).request(body, path or PATH[source])
    assert [v for v in check_request(sent.payload, target) if v.severity is Severity.ERROR] == []
    return sent


def notes(translation) -> list[tuple[str, str | None, str, str]]:
    return [(loss.source, loss.target, loss.kind, loss.rule) for loss in translation.losses]


def chat_answer(*tool_calls: dict) -> dict:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-5", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": list(tool_calls)},
         "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}


def errors(violations) -> list[tuple[str, str]]:
    return [(v.rule, v.pointer) for v in violations if v.severity is Severity.ERROR]


# --- Responses namespace tools (how Codex ships MCP tools) -----------------------------------------

def _fn(name: str, **extra) -> dict:
    return {"type": "function", "name": name, "parameters": {"type": "object", "properties": {
        "q": {"type": "string"}}}, **extra}


NAMESPACED = {"model": "gpt-5", "store": False, "tools": [
    {"type": "namespace", "name": "crm", "description": "The CRM server", "tools": [_fn("lookup"), _fn("update")]},
    _fn("lookup")],
    "input": [{"role": "user", "content": "find Ada"},
              {"type": "function_call", "call_id": "call_1", "namespace": "crm", "name": "lookup",
               "arguments": '{"q":"Ada"}'},
              {"type": "function_call_output", "call_id": "call_1", "output": "found"}]}


def test_namespace_tools_cross_to_chat_as_qualified_functions_and_come_back_under_their_namespace() -> None:
    sent = send(RESP, CHAT, NAMESPACED)
    assert [t["function"]["name"] for t in sent.payload["tools"]] == ["crm__lookup", "crm__update", "lookup"]
    assert sent.payload["messages"][1]["tool_calls"][0]["function"]["name"] == "crm__lookup"
    assert ("/tools/0/tools/0", None, "converted", "") in notes(sent)
    assert ("/tools/0/description", None, "dropped", "") in notes(sent)
    assert not any("built-in" in loss.why for loss in sent.losses)
    back = get_bridge(RESP, CHAT).response(chat_answer(
        {"id": "call_9", "type": "function", "function": {"name": "crm__update", "arguments": "{}"}},
        {"id": "call_8", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}), sent.state).payload
    calls = [item for item in back["output"] if item["type"] == "function_call"]
    assert [(c.get("namespace"), c["name"], c["call_id"]) for c in calls] == [("crm", "update", "call_9"),
                                                                              (None, "lookup", "call_8")]
    assert errors(check_response(back, RESP)) == []


def test_a_namespaced_call_streams_back_under_its_namespace() -> None:
    sent = send(RESP, CHAT, NAMESPACED)
    relay = get_bridge(RESP, CHAT).stream(sent.state)
    body = cases.sse({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [
        {"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_5", "type": "function", "function": {
            "name": "crm__lookup", "arguments": "{}"}}]}, "finish_reason": None}]},
        {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [
            {"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}, done=True)
    out = relay.feed(body) + relay.close()
    done = [e for e in cases.events(out) if e.get("type") == "response.output_item.done"]
    assert [(e["item"]["namespace"], e["item"]["name"]) for e in done] == [("crm", "lookup")]
    assert errors(check_stream(out, RESP)) == []


def test_a_qualified_name_too_long_for_the_target_is_aliased_and_reversed() -> None:
    long = {"model": "gpt-5", "input": "x", "tools": [
        {"type": "namespace", "name": "n" * 40, "description": "d", "tools": [_fn("f" * 40)]}]}
    sent = send(RESP, CHAT, long)
    alias = sent.payload["tools"][0]["function"]["name"]
    assert len(alias) <= 64 and alias != "n" * 40 + "__" + "f" * 40
    back = get_bridge(RESP, CHAT).response(chat_answer(
        {"id": "call_1", "type": "function", "function": {"name": alias, "arguments": "{}"}}), sent.state).payload
    call = back["output"][0]
    assert (call["namespace"], call["name"]) == ("n" * 40, "f" * 40)


def test_the_checker_knows_the_namespace_type_near_miss() -> None:
    assert errors(check_request(NAMESPACED, RESP)) == []
    unknown = {**NAMESPACED, "tools": [{**NAMESPACED["tools"][0], "type": "namespaces"}]}
    assert ("OR-01", "/tools/0/type") in errors(check_request(unknown, RESP))


# --- thinking budgets and reasoning efforts (the table in translate/reasoning.py) ------------------

def _chat(**extra) -> dict:
    return {"model": "gpt-5", "messages": [{"role": "user", "content": "hi"}], **extra}


@pytest.mark.parametrize(("model", "effort", "config"), [
    ("gemini-2.5-flash", "low", {"thinkingBudget": 2048}),
    ("gemini-2.5-flash", "xhigh", {"thinkingBudget": 24576}),  # Flash's most
    ("gemini-2.5-flash", "none", {"thinkingBudget": 0}),
    ("gemini-2.5-pro", "none", {"thinkingBudget": 128}),  # Pro cannot stop thinking
    ("gemini-3-pro-preview", "medium", {"thinkingLevel": "high"}),
    ("gemini-3-flash-preview", "medium", {"thinkingLevel": "medium"}),
    ("gemini-3-pro-preview", "minimal", {"thinkingLevel": "low"}),
])
def test_an_effort_reaches_gemini_as_its_thinking_config(model: str, effort: str, config: dict) -> None:
    sent = send(CHAT, GEM, _chat(model=model, reasoning_effort=effort), PATH[CHAT])
    assert sent.payload["generationConfig"]["thinkingConfig"] == config
    renamed = config != {"thinkingLevel": effort}  # the same name on both scales is no rounding
    assert [n for n in notes(sent) if n[0] == "/reasoning_effort"] == [
        ("/reasoning_effort", "/generationConfig/thinkingConfig/" + next(iter(config)), "converted", "")] * renamed


@pytest.mark.parametrize(("config", "effort"), [
    ({"thinkingBudget": 1024}, "low"), ({"thinkingBudget": 8192}, "medium"), ({"thinkingBudget": 20000}, "high"),
    ({"thinkingBudget": -1}, "medium"), ({"thinkingLevel": "high"}, "high"), ({"thinking_level": "LOW"}, "low")])
def test_gemini_thinking_config_reaches_chat_as_an_effort(config: dict, effort: str) -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "generationConfig": {"thinkingConfig": config}}
    sent = send(GEM, CHAT, body, "/v1beta/models/gpt-5:generateContent")
    assert sent.payload["reasoning_effort"] == effort
    assert not any("thinkingConfig" in loss.source and loss.kind == "dropped" for loss in sent.losses)


def test_a_gemini_budget_reaches_chat_as_the_rounded_effort() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "generationConfig": {"maxOutputTokens": 9000, "thinkingConfig": {"thinkingBudget": 3000}}}
    sent = send(GEM, CHAT, body, "/v1beta/models/o3:generateContent")
    assert sent.payload["reasoning_effort"] == "medium"
    assert [n for n in notes(sent) if "thinking" in n[0]] == [
        ("/generationConfig/thinkingConfig/thinkingBudget", "/reasoning_effort", "converted", "")]


def test_thinking_is_not_switched_on_mid_tool_loop_without_the_signed_block() -> None:
    body = _chat(reasoning_effort="high", max_tokens=30000, tools=[{"type": "function", "function": {
        "name": "f", "parameters": {"type": "object", "properties": {}}}}], messages=[
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {
            "name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "ok"}])
    sent = send(CHAT, ANT, body)
    assert "thinking" not in sent.payload
    assert ("/reasoning_effort", None, "dropped", "") in notes(sent)
    forced = send(CHAT, ANT, {**body, "messages": body["messages"][:1],
                              "tool_choice": {"type": "function", "function": {"name": "f"}}})
    assert "thinking" not in forced.payload and forced.payload["tool_choice"] == {"type": "tool", "name": "f"}


def test_temperature_gives_way_to_thinking_on_anthropic() -> None:
    sent = send(CHAT, ANT, _chat(reasoning_effort="low", temperature=0.2, top_p=0.5, max_tokens=9000))
    assert sent.payload["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "temperature" not in sent.payload and "top_p" not in sent.payload
    assert {n[0] for n in notes(sent) if n[2] == "dropped"} == {"/temperature", "/top_p"}


# --- the end user and the prompt cache key ---------------------------------------------------------

def test_the_end_user_crosses_every_pair_that_carries_one() -> None:
    ant = {"model": "gpt-5", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}],
           "metadata": {"user_id": "u-42"}}
    assert send(ANT, CHAT, ant).payload["user"] == "u-42"
    to_responses = send(ANT, RESP, ant)
    assert to_responses.payload["safety_identifier"] == "u-42"
    assert ("/metadata/user_id", "/safety_identifier", "converted", "") in notes(to_responses)
    chat = _chat(user="u-7", prompt_cache_key="tenant-a")
    to_ant = send(CHAT, ANT, chat)
    assert to_ant.payload["metadata"] == {"user_id": "u-7"}
    assert ("/prompt_cache_key", None, "dropped", "") in notes(to_ant)
    to_resp = send(CHAT, RESP, chat)
    assert (to_resp.payload["safety_identifier"], to_resp.payload["prompt_cache_key"]) == ("u-7", "tenant-a")
    back = send(RESP, CHAT, {"model": "gpt-5", "input": "hi", "safety_identifier": "u-9", "prompt_cache_key": "k"})
    assert (back.payload["user"], back.payload["prompt_cache_key"]) == ("u-9", "k")
    assert not any(n[0] in ("/safety_identifier", "/prompt_cache_key") and n[2] == "dropped" for n in notes(back))
    gem = send(CHAT, GEM, chat)
    assert {n[0] for n in notes(gem) if n[2] == "dropped"} >= {"/user", "/prompt_cache_key"}


def test_an_identifier_longer_than_the_target_takes_is_sent_as_its_digest() -> None:
    ant = {"model": "gpt-5", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}],
           "metadata": {"user_id": "x" * 100}}
    sent = send(ANT, RESP, ant)
    assert len(sent.payload["safety_identifier"]) == 64 and sent.payload["safety_identifier"] != "x" * 64
    assert ("/metadata/user_id", "/safety_identifier", "converted", "") in notes(sent)


# --- MCP results and declarations for Gemini -------------------------------------------------------

CALL = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "weather", "arguments": {}}}


def test_structured_content_is_the_function_response_object() -> None:
    structured = {"temperature": 21.5, "conditions": ["sunny"]}
    result = {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": orjson.dumps(
        structured).decode()}], "structuredContent": structured}}
    item, losses = translate_document([CALL, result], MCP, GEM)
    assert item["functionResponse"]["response"] == structured
    assert [(loss.kind, loss.rule) for loss in losses if "structured" in loss.why] == [("converted", "XL-15")]
    failed = {"jsonrpc": "2.0", "id": 3, "result": {"isError": True, "content": [], "structuredContent": {"e": 1}}}
    item, _ = translate_document([CALL, failed], MCP, GEM)
    assert item["functionResponse"]["response"] == {"error": {"e": 1}}


def test_text_parts_join_without_doubling_a_trailing_newline() -> None:
    result = {"jsonrpc": "2.0", "id": 3, "result": {"content": [
        {"type": "text", "text": "line one\n"}, {"type": "text", "text": "line two"},
        {"type": "text", "text": "three\n\n"}, {"type": "text", "text": "four"}]}}
    item, _ = translate_document([CALL, result], MCP, GEM)
    assert item["functionResponse"]["response"] == {"output": "line one\n\nline two\n\nthree\n\nfour"}


def test_an_output_schema_becomes_the_declarations_response_json_schema() -> None:
    output = {"type": "object", "properties": {"temperature": {"type": "number"}}, "required": ["temperature"]}
    listing = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "weather", "inputSchema": {
        "type": "object", "properties": {"city": {"type": "string"}}}, "outputSchema": output}]}}
    tools, losses = translate_document(listing, MCP, GEM)
    assert tools["tools"][0]["functionDeclarations"][0]["responseJsonSchema"] == output
    assert not any(loss.source.endswith("outputSchema") for loss in losses)
    chat, losses = translate_document(listing, MCP, CHAT)
    assert ("/result/tools/0/outputSchema", "dropped") in [(loss.source, loss.kind) for loss in losses]


# --- schemas ----------------------------------------------------------------------------------------

def test_an_untyped_node_keeps_any_value_where_json_schema_is_spoken_and_is_reported_on_gemini() -> None:
    parameters = {"type": "object", "properties": {"tags": {"type": "array", "items": {}}}}
    body = _chat(tools=[{"type": "function", "function": {"name": "f", "parameters": parameters}}])
    for target, schema in ((ANT, lambda p: p["tools"][0]["input_schema"]),
                           (RESP, lambda p: p["tools"][0]["parameters"])):
        assert schema(send(CHAT, target, body).payload) == parameters
    # Gemini's Schema has no "any value": the node is typed, and the loss report says so (see README).
    sent = send(CHAT, GEM, body)
    assert sent.payload["tools"][0]["functionDeclarations"][0]["parameters"]["properties"]["tags"] == {
        "type": "ARRAY", "items": {"type": "STRING"}}
    assert ("/tools/0/function/parameters/properties/tags/items",
            "/tools/0/functionDeclarations/0/parameters/properties/tags/items/type", "synthesised", "GM-17") in notes(sent)


@pytest.mark.parametrize("target", [ANT, RESP, GEM])
def test_a_genai_typed_schema_is_json_schema_on_every_target(target: Dialect) -> None:
    genai = {"type": "OBJECT", "properties": {"q": {"type": "STRING", "nullable": True}}, "required": ["q"]}
    sent = send(CHAT, target, _chat(tools=[{"type": "function", "function": {"name": "f", "parameters": genai}}]))
    tool = sent.payload["tools"][0]
    schema = {ANT: lambda: tool["input_schema"], RESP: lambda: tool["parameters"],
              GEM: lambda: tool["functionDeclarations"][0]["parameters"]}[target]()
    expected = {"type": "OBJECT", "properties": {"q": {"type": "STRING", "nullable": True}}, "required": ["q"]} \
        if target is GEM else {"type": "object", "properties": {"q": {"type": ["string", "null"]}}, "required": ["q"]}
    assert schema == expected
    assert ("/tools/0/function/parameters/type", None, "converted", "XL-01") in notes(sent)
