"""The conversation model (issue 9's first view): turns read through each dialect's own parser,
calls paired with results by the bridges' own pairing (`model.pair`), marks where they happen."""

from __future__ import annotations

from typing import Any

import pytest

from inspector.wire.conversation import Conversation, Mark, ToolUse, build
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
        {"type": "function", "function": {"name": "scrape", "parameters": {"type": "object", "properties": {}}}},
        {"type": "function", "function": {"name": "scrape", "parameters": {"type": "object", "properties": {}}}},
        {"type": "function", "function": {"name": "unused", "parameters": {"type": "object", "properties": {}}}}], "messages": [
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
    request = {"model": "gpt-4o", "functions": [{"name": "lookup", "parameters": {"type": "object", "properties": {}}}], "messages": [
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


def test_gemini_snake_case_pointers_are_the_clients_own_spelling() -> None:
    """google-genai's REST spelling (function_call, function_declarations, one part object for a list):
    every pointer is the client's, so it points at the place in the document the client sent."""
    request = {"contents": [
        {"role": "user", "parts": {"text": "hi"}},
        {"role": "model", "parts": [{"function_call": {"name": "f", "args": {"x": 1}}}]},
        {"role": "user", "parts": [{"function_response": {"name": "f", "response": {"r": 1}}}]},
        {"role": "user", "parts": [{"function_response": {"response": {}}}]}],
        "tools": [{"function_declarations": [{"name": "f"}]}],
        "system_instruction": {"parts": [{"text": "be brief"}]}}
    response = {"candidates": [{"content": {"role": "model", "parts": [
        {"text": "again"}, {"function_call": {"name": "f", "args": {}}}]}, "finish_reason": "STOP"}]}
    found = build(Dialect.GEMINI, request, response, path="/v1beta/models/gemini-2.0-flash:generateContent")
    assert turns(found) == [
        ("system", "/system_instruction", False, [("message", "be brief", "/system_instruction", None, None, N, None,
                                                   False)]),
        ("user", "/contents/0", False, [("message", "hi", "/contents/0", None, None, N, None, False)]),
        ("assistant", "/contents/1", False, [("call", "{\"x\":1}", "/contents/1/parts/0", None, "f", ANSWERED, 3,
                                              False)]),
        ("tool", "/contents/2", False, [("result", "{\"r\":1}", "/contents/2/parts/0", None, "f", N, 2, False)]),
        ("user", "/contents/3", False, [("error", "/contents/3/parts/0/function_response/name: a functionResponse "
                                                  "needs a name", "/contents/3/parts/0/function_response/name",
                                         None, None, N, None, False)]),
        ("assistant", "/candidates/0", True, [
            ("message", "again", "/candidates/0/content/parts/0", None, None, N, None, False),
            ("call", "{}", "/candidates/0/content/parts/1", None, "f", NEW, None, False)]),
    ]
    assert tools(found) == [("f", "/tools/0/function_declarations/0", 1, 2, False, None)]


def test_responses_items_pair_by_call_id() -> None:
    request = {"model": "gpt-4.1", "tools": [{"type": "function", "name": "f", "parameters": {"type": "object", "properties": {}}}],
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


# ---- a history the parser refuses: each refused entry in place, the rest read and paired ---------

def refused(role: str, pointer: str, where: str, why: str) -> tuple[Any, ...]:
    """The turn of an entry the dialect's parser refused: its reason, at the place it names."""
    return (role, pointer, False, [("error", f"{where}: {why}", where, None, None, N, None, False)])


# Per dialect: a history whose entry 1 is replaced by each case, and the turns read around it. The
# call (entry 2) is still answered by the result (entry 3) whatever entry 1 is.
CHAT_HISTORY = [{"role": "user", "content": "Weather?"}, None,
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "w", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}]
CHAT_AROUND = [("user", "/messages/0", False, [("message", "Weather?", "/messages/0", None, None, N, None, False)]),
               ("assistant", "/messages/2", False, [("call", "{}", "/messages/2/tool_calls/0", "call_1", "w", ANSWERED,
                                                     3, False)]),
               ("tool", "/messages/3", False, [("result", "sunny", "/messages/3", "call_1", "w", N, 2, False)])]
RESPONSES_HISTORY = [{"role": "user", "content": "Weather?"}, None,
                     {"type": "function_call", "call_id": "call_1", "name": "w", "arguments": "{}"},
                     {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}]
RESPONSES_AROUND = [("user", "/input/0", False, [("message", "Weather?", "/input/0", None, None, N, None, False)]),
                    ("assistant", "/input/2", False, [("call", "{}", "/input/2", "call_1", "w", ANSWERED, 3, False)]),
                    ("tool", "/input/3", False, [("result", "sunny", "/input/3", "call_1", "w", N, 2, False)])]
ANTHROPIC_HISTORY = [{"role": "user", "content": "Weather?"}, None,
                     {"role": "assistant", "content": [
                         {"type": "tool_use", "id": "toolu_1", "name": "w", "input": {}}]},
                     {"role": "user", "content": [
                         {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"}]}]
ANTHROPIC_AROUND = [
    ("user", "/messages/0", False, [("message", "Weather?", "/messages/0", None, None, N, None, False)]),
    ("assistant", "/messages/2", False, [("call", "{}", "/messages/2/content/0", "toolu_1", "w", ANSWERED, 3, False)]),
    ("tool", "/messages/3", False, [("result", "sunny", "/messages/3/content/0", "toolu_1", "w", N, 2, False)])]
GEMINI_HISTORY = [{"role": "user", "parts": [{"text": "Weather?"}]}, None,
                  {"role": "model", "parts": [{"functionCall": {"name": "w", "args": {}}}]},
                  {"role": "user", "parts": [{"functionResponse": {"name": "w", "response": {"output": "sunny"}}}]}]
GEMINI_AROUND = [("user", "/contents/0", False, [("message", "Weather?", "/contents/0", None, None, N, None, False)]),
                 ("assistant", "/contents/2", False, [("call", "{}", "/contents/2/parts/0", None, "w", ANSWERED, 3,
                                                       False)]),
                 ("tool", "/contents/3", False, [("result", "sunny", "/contents/3/parts/0", None, "w", N, 2, False)])]
# (history field, the tool `w` as the dialect declares it, the history, the turns around entry 1)
HISTORIES = {Dialect.OPENAI_CHAT: ("messages", [{"type": "function", "function": {"name": "w"}}], CHAT_HISTORY,
                                   CHAT_AROUND),
             Dialect.OPENAI_RESPONSES: ("input", [{"type": "function", "name": "w"}], RESPONSES_HISTORY,
                                        RESPONSES_AROUND),
             Dialect.ANTHROPIC: ("messages", [{"name": "w", "input_schema": {"type": "object"}}], ANTHROPIC_HISTORY,
                                 ANTHROPIC_AROUND),
             Dialect.GEMINI: ("contents", [{"functionDeclarations": [{"name": "w"}]}], GEMINI_HISTORY, GEMINI_AROUND)}
CALL = {"type": "function", "function": {"name": "w", "arguments": "{}"}}
REFUSED_ENTRIES = [
    # (dialect, entry 1, the role its turn is headed by, where the parser points, why it refuses)
    (Dialect.OPENAI_CHAT, "hello", "unreadable", "/messages/1", "a message must be an object"),
    (Dialect.OPENAI_CHAT, {"content": "hi"}, "unreadable", "/messages/1/role", "unknown message role None"),
    (Dialect.OPENAI_CHAT, {"role": "robot", "content": "hi"}, "robot", "/messages/1/role",
     "unknown message role 'robot'"),
    (Dialect.OPENAI_CHAT, {"role": "user", "content": 5}, "user", "/messages/1/content",
     "content must be a string or a list of parts"),
    (Dialect.OPENAI_CHAT, {"role": "user", "content": [{"type": "video"}]}, "user", "/messages/1/content/0",
     "unknown content part type 'video'"),
    (Dialect.OPENAI_CHAT, {"role": "assistant", "tool_calls": {"id": "call_0", **CALL}}, "assistant",
     "/messages/1/tool_calls", "tool_calls must be a list"),
    (Dialect.OPENAI_CHAT, {"role": "assistant", "tool_calls": ["call_0"]}, "assistant", "/messages/1/tool_calls/0",
     "a tool call must be an object"),
    (Dialect.OPENAI_CHAT, {"role": "assistant", "tool_calls": [CALL]}, "assistant", "/messages/1/tool_calls/0/id",
     "a tool call needs an id"),
    (Dialect.OPENAI_CHAT, {"role": "assistant", "tool_calls": [{"id": "call_0", "function": {}}]}, "assistant",
     "/messages/1/tool_calls/0/function/name", "a tool call needs a function name"),
    # A shape the parser trips over without naming a place: the entry itself is the place.
    (Dialect.OPENAI_CHAT, {"role": "assistant", "tool_calls": [{"id": "call_0", "function": ["w"]}]}, "assistant",
     "/messages/1", "malformed openai-chat request (AttributeError: 'list' object has no attribute 'get')"),
    (Dialect.OPENAI_CHAT, {"role": "tool", "content": "x"}, "tool", "/messages/1/tool_call_id",
     "a tool message needs its tool_call_id"),
    (Dialect.OPENAI_CHAT, {"role": "function", "content": "x"}, "function", "/messages/1/name",
     "a legacy function message needs its name to find its call"),
    (Dialect.OPENAI_RESPONSES, 5, "unreadable", "/input/1", "an input item must be an object"),
    (Dialect.OPENAI_RESPONSES, {"role": "robot", "content": "x"}, "robot", "/input/1/role",
     "unknown message role 'robot'"),
    (Dialect.OPENAI_RESPONSES, {"role": "user", "content": {"text": "x"}}, "user", "/input/1/content",
     "content must be a string or a list of parts"),
    (Dialect.OPENAI_RESPONSES, {"type": "function_call", "name": "w", "arguments": "{}"}, "function_call",
     "/input/1/call_id", "function_call needs call_id"),
    (Dialect.OPENAI_RESPONSES, {"type": "function_call_output", "output": "x"}, "function_call_output",
     "/input/1/call_id", "function_call_output needs call_id"),
    (Dialect.OPENAI_RESPONSES, {"type": "item_reference", "id": "msg_1"}, "item_reference", "/input/1",
     "an item_reference points at an item stored by the Responses server"),
    (Dialect.ANTHROPIC, "hi", "unreadable", "/messages/1", "a message must be an object"),
    (Dialect.ANTHROPIC, {"content": "x"}, "unreadable", "/messages/1/role", "unknown message role None"),
    (Dialect.ANTHROPIC, {"role": "user", "content": 5}, "user", "/messages/1/content",
     "content must be a string or a list of blocks"),
    (Dialect.ANTHROPIC, {"role": "assistant", "content": [{"type": "tool_use", "name": "w", "input": {}}]},
     "assistant", "/messages/1/content/0", "a tool_use needs id and name"),
    (Dialect.ANTHROPIC, {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "w", "input": []}]},
     "assistant", "/messages/1/content/0/input", "tool_use input must be an object"),
    (Dialect.ANTHROPIC, {"role": "user", "content": [{"type": "tool_result", "content": "x"}]}, "user",
     "/messages/1/content/0/tool_use_id", "a tool_result needs its tool_use_id"),
    (Dialect.ANTHROPIC, {"role": "user", "content": [{"type": "video"}]}, "user", "/messages/1/content/0",
     "user content block 'video' has no counterpart"),
    (Dialect.GEMINI, 5, "unreadable", "/contents/1", "a content must be an object"),
    (Dialect.GEMINI, {"role": "robot", "parts": [{"text": "x"}]}, "robot", "/contents/1/role",
     "unknown content role 'robot'"),
    (Dialect.GEMINI, {"role": "user", "parts": "x"}, "user", "/contents/1/parts", "parts must be a list"),
    (Dialect.GEMINI, {"role": "model", "parts": [{"functionCall": {"args": {}}}]}, "model",
     "/contents/1/parts/0/functionCall/name", "a functionCall needs a name"),
    (Dialect.GEMINI, {"role": "user", "parts": [{"functionResponse": {"response": {}}}]}, "user",
     "/contents/1/parts/0/functionResponse/name", "a functionResponse needs a name"),
    (Dialect.GEMINI, {"role": "user", "parts": [{"bogus": 1}]}, "user", "/contents/1/parts/0",
     "user part 'bogus' has no counterpart"),
]


@pytest.mark.parametrize(("dialect", "entry", "role", "where", "why"), REFUSED_ENTRIES,
                         ids=[f"{case[0].value}-{case[3]}-{case[4][:30]}" for case in REFUSED_ENTRIES])
def test_an_entry_the_parser_refuses_shows_in_place_and_the_rest_is_read(
        dialect: Dialect, entry: Any, role: str, where: str, why: str) -> None:
    key, offered, history, around = HISTORIES[dialect]
    found = build(dialect, {"tools": offered, key: [history[0], entry, *history[2:]]},
                  path="/v1beta/models/gemini-2.0-flash:generateContent")
    assert (found.problem, turns(found)) == ("", [around[0], refused(role, f"/{key}/1", where, why), *around[1:]])


def test_a_legacy_result_the_parser_refuses_leaves_its_call_to_the_next_result_of_that_name() -> None:
    found = build(Dialect.OPENAI_CHAT, {"functions": [{"name": "w"}], "messages": [
        {"role": "assistant", "content": None, "function_call": {"name": "w", "arguments": "{}"}},
        {"role": "function", "content": "lost"},
        {"role": "function", "name": "w", "content": "sunny"}]})
    assert turns(found) == [
        ("assistant", "/messages/0", False, [("call", "{}", "/messages/0/function_call", None, "w", ANSWERED, 2,
                                              False)]),
        refused("function", "/messages/1", "/messages/1/name", "a legacy function message needs its name to find "
                "its call"),
        ("tool", "/messages/2", False, [("result", "sunny", "/messages/2", None, "w", N, 0, False)])]
    assert tools(found) == [("w", "/functions/0", 1, 1, False, None)]


def test_a_refused_result_leaves_its_call_unanswered_and_two_refused_entries_stay_apart() -> None:
    found = build(Dialect.OPENAI_CHAT, {"messages": [
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", **CALL}]},
        {"role": "tool", "content": "x"}, {"role": "tool", "content": "y"}]})
    assert turns(found) == [
        ("assistant", "/messages/0", False, [("call", "{}", "/messages/0/tool_calls/0", "call_1", "w", UNANSWERED,
                                              None, True)]),
        refused("tool", "/messages/1", "/messages/1/tool_call_id", "a tool message needs its tool_call_id"),
        refused("tool", "/messages/2", "/messages/2/tool_call_id", "a tool message needs its tool_call_id")]


def test_a_responses_item_of_unknown_type_is_read_as_the_parser_reads_it_opaque_in_place() -> None:
    """The parser carries item types it does not know as opaque state (new item kinds keep crossing,
    reported as dropped), so the conversation shows it so, where it is, not as an error."""
    found = build(Dialect.OPENAI_RESPONSES, {"tools": HISTORIES[Dialect.OPENAI_RESPONSES][1], "input": [
        RESPONSES_HISTORY[0], {"type": "bogus"}, *RESPONSES_HISTORY[2:]]})
    assert turns(found) == [
        RESPONSES_AROUND[0],
        ("assistant", "/input/1", False, [
            ("state", "[openai-responses bogus item]", "/input/1", None, None, N, None, False),
            ("call", "{}", "/input/2", "call_1", "w", ANSWERED, 2, False)]),
        ("tool", "/input/3", False, [("result", "sunny", "/input/3", "call_1", "w", N, 1, False)])]


def test_a_top_level_field_the_parser_refuses_is_reported_first_and_the_history_still_read() -> None:
    """The field is left out and the rest read again: the Responses server's own history (which the
    inspector cannot see) does not hide the turns the client did send, nor its tools."""
    request = {"previous_response_id": "resp_1", "input": [*RESPONSES_HISTORY[:1], *RESPONSES_HISTORY[2:]],
               "tools": [{"type": "function", "name": "w", "parameters": {"type": "object", "properties": {}}}]}
    found = build(Dialect.OPENAI_RESPONSES, request)
    assert turns(found) == [
        refused("request", "/previous_response_id", "/previous_response_id", "previous_response_id points at "
                "history held by the Responses server; the target cannot see it"),
        RESPONSES_AROUND[0],
        ("assistant", "/input/1", False, [("call", "{}", "/input/1", "call_1", "w", ANSWERED, 3, False)]),
        ("tool", "/input/2", False, [("result", "sunny", "/input/2", "call_1", "w", N, 2, False)])]
    assert tools(found) == [("w", "/tools/0", 1, 1, False, None)]
    # A history that is not a list at all is one refused field; the parser cannot go entry by entry.
    found = build(Dialect.ANTHROPIC, {"system": "be brief", "messages": {"role": "user"}})
    assert turns(found) == [refused("request", "/messages", "/messages", "messages must be a list"),
                            ("system", "/system", False, [("message", "be brief", "/system", None, None, N, None,
                                                           False)])]


@pytest.mark.parametrize("dialect", list(HISTORIES))
def test_tools_that_are_not_a_list_are_refused_without_a_place_and_the_history_still_read(dialect: Dialect) -> None:
    """The parsers trip over `tools: true` without naming it: the whole frame is refused (no tools,
    so the call is not offered), the turns are read all the same."""
    key, _, history, around = HISTORIES[dialect]
    found = build(dialect, {"tools": True, key: [history[0], *history[2:]]},
                  path="/v1beta/models/gemini-2.0-flash:generateContent")
    assert (found.problem, found.tools, len(found.turns)) == ("", [ToolUse("w", "", called=1)], 4)
    why = f"malformed {dialect.value} request (TypeError: 'bool' object is not iterable)"
    assert turns(found)[0] == ("request", "", False, [("error", f"/: {why}", "", None, None, N, None, False)])
    assert [turn[3][0][0] for turn in turns(found)[1:]] == ["message", "call", "result"]


def test_a_response_the_parser_refuses_is_the_last_turn_and_the_history_stays() -> None:
    found = build(Dialect.ANTHROPIC, {"messages": ANTHROPIC_HISTORY[:1]}, {
        "type": "message", "role": "assistant", "content": [{"type": "tool_use", "name": "w", "input": {}}]})
    assert (found.problem, turns(found)) == ("", [
        ANTHROPIC_AROUND[0],
        ("response", "", True, [("error", "/content/0: a tool_use needs id and name", "/content/0", None, None, N,
                                 None, False)])])


def test_a_request_that_is_not_an_object_has_no_turns_to_show() -> None:
    found = build(Dialect.ANTHROPIC, ["not", "an", "object"])
    assert (found.problem, found.turns, found.tools) == (
        "the history cannot be read as anthropic: /: the request body must be a JSON object", [], [])


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


# ---- values nested as deep as orjson reads (1024 levels: past its 254 written ones and Python's ~1000 frames) ----

def deep(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"a": value}
    return value


def deep_text(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def cut(text: str) -> str:
    """An entry's text as the conversation shows it: cut at 2000 characters."""
    return f"{text[:2000]}… ({len(text) - 2000} more characters)"


def test_arguments_results_and_errors_a_thousand_levels_deep_read_as_their_text() -> None:
    anthropic = build(Dialect.ANTHROPIC, {"model": "m", "max_tokens": 5, "messages": [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": deep(999)}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}]},
        {"type": "message", "role": "assistant", "stop_reason": "tool_use",
         "content": [{"type": "tool_use", "id": "t2", "name": "f", "input": deep(999)}]})
    assert turns(anthropic) == [
        ("user", "/messages/0", False, [("message", "x", "/messages/0", None, None, N, None, False)]),
        ("assistant", "/messages/1", False, [("call", cut(deep_text(999)), "/messages/1/content/0", "t1", "f",
                                              ANSWERED, 2, True)]),
        ("tool", "/messages/2", False, [("result", "ok", "/messages/2/content/0", "t1", "f", N, 1, False)]),
        ("assistant", "/content/0", True, [("call", cut(deep_text(999)), "/content/0", "t2", "f", NEW, None, True)]),
    ]
    chat = build(Dialect.OPENAI_CHAT, {"messages": [{"role": "user", "content": "hi"}]},
                 {"error": {"message": "bad", "type": "invalid_request_error", "param": deep(998)}})
    assert turns(chat)[-1] == ("error", "", True, [
        ("error", cut('invalid_request_error: bad {"param":' + deep_text(998) + "}"), "/error", None, None, N, None,
         False)])


def test_an_mcp_exchange_a_thousand_levels_deep_reads_as_its_text() -> None:
    found = build(Dialect.MCP, {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                "params": {"name": "f", "arguments": deep(997)}},
                  [{"jsonrpc": "2.0", "id": 1, "result": deep(998)}, {"jsonrpc": "2.0", "id": 2, "error": deep(998)}])
    assert turns(found) == [
        ("client", "", False, [("request", cut('tools/call({"name":"f","arguments":' + deep_text(997) + "})"), "",
                                "1", "f", ANSWERED, 1, False)]),
        ("server", "", True, [("response", cut(deep_text(998)), "/0", "1", None, N, 0, False),
                              ("response", cut("error ?: " + deep_text(998)), "/1", "2", None, ORPHAN, None, False)]),
    ]
