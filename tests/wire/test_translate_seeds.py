"""The seed post-mortems (from the design notes), each replayed through the translator: the original,
the translation and the loss report, with exact assertions (a tolerant assertion hid seed 000's bug)."""

from __future__ import annotations

import orjson

from inspector.wire.check import check_request
from inspector.wire.dialect import Dialect
from inspector.wire.translate import get_bridge
from inspector.wire.violations import Severity

from . import translate_cases as cases

CHAT, RESP, ANT, GEM = Dialect.OPENAI_CHAT, Dialect.OPENAI_RESPONSES, Dialect.ANTHROPIC, Dialect.GEMINI


def _errors(payload: dict, dialect: Dialect) -> list[str]:
    return [v.rule for v in check_request(payload, dialect) if v.severity is Severity.ERROR]


def _types(node: object) -> list[str]:
    """Every `type` value of every schema node, depth first."""
    if isinstance(node, dict):
        own = [node["type"]] if isinstance(node.get("type"), str) else []
        return own + [t for key, value in node.items() if key not in ("enum", "examples", "default")
                      for t in _types(value)]
    if isinstance(node, list):
        return [t for value in node for t in _types(value)]
    return []


def test_seed_000_genai_runtime_to_openai_chat() -> None:
    """Seed 000/003: genai Schema sent as-is ("OBJECT"), empty tool result losing its content key,
    text beside a function response lost, arguments double-encoded."""
    original = {"contents": [
        {"role": "user", "parts": [{"text": "scrape it"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "scrape_webpage", "args": {"url": "https://x.test"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "scrape_webpage", "response": {}}},
                                   {"text": "Summarise in one line."}]}],
        "tools": [{"functionDeclarations": [{"name": "scrape_webpage", "parameters": {
            "type": "OBJECT", "properties": {"url": {"type": "STRING"}, "render": {"type": "BOOLEAN"},
                                             "selectors": {"type": "ARRAY", "items": {"type": "STRING"}}},
            "required": ["url"]}}]}]}
    sent = get_bridge(GEM, CHAT).request(original, "/v1beta/models/gemini-2.5-flash:generateContent")
    parameters = sent.payload["tools"][0]["function"]["parameters"]
    assert _types(parameters) == ["object", "string", "boolean", "array", "string"]
    messages = sent.payload["messages"]
    call_id = messages[1]["tool_calls"][0]["id"]
    assert messages[2] == {"role": "tool", "tool_call_id": call_id, "content": "{}"}
    assert messages[3] == {"role": "user", "content": "Summarise in one line."}
    assert _errors(sent.payload, CHAT) == []
    assert [(loss.kind, loss.rule) for loss in sent.losses if loss.rule == "XL-01"] == [("converted", "XL-01")] * 5


def test_seed_004_legacy_functions_to_responses() -> None:
    """Seed 004: legacy functions/function_call/role:function history kept and paired by name,
    nulls as absent, a tools+functions duplicate reported, and a real id shaped like a synthetic
    one never collided with."""
    original = {"model": "gpt-4o", "tool_choice": None, "functions": [
        {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}}],
        "function_call": "auto",
        "messages": [
            {"role": "user", "content": "Paris?"},
            {"role": "assistant", "content": None, "function_call": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
            {"role": "function", "name": "get_weather", "content": "sunny"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_legacy_0001", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_legacy_0001", "content": "rainy"}]}
    sent = get_bridge(CHAT, RESP).request(original, "/v1/chat/completions")
    items = sent.payload["input"]
    legacy_id = items[1]["call_id"]
    assert items[1] == {"type": "function_call", "call_id": legacy_id, "name": "get_weather",
                        "arguments": "{\"city\":\"Paris\"}"}
    assert items[2] == {"type": "function_call_output", "call_id": legacy_id, "output": "sunny"}
    assert items[3]["call_id"] == items[4]["call_id"] == "call_legacy_0001" != legacy_id
    assert sent.payload["tool_choice"] == "auto"
    assert [t["name"] for t in sent.payload["tools"]] == ["get_weather"]
    assert [(loss.source, loss.kind, loss.rule) for loss in sent.losses] == [
        ("/tool_choice", "dropped", "XL-10"), ("/functions/0", "dropped", "XL-03"),
        ("/messages/1/function_call", "synthesised", "XL-05"), ("", "synthesised", "")]
    assert _errors(sent.payload, RESP) == []


def test_seed_001_builtin_tools_to_responses_without_function_tools() -> None:
    """Seed 001: built-in tools dropped when no function tools were given, or degraded into an
    empty-name function. Here an Anthropic client with only server tools goes to Responses."""
    original = {"model": "claude", "max_tokens": 100, "messages": [{"role": "user", "content": "news?"}],
                "tools": [{"type": "web_search_20250305", "name": "web_search", "allowed_domains": ["example.com"],
                           "user_location": {"type": "approximate", "city": "Lyon", "country": "FR"}},
                          {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}]}
    sent = get_bridge(ANT, RESP).request(original, "/v1/messages")
    assert sent.payload["tools"] == [{"type": "web_search", "filters": {"allowed_domains": ["example.com"]},
                                      "user_location": {"type": "approximate", "city": "Lyon", "country": "FR"}}]
    assert [(loss.source, loss.kind, loss.rule) for loss in sent.losses] == [("/tools/1", "dropped", "XL-09"),
                                                                           ("", "synthesised", "")]
    assert _errors(sent.payload, RESP) == []


def test_seed_names_with_dots_round_trip_through_the_alias_map() -> None:
    """MCP-style names (dots, slashes) aliased for the upstream and reversed for the client, in
    the JSON response and in the next turn's replayed history."""
    names = ["github.list_issues", "mcp/fs/read.file"]
    original = {"model": "gpt-4o", "messages": [{"role": "user", "content": "go"}],
                "tools": [{"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {}}}} for n in names]}
    bridge = get_bridge(CHAT, ANT)
    sent = bridge.request(original, "/v1/chat/completions")
    aliases = [t["name"] for t in sent.payload["tools"]]
    assert all(a.replace("_", "").isalnum() and len(a) <= 64 for a in aliases) and len(set(aliases)) == 2
    answer = {**cases.ANTHROPIC_RESPONSE, "content": [
        {"type": "tool_use", "id": "toolu_1", "name": aliases[1], "input": {"path": "a"}}]}
    back = bridge.response(answer, sent.state)
    call = back.payload["choices"][0]["message"]["tool_calls"][0]
    assert call["function"]["name"] == "mcp/fs/read.file"
    replay = {**original, "messages": [*original["messages"], back.payload["choices"][0]["message"],
                                       {"role": "tool", "tool_call_id": call["id"], "content": "data"}]}
    again = bridge.request(replay, "/v1/chat/completions")
    assert again.payload["messages"][1]["content"][0]["name"] == aliases[1]
    assert orjson.loads(orjson.dumps(again.payload["messages"][1]["content"][0]["input"])) == {"path": "a"}
    assert _errors(again.payload, ANT) == []
