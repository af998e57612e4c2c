"""Every defect of the seed post-mortems (transcribed from the design notes), as the checker and fixer
see it. The seeds' own lesson applies: each assertion pins exactly one expected value."""

from __future__ import annotations

import orjson

from inspector.flow import Flow
from inspector.wire import check, profiles
from inspector.wire.dialect import Dialect
from inspector.wire.fix import fix
from inspector.wire.session import check_session, entries_from_flows

from .wire_payloads import chat_request, mcp_list_result, responses_request

CHAT, RESP = "openai-chat", "openai-responses"


def _rules(violations):
    return [(v.rule, v.pointer, v.severity.value) for v in violations]


def _genai_tool():
    # What json.Marshal(genai.Schema) put on the wire in seed 000 (probe output, plus nested items).
    return {"type": "function", "function": {"name": "search", "parameters": {
        "properties": {"limit": {"type": "INTEGER"}, "query": {"description": "search text", "type": "STRING"},
                       "tags": {"type": "ARRAY", "items": {"type": "STRING"}}},
        "required": ["query"], "type": "OBJECT"}}}


def test_seed_000_genai_schema_with_upper_case_types_is_an_error_at_each_type():
    payload = {"model": "m", "tools": [_genai_tool()], "messages": [{"role": "user", "content": "x"}]}
    assert _rules(check.check_request(payload, CHAT)) == [
        ("OC-05", "/tools/0/function/parameters/type", "error"),
        ("OC-05", "/tools/0/function/parameters/properties/limit/type", "error"),
        ("OC-05", "/tools/0/function/parameters/properties/query/type", "error"),
        ("OC-05", "/tools/0/function/parameters/properties/tags/type", "error"),
        ("OC-05", "/tools/0/function/parameters/properties/tags/items/type", "error"),
    ]


def test_seed_000_schema_fix_lowercases_schema_nodes_only_and_passes():
    tool = _genai_tool()
    tool["function"]["parameters"]["properties"]["mode"] = {"type": "STRING", "format": "enum",
                                                            "enum": ["FAST", "SLOW"], "nullable": True}
    tool["function"]["parameters"]["propertyOrdering"] = ["query", "limit"]
    payload = {"model": "m", "tools": [tool], "messages": [{"role": "user", "content": "x"}]}
    fixed = fix(payload, CHAT).payload
    assert fixed["tools"][0]["function"]["parameters"] == {
        "properties": {"limit": {"type": "integer"}, "query": {"description": "search text", "type": "string"},
                       "tags": {"type": "array", "items": {"type": "string"}},
                       "mode": {"type": ["string", "null"], "enum": ["FAST", "SLOW"]}},
        "required": ["query"], "type": "object"}
    assert check.check_request(fixed, CHAT) == []


def test_seed_000_tool_message_that_lost_its_content_key():
    payload = chat_request()
    del payload["messages"][3]["content"]  # {"role":"tool","tool_call_id":"call_1"} after omitempty
    assert _rules(check.check_request(payload, CHAT)) == [("OC-17", "/messages/3/content", "error")]
    fixed = fix(payload, CHAT).payload
    assert fixed["messages"][3] == {"role": "tool", "tool_call_id": "call_1", "content": ""}
    assert check.check_request(fixed, CHAT) == []


def test_seed_000_mixed_function_response_and_text_must_be_split_not_dropped():
    # The genai source turn: a functionResponse and text in one user Content.
    source = {"contents": [
        {"role": "user", "parts": [{"text": "go"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "search", "args": {"query": "x"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "search", "response": {"output": "ok"}}},
                                   {"text": "and summarise"}]}]}
    # Model-dependent (gemini-2.5 accepts it): an error only for a model known to reject it.
    assert _rules(check.check_request(source, "gemini")) == [("GM-11", "/contents/2/parts/1", "warning")]
    rejecting = profiles.with_model(profiles.get(None, Dialect.GEMINI), "gemini-3.1-flash-lite")
    assert _rules(check.check_request(source, "gemini", rejecting)) == [("GM-11", "/contents/2/parts/1", "error")]
    # The fixed Chat form keeps the text in its own user message after the tool result.
    target = {"model": "m", "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call-1", "type": "function", "function": {"name": "search", "arguments": '{"query":"x"}'}}]},
        {"role": "tool", "tool_call_id": "call-1", "content": "ok"},
        {"role": "user", "content": "and summarise"}]}
    assert check.check_request(target, CHAT) == []


ENCODINGS = {
    "object": '{"query":"x"}',
    "double": '"{\\"query\\":\\"x\\"}"',
    "triple": '"\\"{\\\\\\"query\\\\\\":\\\\\\"x\\\\\\"}\\""',
    "array": '"[{\\"query\\":\\"x\\"}]"',
    "scalar": '"\\"just-a-string\\""',
}


def _with_arguments(arguments):
    payload = chat_request()
    payload["messages"][2]["tool_calls"][0]["function"]["arguments"] = arguments
    return payload


def test_seed_000_argument_encodings_are_named_exactly():
    messages = {}
    for name, arguments in ENCODINGS.items():
        violations = check.check_request(_with_arguments(arguments), CHAT)
        messages[name] = [(v.rule, v.message.split(": ", 1)[0]) for v in violations]
    assert messages == {
        "object": [],
        "double": [("OC-15", "arguments is a double-encoded JSON object (a JSON string that decodes to a string first)")],
        "triple": [("OC-15", "arguments is a triple-encoded JSON object (a JSON string that decodes to a string first)")],
        "array": [("OC-15", "arguments is a double-encoded JSON array, not an object")],
        "scalar": [("OC-15", "arguments is a double-encoded JSON scalar, not an object")],
    }


def test_seed_000_arguments_fix_unwraps_and_wraps_never_raw():
    fixed = {name: orjson.loads(fix(_with_arguments(arguments), CHAT).payload["messages"][2]["tool_calls"][0]
                                ["function"]["arguments"]) for name, arguments in ENCODINGS.items()}
    assert fixed == {"object": {"query": "x"}, "double": {"query": "x"}, "triple": {"query": "x"},
                     "array": {"value": [{"query": "x"}]}, "scalar": {"value": "just-a-string"}}


def test_seed_000_argument_unwrapping_is_bounded():
    arguments = '{"query":"x"}'
    for _ in range(12):
        arguments = orjson.dumps(arguments).decode()
    (violation,) = check.check_request(_with_arguments(arguments), CHAT)
    assert violation.message.startswith("arguments is a string still encoded after 4 decodes")
    repaired = fix(_with_arguments(arguments), CHAT).payload["messages"][2]["tool_calls"][0]["function"]["arguments"]
    assert orjson.loads(repaired) == {"value": arguments}


def test_seed_000_dotted_names_get_reversible_aliases_everywhere():
    payload = chat_request()
    payload["tools"][0]["function"]["name"] = "balda.control.shutdown"
    payload["tool_choice"] = {"type": "function", "function": {"name": "balda.control.shutdown"}}
    for call in payload["messages"][2]["tool_calls"]:
        call["function"]["name"] = "balda.control.shutdown"
    assert [v.pointer for v in check.check_request(payload, CHAT)] == [
        "/tools/0/function/name", "/messages/2/tool_calls/0/function/name", "/messages/2/tool_calls/1/function/name"]
    result = fix(payload, CHAT)
    alias = result.payload["tools"][0]["function"]["name"]
    assert alias == "balda_control_shutdown_" + __import__("hashlib").sha256(b"balda.control.shutdown").hexdigest()[:8]
    assert result.aliases == {alias: "balda.control.shutdown"}
    assert result.payload["tool_choice"]["function"]["name"] == alias
    assert {c["function"]["name"] for c in result.payload["messages"][2]["tool_calls"]} == {alias}
    assert check.check_request(result.payload, CHAT) == []


def test_seed_003_same_server_registered_twice_keep_the_scoped_entry():
    def flow(flow_id, query):
        return Flow(id=flow_id, session_id=1, started_at=0.0, method="POST", path="/balda", query=query,
                    upstream_url="http://127.0.0.1:7777/balda" + (f"?{query}" if query else ""),
                    request_body=b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
                    response_body=orjson.dumps(mcp_list_result()))
    violations = check_session(entries_from_flows([flow(1, ""), flow(2, "session=balda-session-memory-tok")]))
    assert {(v.rule, v.severity.value, v.where) for v in violations} == {("XL-03", "error", "2")}
    assert violations[0].hint.endswith("keep the session-scoped entry "
                                       "(http://127.0.0.1:7777/balda?session=balda-session-memory-tok).")
    # The seed's own pitfall: the explanation must not match the error it explains.
    assert all("duplicate tool:" not in v.message + v.why + v.hint for v in violations)


def test_seed_003_merged_toolsets_are_duplicates_in_every_dialect():
    assert [v.rule for v in check.check_request({"tools": [{"functionDeclarations": [
        {"name": "balda_shutdown"}, {"name": "balda_shutdown"}]}]}, "gemini")] == ["GM-14"]
    assert [v.rule for v in check.check_request({"model": "claude-test", "max_tokens": 100, "messages": [
        {"role": "user", "content": "shut down"}], "tools": [
        {"name": "balda_shutdown", "input_schema": {"type": "object"}},
        {"name": "balda_shutdown", "input_schema": {"type": "object"}}]}, "anthropic")] == ["AN-03"]
    chat = chat_request()
    chat["tools"][1]["function"]["name"] = "get_weather"
    assert [v.rule for v in check.check_request(chat, CHAT)] == ["XL-03"]


def test_seed_001_builtin_tools_alone_are_valid_in_responses():
    payload = {"model": "m", "input": "search", "tools": [
        {"type": "web_search", "search_context_size": "high", "user_location": {"type": "approximate"}},
        {"type": "file_search", "vector_store_ids": ["vs_1"]}]}
    assert check.check_request(payload, RESP) == []


def test_seed_001_builtin_degraded_into_an_empty_function_is_an_error():
    payload = {"model": "m", "input": "search", "tools": [
        {"type": "function", "name": "", "description": "", "parameters": None}]}
    assert _rules(check.check_request(payload, RESP)) == [("XL-09", "/tools/0/name", "error")]
    result = fix(payload, RESP)
    assert (result.payload["tools"], [(r.rule, r.action) for r in result.repairs]) == ([], [("XL-09", "dropped")])


def test_seed_001_invalid_entries_never_crash_and_builtin_options_survive_fixing():
    payload = {"model": "m", "input": "x", "tools": [None, 42, {"type": 7}, {"type": "web_search",
                                                                            "search_context_size": "high"}]}
    assert [v.pointer for v in check.check_request(payload, RESP)] == ["/tools/0", "/tools/1", "/tools/2/type"]
    assert fix(payload, RESP).payload["tools"][3] == {"type": "web_search", "search_context_size": "high"}


def _legacy():
    return {"model": "m", "functions": [{"name": "lookup", "parameters": {"type": "object", "properties": {"q": {"type": "integer"}}}}],
            "messages": [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": None, "function_call": {"name": "lookup", "arguments": '{"q":1}'}},
        {"role": "function", "name": "lookup", "content": "one"},
        {"role": "assistant", "content": None, "function_call": {"name": "lookup", "arguments": '{"q":2}'}},
        {"role": "function", "name": "lookup", "content": "two"},
        {"role": "user", "content": "thanks"}]}


def test_seed_004_legacy_function_history_is_valid_and_paired_by_name():
    assert check.check_request(_legacy(), CHAT) == []


def test_seed_004_orphan_legacy_result_is_flagged():
    payload = _legacy()
    payload["messages"].insert(5, {"role": "function", "name": "lookup", "content": "three"})
    assert _rules(check.check_request(payload, CHAT)) == [("XL-05", "/messages/5/name", "warning")]


def test_seed_004_null_functions_and_tool_choice_mean_absent():
    payload = _legacy()
    payload.update(functions=None, tool_choice=None, function_call=None)
    assert _rules(check.check_request(payload, CHAT)) == [
        ("OC-09", "/functions", "info"), ("OC-09", "/tool_choice", "info"), ("OC-09", "/function_call", "info")]


def test_seed_004_synthetic_id_colliding_with_a_real_one():
    payload = responses_request()
    payload["input"] += [
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "x"}]
    assert ("XL-04", "/input/5/call_id", "error") in _rules(check.check_request(payload, RESP))


def test_seed_004_tools_and_functions_with_the_same_name():
    payload = _legacy()
    payload["tools"] = [{"type": "function", "function": {"name": "lookup"}}]
    assert _rules(check.check_request(payload, CHAT)) == [("XL-03", "/functions/0/name", "error")]
