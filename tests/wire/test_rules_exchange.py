"""Rules that need the request and its response together (issue 10), through `check.check_exchange`:
a call to a tool the request never declared (XL-16), and the turn rules on a response, JSON or
reassembled from a stream (OC-24, OC-25, OR-15, AN-15, GM-18); and MCP's pair, a tools/call
against the server's tools/list (MCP-08), across the exchanges of a session."""

from __future__ import annotations

from typing import Any

import pytest

from inspector.wire import check

from .rule_cases import Case, assert_case, doing, setting
from .wire_payloads import (anthropic_events, anthropic_request, anthropic_response, chat_chunks, chat_request,
                            chat_response, gemini_chunks, gemini_request, gemini_response, mcp_call_request,
                            mcp_call_result, mcp_list_result, responses_events, responses_request,
                            responses_response, sse)


def _pair(request, response):
    return lambda: {"request": request(), "response": response()}


CHAT, CHAT_STREAM = _pair(chat_request, chat_response), _pair(chat_request, chat_chunks)
RESPONSES, RESPONSES_STREAM = _pair(responses_request, responses_response), _pair(responses_request, responses_events)
ANTHROPIC, ANTHROPIC_STREAM = _pair(anthropic_request, anthropic_response), _pair(anthropic_request, anthropic_events)
GEMINI, GEMINI_STREAM = _pair(gemini_request, gemini_response), _pair(gemini_request, gemini_chunks)
SERVER = "http://mcp.test/mcp"
MCP_LIST = _pair(lambda: {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, mcp_list_result)
MCP_CALL = _pair(mcp_call_request, mcp_call_result)


def _session() -> list[dict[str, Any]]:
    return [{"url": SERVER, "request": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
             "response": mcp_list_result()},
            {"url": SERVER, "request": mcp_call_request(), "response": mcp_call_result()}]


def _relisted_with(name: str):
    """The call's tool appears in a fresh tools/list before the call (after list_changed)."""
    def mutate(session):
        relist = {"jsonrpc": "2.0", "id": 3, "result": {"tools": [
            {"name": name, "inputSchema": {"type": "object"}}, *mcp_list_result()["result"]["tools"]]}}
        return [session[0], {"url": SERVER, "request": {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
                             "response": relist}, session[1]]
    return mutate


def _chat_stream_end(*deltas: dict[str, Any], finish: str) -> Any:
    """A Chat stream whose only choice sends `deltas` and ends with `finish`."""
    def mutate(document):
        first = document["response"][0]
        document["response"] = [{**first, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
                                for delta in deltas]
        document["response"][-1]["choices"][0]["finish_reason"] = finish
        return document
    return mutate


def _responses_completed(output: list[Any], status: str = "completed"):
    def mutate(document):
        events = document["response"]
        document["response"] = [events[0], {"type": "response.completed", "sequence_number": 1, "response": {
            "id": "resp_1", "object": "response", "status": status, "output": output}}]
        return document
    return mutate


def _anthropic_stream_stop(reason: str):
    def mutate(document):
        events = document["response"]
        document["response"] = [events[0], {"type": "message_delta", "delta": {"stop_reason": reason,
                                                                               "stop_sequence": None},
                                            "usage": {"output_tokens": 2}}, {"type": "message_stop"}]
        return document
    return mutate


def _gemini_stream_of(finish: str):
    def mutate(document):
        document["response"] = [{"candidates": [{"index": 0, "finishReason": finish,
                                                 "content": {"role": "model", "parts": []}}],
                                 "usageMetadata": {"totalTokenCount": 2}}]
        return document
    return mutate


CHAT_NAME = "/choices/0/message/tool_calls/0/function/name"

CASES = [
    # XL-16: a call to a tool the request never declared, in every dialect that declares tools.
    Case("chat call to an undeclared tool", "openai-chat", CHAT,
         setting(["response", "choices", 0, "message", "tool_calls", 0, "function", "name"], "get_time"),
         "XL-16", CHAT_NAME, "error",
         # declared only through the legacy functions list: still declared
         doing(setting(["request", "functions"], [{"name": "get_time", "parameters": {"type": "object", "properties": {}}}]),
               setting(["response", "choices", 0, "message", "tool_calls", 0, "function", "name"], "get_time")),
         "exchange"),
    Case("chat stream call to an undeclared tool", "openai-chat", CHAT_STREAM,
         setting(["response", 1, "choices", 0, "delta", "tool_calls", 0, "function", "name"], "lookup"),
         "XL-16", CHAT_NAME, "error",
         # a custom tool of that name is declared
         doing(setting(["request", "tools", 1], {"type": "custom", "custom": {"name": "lookup"}}),
               setting(["response", 1, "choices", 0, "delta", "tool_calls", 0, "function", "name"], "lookup")),
         "exchange-stream"),
    Case("responses call to an undeclared tool", "openai-responses", RESPONSES,
         setting(["response", "output", 0, "name"], "get_time"), "XL-16", "/output/0/name", "error",
         # declared inside a namespace tool
         doing(setting(["request", "tools", 1], {"type": "namespace", "name": "clock", "description": "Clock",
                                                 "tools": [{"type": "function", "name": "get_time",
                                                            "parameters": {"type": "object", "properties": {}}}]}),
               setting(["response", "output", 0, "name"], "get_time")),
         "exchange"),
    Case("anthropic call to an undeclared tool", "anthropic", ANTHROPIC,
         setting(["response", "content", 1, "name"], "get_time"), "XL-16", "/content/1/name", "error",
         # the server tool's name is declared too, and its calls are server_tool_use blocks
         setting(["response", "content", 1], {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
                                              "input": {"query": "Oslo"}}),
         "exchange"),
    Case("anthropic stream call to an undeclared tool", "anthropic", ANTHROPIC_STREAM,
         setting(["response", 2, "content_block", "name"], "get_time"), "XL-16", "/content/1/name", "error",
         setting(["response", 2, "content_block", "name"], "web_search"), "exchange-stream"),
    Case("gemini call to an undeclared function", "gemini", GEMINI,
         setting(["response", "candidates", 0, "content", "parts", 0, "functionCall", "name"], "get_time"),
         "XL-16", "/candidates/0/content/parts/0/functionCall/name", "error",
         # declared in snake_case: the same field to Gemini
         doing(lambda d: {**d, "request": {**d["request"], "tools": [
                   *d["request"]["tools"], {"function_declarations": [{"name": "get_time"}]}]}},
               setting(["response", "candidates", 0, "content", "parts", 0, "functionCall", "name"], "get_time")),
         "exchange"),
    Case("gemini stream call to an undeclared function", "gemini", GEMINI_STREAM,
         setting(["response", 3, "candidates", 0, "content", "parts", 0, "functionCall", "name"], "get_time"),
         "XL-16", "/candidates/0/content/parts/2/functionCall/name", "error",
         setting(["response", 3, "candidates", 0, "content", "parts", 0, "functionCall", "name"], "mcp.search"),
         "exchange-stream"),
    # The turn rules on a reassembled stream: what check_response says of a JSON body.
    Case("chat stream with no choice", "openai-chat", CHAT_STREAM,
         lambda d: {**d, "response": [{**d["response"][-1], "choices": [], "usage": {"total_tokens": 3}}]},
         "OC-24", "/choices", "error",
         # the usage chunk after a real choice, as stream_options.include_usage sends it
         lambda d: {**d, "response": [*d["response"], {**d["response"][-1], "choices": [],
                                                         "usage": {"total_tokens": 3}}]},
         "exchange-stream"),
    Case("chat stream with an empty turn", "openai-chat", CHAT_STREAM,
         _chat_stream_end({"role": "assistant"}, {}, finish="stop"), "OC-25", "/choices/0/message", "error",
         _chat_stream_end({"role": "assistant"}, {}, finish="length"), "exchange-stream"),
    Case("responses completed with no output", "openai-responses", RESPONSES,
         setting(["response", "output"], []), "OR-15", "/output", "warning",
         doing(setting(["response", "output"], []), setting(["response", "status"], "incomplete")), "exchange"),
    Case("responses stream completed with reasoning only", "openai-responses", RESPONSES_STREAM,
         _responses_completed([{"type": "reasoning", "id": "rs_1", "summary": []}]), "OR-15", "/output", "warning",
         _responses_completed([{"type": "reasoning", "id": "rs_1", "summary": []},
                               {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                                "content": [{"type": "output_text", "text": "Done.", "annotations": []}]}]),
         "exchange-stream"),
    Case("anthropic empty end_turn", "anthropic", ANTHROPIC,
         doing(setting(["response", "content"], []), setting(["response", "stop_reason"], "end_turn")),
         "AN-15", "/content", "warning",
         doing(setting(["response", "content"], []), setting(["response", "stop_reason"], "max_tokens")), "exchange"),
    Case("anthropic stream ending empty", "anthropic", ANTHROPIC_STREAM,
         _anthropic_stream_stop("end_turn"), "AN-15", "/content", "warning",
         _anthropic_stream_stop("refusal"), "exchange-stream"),
    Case("gemini candidate with no parts", "gemini", GEMINI,
         setting(["response", "candidates", 0, "content", "parts"], []), "GM-18", "/candidates/0/content", "warning",
         doing(setting(["response", "candidates", 0, "content", "parts"], []),
               setting(["response", "candidates", 0, "finishReason"], "SAFETY")), "exchange"),
    Case("gemini response with no candidate", "gemini", GEMINI,
         setting(["response", "candidates"], []), "GM-18", "/candidates", "warning",
         doing(setting(["response", "candidates"], []), setting(["response", "promptFeedback"],
                                                                {"blockReason": "SAFETY"})), "exchange"),
    Case("gemini stream ending empty", "gemini", GEMINI_STREAM,
         _gemini_stream_of("STOP"), "GM-18", "/candidates/0/content", "warning",
         _gemini_stream_of("MAX_TOKENS"), "exchange-stream"),
    # An MCP result of the wrong type: which result it had to be is the request's method's (MCP-01, MCP-05).
    Case("mcp tools/list result as a list", "mcp", MCP_LIST,
         setting(["response", "result"], [{"name": "get_weather"}]), "MCP-01", "/result", "error",
         setting(["response", "result"], {"tools": [{"name": "get_weather", "inputSchema": {"type": "object"}}]}),
         "exchange"),
    Case("mcp tools/call result as text", "mcp", MCP_CALL,
         setting(["response", "result"], "4 degrees"), "MCP-05", "/result", "error",
         setting(["response", "result"], {"content": [{"type": "text", "text": "4 degrees"}]}), "exchange"),
    Case("anthropic usage as text", "anthropic", ANTHROPIC,
         setting(["response", "usage"], "1 in, 9 out"), "AN-15", "/usage", "error",
         setting(["response", "usage"], {"input_tokens": 1, "output_tokens": 9}), "exchange"),
    # MCP-08: tools/call against the same server's tools/list, earlier in the session.
    Case("mcp call to an unlisted tool", "mcp", _session,
         setting([1, "request", "params", "name"], "get_time"), "MCP-08", "/result", "error",
         doing(_relisted_with("get_time"), setting([2, "request", "params", "name"], "get_time")), "session"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_rule(case):
    assert_case(case)


def test_undeclared_call_message_names_what_was_declared():
    request, response = chat_request(), chat_response()
    response["choices"][0]["message"]["tool_calls"][0]["function"]["name"] = "get_time"
    (found,) = check.check_exchange(request, response, "openai-chat").violations
    assert (found.where, found.message) == (
        "response", "the response calls 'get_time', which the request does not declare (it declares get_weather, "
                    "search_docs)")
    del request["tools"], request["tool_choice"]
    assert [v.message for v in check.check_exchange(request, response, "openai-chat").violations] == [
        "the response calls 'get_time', which the request does not declare (it declares no tools)"]


def test_an_exchange_reports_each_document_where_it_lives():
    request, events = chat_request(), chat_chunks()
    request["tools"][0]["function"]["parameters"]["type"] = "OBJECT"
    events[-1]["choices"][0]["finish_reason"] = "stop"
    events[1]["choices"][0]["delta"]["tool_calls"][0]["function"]["name"] = "get_time"
    found = check.check_exchange(request, sse(events, done=True), "openai-chat")
    assert [(v.rule, v.where, v.pointer) for v in found.violations] == [
        ("OC-05", "request", "/tools/0/function/parameters/type"),
        ("OC-22", "stream", "/6/choices/0/finish_reason"),
        ("XL-16", "response", "/choices/0/message/tool_calls/0/function/name"),
        ("OC-22", "response", "/choices/0/finish_reason"),
    ]
    assert found.final == check.reassemble(sse(events, done=True), "openai-chat")


def _stopped_after_calls(tool_choice: Any) -> list[tuple[str, str, str, str]]:
    request, response = chat_request(), chat_response()
    request["tool_choice"] = tool_choice
    response["choices"][0]["finish_reason"] = "stop"
    return [(v.rule, v.severity.value, v.where, v.message) for v in
            check.check_exchange(request, response, "openai-chat").violations]


def test_finish_reason_stop_on_calls_is_judged_by_whether_the_request_forced_them():
    # Trip: tool_choice "auto" lets the model choose, and OpenAI then ends a calling turn with "tool_calls".
    note = ("OC-22", "info", "response", "the response carries 1 tool call(s) with finish_reason 'stop', what OpenAI "
                                         "answers when tool_choice names a function")
    assert _stopped_after_calls("auto") == [note, (
        "OC-22", "warning", "response", "the response carries 1 tool call(s) but finish_reason is 'stop', and the "
                                        "request's tool_choice does not name a function: an agent loop stops here")]
    # Near miss: a named function is forced, and "stop" is what OpenAI answers by design (issue 18).
    assert _stopped_after_calls({"type": "function", "function": {"name": "get_weather"}}) == [note]


def test_an_mcp_call_after_a_paginated_list_is_not_judged_until_the_list_is_complete():
    case = CASES[-1]
    session = case.base()
    session[0]["response"]["result"]["nextCursor"] = "page-2"
    session[1]["request"]["params"]["name"] = "get_time"
    assert case.run(lambda _: session) == []


@pytest.mark.parametrize("dialect", ["openai-responses", "anthropic", "gemini"])
def test_a_body_that_is_not_the_dialect_s_response_gets_no_turn_finding(dialect):
    """A response judged by its request's dialect may be another kind of body (an error, a proxy's own
    answer): the turn rules judge only what has the dialect's response shape."""
    assert check.check_response({"error": {"message": "overloaded"}}, dialect) == []


def test_a_gemini_answer_with_no_candidate_key_is_still_judged():
    """Proto JSON leaves an empty candidates list out; usageMetadata says it is generateContent's answer."""
    assert [(v.rule, v.pointer) for v in check.check_response({"usageMetadata": {"totalTokenCount": 4}},
                                                                "gemini")] == [("GM-18", "")]


def test_a_result_of_the_wrong_type_is_named_by_the_method_it_answers():
    """Batched: each result is judged by the method of the request with its id; a method outside the tools
    the checker knows (ping) is not judged, and a result whose request is not in the batch neither."""
    request = [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, mcp_call_request(),
               {"jsonrpc": "2.0", "id": 3, "method": "ping"}]
    response = [{"jsonrpc": "2.0", "id": 1, "result": None}, {"jsonrpc": "2.0", "id": 2, "result": [1]},
                {"jsonrpc": "2.0", "id": 3, "result": "pong"}, {"jsonrpc": "2.0", "id": 9, "result": "?"}]
    found = check.check_exchange(request, response, "mcp")
    assert [(v.rule, v.pointer, v.severity.value, v.message, v.where) for v in found.violations] == [
        ("MCP-01", "/0/result", "error", "tools/list result is null, not an object {tools: [...]}", "response"),
        ("MCP-05", "/1/result", "error", "tools/call result is [1], not a CallToolResult object", "response")]


def test_anthropic_usage_of_the_wrong_type_is_one_finding_in_a_body_and_a_stream():
    response = anthropic_response()
    response["usage"] = [1, 9]
    [finding] = check.check_exchange(anthropic_request(), response, "anthropic").violations
    assert (finding.rule, finding.pointer, finding.severity.value, finding.message, finding.effect.value) == (
        "AN-15", "/usage", "error", "usage is [1, 9], not an object of token counts", "breaks client")
    events = anthropic_events()
    events[0]["message"]["usage"] = "none"
    found = check.check_exchange(anthropic_request(), sse(events), "anthropic")
    assert [(v.rule, v.pointer, v.severity.value, v.where) for v in found.violations] == [
        ("AN-15", "/0/message/usage", "error", "stream")]
    events = anthropic_events()
    events[-2]["usage"] = 9
    found = check.check_exchange(anthropic_request(), sse(events), "anthropic")
    assert [(v.rule, v.pointer, v.severity.value, v.where) for v in found.violations] == [
        ("AN-15", "/9/usage", "error", "stream")]
