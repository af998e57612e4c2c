"""The conversation model (issue 9's first view): turns read through each dialect's own parser,
calls paired with results by the bridges' own pairing (`model.pair`), marks where they happen."""

from __future__ import annotations

from typing import Any

import pytest

from inspector.wire.conversation import Conversation, Mark, build
from inspector.wire.dialect import Dialect
from inspector.wire.translate import TranslationError, get_bridge


def turns(conversation: Conversation) -> list[tuple[Any, ...]]:
    return [(t.role, t.pointer, t.new, [(e.kind, e.text, e.pointer, e.call_id, e.name, e.mark, e.partner,
                                         e.undeclared) for e in t.entries]) for t in conversation.turns]


def tools(conversation: Conversation) -> list[tuple[Any, ...]]:
    return [(u.name, u.pointer, u.declared, u.called, u.hosted, u.upstream_name) for u in conversation.tools]


N, ANSWERED, UNANSWERED, ORPHAN, NEW = Mark.NONE, Mark.ANSWERED, Mark.UNANSWERED, Mark.ORPHAN, Mark.NEW


def test_chat_pairs_by_id_and_marks_the_orphan_the_undeclared_and_the_response_turn() -> None:
    request = {"model": "gpt-4o", "tools": [
        {"type": "function", "function": {"name": "scrape", "parameters": {"type": "object"}}},
        {"type": "function", "function": {"name": "scrape", "parameters": {"type": "object"}}},
        {"type": "function", "function": {"name": "unused", "parameters": {"type": "object"}}}], "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Summarise example.com"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "scrape", "arguments": "{\"u\": 1}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "page text"},
        {"role": "tool", "tool_call_id": "call_9", "content": "stray"}]}
    response = {"id": "x", "object": "chat.completion", "created": 1, "model": "gpt-4o", "choices": [
        {"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_2", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]}}]}
    found = build(Dialect.OPENAI_CHAT, request, response)
    assert found.problem == ""
    assert turns(found) == [
        ("system", "/messages/0", False, [("message", "Be brief.", "/messages/0", None, None, N, None, False)]),
        ("user", "/messages/1", False, [("message", "Summarise example.com", "/messages/1", None, None, N, None,
                                         False)]),
        ("assistant", "/messages/2", False, [("call", "{\"u\": 1}", "/messages/2/tool_calls/0", "call_1", "scrape",
                                              ANSWERED, 3, False)]),
        ("tool", "/messages/3", False, [("result", "page text", "/messages/3", "call_1", "scrape", N, 2, False),
                                        ("result", "stray", "/messages/4", "call_9", None, ORPHAN, None, False)]),
        ("assistant", "/choices/0", True, [("call", "{}", "/choices/0/message/tool_calls/0", "call_2", "lookup", NEW,
                                            None, True)]),
    ]
    # Declared twice (the parser keeps one and reports the repeat), never called, called but not offered.
    assert tools(found) == [("scrape", "/tools/0", 2, 1, False, None), ("unused", "/tools/2", 1, 0, False, None),
                            ("lookup", "", 0, 1, False, None)]
    assert found.counts() == {ANSWERED: 1, UNANSWERED: 0, ORPHAN: 1, Mark.AGAIN: 0, NEW: 1}


def test_legacy_functions_pair_by_name_first_in_first_out() -> None:
    request = {"model": "gpt-4o", "functions": [{"name": "lookup", "parameters": {"type": "object"}}], "messages": [
        {"role": "user", "content": "find a and b"},
        {"role": "assistant", "content": None, "function_call": {"name": "lookup", "arguments": "{\"q\":\"a\"}"}},
        {"role": "function", "name": "lookup", "content": "A"},
        {"role": "assistant", "content": None, "function_call": {"name": "lookup", "arguments": "{\"q\":\"b\"}"}},
        {"role": "assistant", "content": None, "function_call": {"name": "lookup", "arguments": "{\"q\":\"c\"}"}},
        {"role": "function", "name": "lookup", "content": "B"}]}
    found = build(Dialect.OPENAI_CHAT, request)
    assert turns(found) == [
        ("user", "/messages/0", False, [("message", "find a and b", "/messages/0", None, None, N, None, False)]),
        ("assistant", "/messages/1", False, [("call", "{\"q\":\"a\"}", "/messages/1/function_call", None, "lookup",
                                              ANSWERED, 2, False)]),
        ("tool", "/messages/2", False, [("result", "A", "/messages/2", None, "lookup", N, 1, False)]),
        # b is the oldest unanswered call of that name, so B answers it and c is left unanswered.
        ("assistant", "/messages/3", False, [
            ("call", "{\"q\":\"b\"}", "/messages/3/function_call", None, "lookup", ANSWERED, 4, False),
            ("call", "{\"q\":\"c\"}", "/messages/4/function_call", None, "lookup", UNANSWERED, None, False)]),
        ("tool", "/messages/5", False, [("result", "B", "/messages/5", None, "lookup", N, 3, False)]),
    ]


def test_the_bridge_pairs_legacy_history_the_same_way_and_still_refuses_an_orphan() -> None:
    """One pairing: the conversation's FIFO is the bridge's (the translated ids say so)."""
    history = [{"role": "user", "content": "go"},
               {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": "{}"}},
               {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": "{\"n\":2}"}},
               {"role": "function", "name": "f", "content": "first"}]
    sent = get_bridge(Dialect.OPENAI_CHAT, Dialect.OPENAI_RESPONSES).request(
        {"model": "gpt-4o", "messages": history}, "/v1/chat/completions")
    calls = [item for item in sent.payload["input"] if item.get("type") == "function_call"]
    output = next(item for item in sent.payload["input"] if item.get("type") == "function_call_output")
    assert output["call_id"] == calls[0]["call_id"] != calls[1]["call_id"]
    marks = [e.mark for t in build(Dialect.OPENAI_CHAT, {"messages": history}).turns for e in t.entries]
    assert marks == [N, ANSWERED, UNANSWERED, N]
    with pytest.raises(TranslationError, match="orphan result"):
        get_bridge(Dialect.OPENAI_CHAT, Dialect.OPENAI_RESPONSES).request(
            {"model": "gpt-4o", "messages": [*history, {"role": "function", "name": "g", "content": "?"}]},
            "/v1/chat/completions")


def test_anthropic_results_in_a_user_message_hosted_tools_and_aliases() -> None:
    request = {"model": "claude", "max_tokens": 10, "system": "be brief", "tools": [
        {"name": "get_weather", "input_schema": {"type": "object"}},
        {"type": "web_search_20250305", "name": "web_search"}], "messages": [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "checking"},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
            {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"city": "Lyon"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"},
                                     {"type": "text", "text": "and?"}]}]}
    response = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
                "content": [{"type": "text", "text": "Sunny."}], "stop_reason": "end_turn",
                "usage": {"input_tokens": 1, "output_tokens": 1}}
    found = build(Dialect.ANTHROPIC, request, response, aliases={"get_weather": "get_weather_v2"})
    assert turns(found) == [
        ("system", "/system", False, [("message", "be brief", "/system", None, None, N, None, False)]),
        ("user", "/messages/0", False, [("message", "weather?", "/messages/0", None, None, N, None, False)]),
        ("assistant", "/messages/1", False, [
            ("message", "checking", "/messages/1/content/0", None, None, N, None, False),
            ("call", "{\"city\":\"Paris\"}", "/messages/1/content/1", "toolu_1", "get_weather", ANSWERED, 3, False),
            ("call", "{\"city\":\"Lyon\"}", "/messages/1/content/2", "toolu_2", "get_weather", UNANSWERED, None,
             False)]),
        ("tool", "/messages/2", False, [("result", "sunny", "/messages/2/content/0", "toolu_1", "get_weather", N, 2,
                                         False)]),
        ("user", "/messages/2", False, [("message", "and?", "/messages/2", None, None, N, None, False)]),
        ("assistant", "/content/0", True, [("message", "Sunny.", "/content/0", None, None, N, None, False)]),
    ]
    assert tools(found) == [("get_weather", "/tools/0", 1, 2, False, "get_weather_v2"),
                            ("web_search", "/tools/1", 0, 0, True, None)]


def test_gemini_pairs_by_name_and_counts_a_repeated_declaration() -> None:
    request = {"contents": [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {"x": 1}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "g", "response": {"r": 1}}}]}],
        "tools": [{"functionDeclarations": [{"name": "f"}, {"name": "f"}]}]}
    found = build(Dialect.GEMINI, request, path="/v1beta/models/gemini-2.0-flash:generateContent")
    assert turns(found) == [
        ("user", "/contents/0", False, [("message", "hi", "/contents/0", None, None, N, None, False)]),
        ("assistant", "/contents/1", False, [("call", "{\"x\":1}", "/contents/1/parts/0", None, "f", UNANSWERED,
                                              None, False)]),
        ("tool", "/contents/2", False, [("result", "{\"r\":1}", "/contents/2/parts/0", None, "g", ORPHAN, None,
                                         False)]),
    ]
    assert tools(found) == [("f", "/tools/0/functionDeclarations/0", 2, 1, False, None)]


def test_responses_items_pair_by_call_id() -> None:
    request = {"model": "gpt-4.1", "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}}],
               "input": [{"role": "user", "content": "hi"},
                         {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
                         {"type": "function_call_output", "call_id": "c1", "output": "x"},
                         {"type": "function_call_output", "call_id": "c1", "output": "y"}]}
    found = build(Dialect.OPENAI_RESPONSES, request)
    assert turns(found) == [
        ("user", "/input/0", False, [("message", "hi", "/input/0", None, None, N, None, False)]),
        ("assistant", "/input/1", False, [("call", "{}", "/input/1", "c1", "f", ANSWERED, 2, False)]),
        ("tool", "/input/2", False, [("result", "x", "/input/2", "c1", "f", N, 1, False),
                                     ("result", "y", "/input/3", "c1", "f", Mark.AGAIN, 1, False)]),
    ]


def test_mcp_is_its_json_rpc_exchange_paired_by_id() -> None:
    request = [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
               {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"t": "x"}}},
               {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    response = [{"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}},
                {"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": "nope"}}]
    found = build(Dialect.MCP, request, response)
    assert turns(found) == [
        ("client", "", False, [
            ("request", "tools/list()", "/0", "1", None, ANSWERED, 1, False),
            ("request", "tools/call({\"name\":\"echo\",\"arguments\":{\"t\":\"x\"}})", "/1", "2", "echo", UNANSWERED,
             None, False),
            ("request", "notifications/initialized()", "/2", None, None, N, None, False)]),
        ("server", "", True, [("response", "tools: echo", "/0", "1", None, N, 0, False),
                              ("response", "error -32601: nope", "/1", "7", None, ORPHAN, None, False)]),
    ]
    assert tools(found) == [("echo", "/0/result/tools/0", 1, 1, False, None)]


def test_a_history_the_parser_cannot_read_says_where() -> None:
    found = build(Dialect.OPENAI_CHAT, {"messages": [{"role": "tool", "content": "x"}]})
    assert (found.problem, found.turns, found.tools) == (
        "the history cannot be read as openai-chat: /messages/0/tool_call_id: a tool message needs its tool_call_id",
        [], [])
    assert build(Dialect.ANTHROPIC, ["not", "an", "object"]).problem == \
        "the history cannot be read as anthropic: /: the request body must be a JSON object"


def test_a_provider_error_is_the_last_turn_as_its_sdk_shows_it() -> None:
    chat = build(Dialect.OPENAI_CHAT, {"messages": [{"role": "user", "content": "hi"}]}, {"error": {
        "message": "Invalid schema", "type": "invalid_request_error", "param": "tools[0]", "code": None}})
    anthropic = build(Dialect.ANTHROPIC, {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 5}, {
        "type": "error", "error": {"type": "invalid_request_error", "message": "tools.0: bad"}})
    assert [turns(found)[-1] for found in (chat, anthropic)] == [
        ("error", "", True, [("error", 'invalid_request_error: Invalid schema {"param":"tools[0]","code":null}',
                              "/error", None, None, N, None, False)]),
        ("error", "", True, [("error", "invalid_request_error: tools.0: bad", "/error", None, None, N, None,
                              False)]),
    ]
