"""Gemini's schema dialect and field spellings (contracts GM-16, GM-17, XL-01): the one conversion
home in both directions, the checker's findings on the same cases, the fixer, and the bridges that
use them. Findings and losses are asserted as whole lists."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from inspector.wire import check
from inspector.wire.dialect import Dialect
from inspector.wire.dialects.gemini.fields import doubled, normalise, spelled
from inspector.wire.dialects.gemini.schema import Change, to_json_schema
from inspector.wire.fix import fix
from inspector.wire.summary import request_facts, response_tool_calls
from inspector.wire.translate import get_bridge

CHAT, ANT, GEM = Dialect.OPENAI_CHAT, Dialect.ANTHROPIC, Dialect.GEMINI
CHAT_PATH = "/v1/chat/completions"
GEM_PATH = "/v1beta/models/gemini-2.5-flash:generateContent"
D = "/tools/0/functionDeclarations/0"


def chat_with(parameters: dict[str, Any]) -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "f", "parameters": parameters}}]}


def gemini_with(parameters: dict[str, Any], key: str = "parameters") -> dict[str, Any]:
    return {"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "tools": [{"functionDeclarations": [{"name": "f", key: parameters}]}]}


def to_gemini(parameters: dict[str, Any]) -> tuple[Any, list[tuple[str, str | None, str, str]]]:
    sent = get_bridge(CHAT, GEM).request(chat_with(parameters), CHAT_PATH)
    for profile in (None, "vertex"):  # what we send passes our own checker, on both Google APIs
        assert [v for v in check.check_request(sent.payload, GEM, profile) if v.severity.value == "error"] == []
    return sent.payload["tools"][0]["functionDeclarations"][0], [
        (loss.source, loss.target, loss.kind, loss.rule) for loss in sent.losses]


def findings(parameters: dict[str, Any], profile: str | None = None) -> list[tuple[str, str, str]]:
    return [(v.rule, v.pointer, v.severity.value) for v in check.check_request(gemini_with(parameters), GEM, profile)]


OBJ = {"type": "OBJECT", "properties": {"a": {"type": "STRING"}}}


# --- JSON Schema -> Gemini (GM-17) ---------------------------------------------------------------

def test_a_root_object_union_is_merged_into_one_object_with_a_report() -> None:
    decl, losses = to_gemini({"anyOf": [
        {"type": "object", "properties": {"a": {"type": "string"}, "n": {"type": "integer"}}, "required": ["a", "n"]},
        {"type": "object", "properties": {"b": {"type": "boolean"}, "n": {"type": "number"}}, "required": ["n"]}]})
    assert decl["parameters"] == {"type": "OBJECT", "properties": {
        "a": {"type": "STRING"}, "n": {"anyOf": [{"type": "INTEGER"}, {"type": "NUMBER"}]}, "b": {"type": "BOOLEAN"}},
        "required": ["n"]}
    assert losses == [("/tools/0/function/parameters/anyOf", f"{D}/parameters/properties", "merged", "GM-17")]


def test_a_root_oneof_union_is_merged_and_its_oneof_reported() -> None:
    decl, losses = to_gemini({"oneOf": [{"type": "object", "properties": {"a": {"type": "string"}}},
                                        {"type": "object", "properties": {"b": {"type": "string"}}}]})
    assert decl["parameters"] == {"type": "OBJECT", "properties": {"a": {"type": "STRING"}, "b": {"type": "STRING"}}}
    assert losses == [("/tools/0/function/parameters/oneOf", f"{D}/parameters/anyOf", "converted", "XL-01"),
                      ("/tools/0/function/parameters/oneOf", f"{D}/parameters/properties", "merged", "GM-17")]


def test_keywords_beside_anyof_move_into_every_branch() -> None:
    decl, losses = to_gemini({"type": "object", "properties": {"x": {
        "description": "d", "maxLength": 5, "anyOf": [{"type": "string"}, {"type": "number", "maximum": 9}]}}})
    assert decl["parameters"]["properties"]["x"] == {"description": "d", "anyOf": [
        {"type": "STRING", "maxLength": 5}, {"type": "NUMBER", "maximum": 9, "maxLength": 5}]}
    assert losses == [("/tools/0/function/parameters/properties/x/maxLength", f"{D}/parameters/properties/x/anyOf", "moved",
                       "GM-17")]


def test_a_type_list_becomes_anyof_and_its_keywords_move_into_the_branches() -> None:
    decl, losses = to_gemini({"type": "object", "properties": {"x": {
        "type": ["integer", "string", "null"], "minimum": 1, "description": "d"}}})
    assert decl["parameters"]["properties"]["x"] == {"description": "d", "anyOf": [
        {"type": "INTEGER", "minimum": 1, "nullable": True}, {"type": "STRING", "minimum": 1, "nullable": True}]}
    P = "/tools/0/function/parameters/properties/x"
    assert losses == [(f"{P}/type", f"{D}/parameters/properties/x/anyOf", "converted", "XL-01"),
                      (f"{P}/minimum", f"{D}/parameters/properties/x/anyOf", "moved", "GM-17")]


def test_allof_branches_merge_into_one_schema() -> None:
    decl, losses = to_gemini({"type": "object", "properties": {"x": {"allOf": [
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        {"properties": {"b": {"type": "integer"}}, "required": ["b"]}], "description": "both"}}})
    assert decl["parameters"]["properties"]["x"] == {"type": "OBJECT", "description": "both", "properties": {
        "b": {"type": "INTEGER"}, "a": {"type": "STRING"}}, "required": ["a", "b"]}
    assert losses == [("/tools/0/function/parameters/properties/x/allOf", f"{D}/parameters/properties/x", "merged", "XL-01")]


def test_object_keywords_moved_into_a_non_object_branch_are_dropped_as_vacuous() -> None:
    decl, losses = to_gemini({"type": "object", "properties": {"x": {
        "properties": {"k": {"type": "string"}}, "anyOf": [{"type": "string"}, {"type": "object"}]}}})
    assert decl["parameters"]["properties"]["x"] == {"anyOf": [
        {"type": "STRING"}, {"type": "OBJECT", "properties": {"k": {"type": "STRING"}}}]}
    P = "/tools/0/function/parameters/properties/x"
    assert losses == [(f"{P}/properties", f"{D}/parameters/properties/x/anyOf", "moved", "GM-17"),
                      (f"{P}/anyOf/0/properties", None, "dropped", "XL-01")]


def test_a_root_object_with_required_alternatives_keeps_its_properties() -> None:
    # {"required": [a]} | {"required": [b]} beside the object: the branches become whole objects, merged.
    decl, losses = to_gemini({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                              "anyOf": [{"required": ["a"]}, {"required": ["b"]}]})
    assert decl["parameters"] == {"type": "OBJECT", "properties": {"a": {"type": "STRING"}, "b": {"type": "STRING"}}}
    assert losses == [("/tools/0/function/parameters/type", f"{D}/parameters/anyOf", "moved", "GM-17"),
                      ("/tools/0/function/parameters/properties", f"{D}/parameters/anyOf", "moved", "GM-17"),
                      ("/tools/0/function/parameters/anyOf", f"{D}/parameters/properties", "merged", "GM-17")]


def test_untyped_nodes_items_and_formats_are_rewritten_as_gemini_accepts() -> None:
    decl, losses = to_gemini({"type": "object", "properties": {
        "list": {"type": "array", "items": {}}, "bare": {"type": "array"}, "any": {},
        "either": {"anyOf": [{}, {"type": "integer"}]}, "obj": {"properties": {"k": {"type": "string"}}},
        "num": {"minimum": 0}, "many": {"minItems": 1},
        "mail": {"type": "string", "format": "email"}, "when": {"type": "string", "format": "date-time"},
        "big": {"type": "integer", "format": "int64"}, "id": {"type": "string", "format": "uuid"}}})
    P = "/tools/0/function/parameters/properties"
    T = f"{D}/parameters/properties"
    assert decl["parameters"]["properties"] == {
        "list": {"type": "ARRAY", "items": {"type": "STRING"}}, "bare": {"type": "ARRAY", "items": {"type": "STRING"}},
        "any": {"type": "STRING"}, "either": {"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]},
        "obj": {"type": "OBJECT", "properties": {"k": {"type": "STRING"}}},
        "num": {"type": "NUMBER", "minimum": 0}, "many": {"type": "ARRAY", "minItems": 1, "items": {"type": "STRING"}},
        "mail": {"type": "STRING"}, "when": {"type": "STRING", "format": "date-time"},
        "big": {"type": "INTEGER", "format": "int64"}, "id": {"type": "STRING"}}
    assert losses == [
        (f"{P}/list/items", f"{T}/list/items/type", "synthesised", "GM-17"),
        (f"{P}/bare", f"{T}/bare/items", "synthesised", "GM-17"),
        (f"{P}/any", f"{T}/any/type", "synthesised", "GM-17"),
        (f"{P}/either/anyOf/0", f"{T}/either/anyOf/0/type", "synthesised", "GM-17"),
        (f"{P}/obj", f"{T}/obj/type", "synthesised", "GM-17"),
        (f"{P}/num", f"{T}/num/type", "synthesised", "GM-17"),
        (f"{P}/many", f"{T}/many/type", "synthesised", "GM-17"),
        (f"{P}/many", f"{T}/many/items", "synthesised", "GM-17"),
        (f"{P}/mail/format", None, "dropped", "GM-17"),
        (f"{P}/id/format", None, "dropped", "GM-17"),
    ]


def test_null_branches_fold_into_nullable() -> None:
    decl, losses = to_gemini({"type": "object", "properties": {
        "opt": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "maybe", "default": None},
        "two": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}}})
    assert decl["parameters"]["properties"] == {
        "opt": {"description": "maybe", "default": None, "type": "STRING", "nullable": True},
        "two": {"anyOf": [{"type": "STRING", "nullable": True}, {"type": "INTEGER", "nullable": True}]}}
    P = "/tools/0/function/parameters/properties"
    assert losses == [(f"{P}/opt/anyOf/1", f"{D}/parameters/properties/opt/nullable", "converted", "GM-17"),
                      (f"{P}/two/anyOf/2", f"{D}/parameters/properties/two/nullable", "converted", "GM-17")]


def test_a_root_that_is_no_object_goes_as_parameters_json_schema_with_a_report() -> None:
    decl, losses = to_gemini({"type": "string"})
    assert decl == {"name": "f", "parametersJsonSchema": {"type": "string"}}
    assert losses == [("/tools/0", f"{D}/parametersJsonSchema", "converted", "XL-01")]


def test_an_object_without_properties_declares_no_parameters_near_miss() -> None:
    decl, losses = to_gemini({"type": "object", "properties": {}})
    assert (decl, losses) == ({"name": "f"}, [])


# --- genai -> JSON Schema (XL-01), the one conversion both the bridge and the fixer use -----------

def test_genai_to_json_schema_keeps_null_under_anyof_and_drops_a_nullable_root() -> None:
    changes: list[Change] = []
    out = to_json_schema({"type": "OBJECT", "nullable": True, "properties": {
        "u": {"anyOf": [{"type": "INTEGER"}, {"type": "STRING"}], "nullable": True},
        "t": {"type": "TYPE_UNSPECIFIED", "example": 3}, "n": {"nullable": True, "enum": ["a"]}}},
        "/p", "/q", changes, root=True)
    assert out == {"type": "object", "properties": {
        "u": {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]},
        "t": {"examples": [3]}, "n": {"anyOf": [{"enum": ["a"]}, {"type": "null"}]}}}
    assert [(c.source, c.target, c.kind) for c in changes] == [
        ("/p/type", "/q/type", "converted"),
        ("/p/properties/u/anyOf/0/type", "/q/properties/u/anyOf/0/type", "converted"),
        ("/p/properties/u/anyOf/1/type", "/q/properties/u/anyOf/1/type", "converted"),
        ("/p/properties/u/nullable", "/q/properties/u/anyOf", "converted"),
        ("/p/properties/t/type", None, "dropped"),
        ("/p/properties/t/example", "/q/properties/t/examples", "converted"),
        ("/p/properties/n/nullable", "/q/properties/n/anyOf", "converted"),
        ("/p/nullable", None, "dropped"),
    ]


def test_json_schema_is_unchanged_by_the_genai_conversion_near_miss() -> None:
    schema = {"type": "object", "properties": {"a": {"type": ["string", "null"], "examples": ["x"]},
                                               "b": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}}
    changes: list[Change] = []
    assert to_json_schema(copy.deepcopy(schema), "", "", changes, root=True) == schema
    assert changes == []


def test_a_nullable_genai_root_reaches_chat_as_an_object_root() -> None:
    sent = get_bridge(GEM, CHAT).request(gemini_with({**OBJ, "nullable": True}), GEM_PATH)
    assert sent.payload["tools"][0]["function"]["parameters"] == {"type": "object", "properties": {
        "a": {"type": "string"}}}
    assert [(loss.source, loss.kind) for loss in sent.losses if loss.rule == "XL-01"] == [
        (f"{D}/parameters/type", "converted"), (f"{D}/parameters/properties/a/type", "converted"),
        (f"{D}/parameters/nullable", "dropped")]
    assert [v.rule for v in check.check_request(sent.payload, CHAT)] == []


def test_the_fixer_keeps_null_under_anyof_and_an_object_root() -> None:
    payload = chat_with({"type": "OBJECT", "nullable": True, "properties": {
        "u": {"anyOf": [{"type": "integer"}, {"type": "string"}], "nullable": True}}})
    result = fix(payload, "openai-chat")
    assert result.payload["tools"][0]["function"]["parameters"] == {"type": "object", "properties": {
        "u": {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]}}}
    assert [(r.rule, r.pointer, r.action) for r in result.repairs] == [
        ("OC-05", "/tools/0/function/parameters/type", "converted"),
        ("OC-05", "/tools/0/function/parameters/properties/u/nullable", "converted"),
        ("OC-05", "/tools/0/function/parameters/nullable", "removed")]


# --- the checker flags what the conversion rewrites (GM-17) ---------------------------------------

P0 = f"{D}/parameters"


@pytest.mark.parametrize(("name", "parameters", "profile", "expected"), [
    ("array without items", {"type": "OBJECT", "properties": {"l": {"type": "ARRAY"}}}, None,
     [("GM-17", f"{P0}/properties/l", "error")]),
    ("untyped property", {"type": "OBJECT", "properties": {"x": {"description": "anything"}}}, None,
     [("GM-17", f"{P0}/properties/x", "error")]),
    ("untyped anyOf branch", {"type": "OBJECT", "properties": {"x": {"anyOf": [{}, {"type": "STRING"}]}}}, None,
     [("GM-17", f"{P0}/properties/x/anyOf/0", "error")]),
    ("untyped items", {"type": "OBJECT", "properties": {"l": {"type": "ARRAY", "items": {}}}}, None,
     [("GM-17", f"{P0}/properties/l/items", "error")]),
    ("format Gemini refuses", {"type": "OBJECT", "properties": {"m": {"type": "STRING", "format": "email"}}}, None,
     [("GM-17", f"{P0}/properties/m/format", "warning")]),
    ("keyword beside anyOf on Vertex", {"type": "OBJECT", "properties": {"x": {
        "maxLength": 3, "anyOf": [{"type": "STRING"}, {"type": "NUMBER"}]}}}, "vertex",
     [("GM-17", f"{P0}/properties/x/maxLength", "error")]),
    ("root object union on Vertex", {"anyOf": [OBJ, OBJ]}, "vertex", [("GM-06", P0, "error")]),
])
def test_gm17_trips(name: str, parameters: dict[str, Any], profile: str | None,
                    expected: list[tuple[str, str, str]]) -> None:
    assert findings(parameters, profile) == expected


@pytest.mark.parametrize(("name", "parameters", "profile"), [
    ("array with typed items", {"type": "OBJECT", "properties": {"l": {"type": "ARRAY", "items": {"type": "STRING"}}}},
     None),
    ("typed through anyOf", {"type": "OBJECT", "properties": {"x": {"anyOf": [{"type": "STRING"}, OBJ]}}}, None),
    ("typed through enum or properties", {"type": "OBJECT", "properties": {"e": {"enum": ["a"]}, "o": OBJ}}, None),
    ("formats Gemini accepts", {"type": "OBJECT", "properties": {
        "w": {"type": "STRING", "format": "date-time"}, "i": {"type": "INTEGER", "format": "int32"},
        "n": {"type": "NUMBER", "format": "double"}, "e": {"type": "STRING", "format": "enum", "enum": ["a"]}}}, None),
    ("description beside anyOf on Vertex", {"type": "OBJECT", "properties": {"x": {
        "description": "d", "anyOf": [{"type": "STRING"}, {"type": "NUMBER"}]}}}, "vertex"),
    ("keyword beside anyOf on the Gemini API", {"type": "OBJECT", "properties": {"x": {
        "maxLength": 3, "anyOf": [{"type": "STRING"}, {"type": "NUMBER"}]}}}, None),
])
def test_gm17_near_misses(name: str, parameters: dict[str, Any], profile: str | None) -> None:
    assert findings(parameters, profile) == []


def test_the_fixer_rewrites_a_gemini_schema_into_the_subset() -> None:
    payload = gemini_with({"anyOf": [
        {"type": "object", "properties": {"l": {"type": "array", "items": {}}, "m": {"type": "string", "format": "uri"}}},
        {"type": "object", "properties": {"k": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}]})
    result = fix(payload, "gemini", "vertex")
    assert result.payload["tools"][0]["functionDeclarations"][0]["parameters"] == {"type": "OBJECT", "properties": {
        "l": {"type": "array", "items": {"type": "STRING"}}, "m": {"type": "string"},
        "k": {"type": "string", "nullable": True}}}
    A = f"{P0}/anyOf"
    assert [(r.rule, r.pointer, r.action) for r in result.repairs] == [
        ("GM-17", f"{A}/0/properties/l/items", "synthesised"),
        ("GM-17", f"{A}/0/properties/m/format", "removed"),
        ("GM-17", f"{A}/1/properties/k/anyOf/1", "converted"),
        ("GM-17", A, "merged")]
    assert check.check_request(result.payload, GEM, "vertex") == []


# --- field spellings (GM-16) ---------------------------------------------------------------------

SNAKE = {
    "system_instruction": {"parts": [{"text": "be brief"}]},
    "contents": [
        {"role": "user", "parts": [{"text": "weather?"}]},
        {"role": "model", "parts": [{"function_call": {"name": "get_weather", "args": {"city_name": "Oslo"}}}]},
        {"role": "user", "parts": [{"function_response": {"name": "get_weather",
                                                          "response": {"temp_c": 4}}}]}],
    "tools": [{"function_declarations": [{"name": "get_weather", "parameters_json_schema": {
        "type": "object", "properties": {"city_name": {"type": "string"}}, "required": ["city_name"],
        "additionalProperties": False}}]}],
    "tool_config": {"function_calling_config": {"mode": "ANY"}},
    "generation_config": {"max_output_tokens": 256, "top_p": 0.5},
}


def test_snake_case_gemini_reaches_chat_with_schema_calls_and_settings() -> None:
    sent = get_bridge(GEM, CHAT).request(copy.deepcopy(SNAKE), GEM_PATH)
    out = sent.payload
    assert out["tools"] == [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city_name": {"type": "string"}}, "required": ["city_name"],
        "additionalProperties": False}}}]
    assert out["messages"][0] == {"role": "system", "content": "be brief"}
    assert out["messages"][2]["tool_calls"][0]["function"] == {"name": "get_weather",
                                                                "arguments": '{"city_name":"Oslo"}'}
    assert out["messages"][3]["content"] == '{"temp_c":4}'
    assert (out["tool_choice"], out["top_p"]) == ("required", 0.5)
    assert 256 in (out.get("max_tokens"), out.get("max_completion_tokens"))
    # Pointers in the report are the client's own spelling.
    call_id = out["messages"][2]["tool_calls"][0]["id"]
    assert out["messages"][3]["tool_call_id"] == call_id
    assert [(loss.source, loss.kind, loss.rule) for loss in sent.losses] == [
        ("/contents/2/parts/0/function_response/response", "converted", "XL-15"),
        ("/contents/1/parts/0", "synthesised", "XL-04")]


def test_a_chat_tool_call_reaches_a_snake_case_gemini_client_with_its_arguments() -> None:
    bridge = get_bridge(GEM, CHAT)
    sent = bridge.request(copy.deepcopy(SNAKE), GEM_PATH)
    reply = {"id": "c", "object": "chat.completion", "created": 1, "model": "gpt-4o", "choices": [{
        "index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_9", "type": "function", "function": {"name": "get_weather",
                                                              "arguments": '{"city_name":"Rome"}'}}]}}]}
    parts = bridge.response(reply, sent.state).payload["candidates"][0]["content"]["parts"]
    assert parts == [{"functionCall": {"id": "call_9", "name": "get_weather", "args": {"city_name": "Rome"}}}]


def test_snake_case_upstream_responses_are_read() -> None:
    bridge = get_bridge(CHAT, GEM)
    sent = bridge.request(chat_with({"type": "object", "properties": {"q": {"type": "string"}}}), CHAT_PATH)
    reply = {"candidates": [{"content": {"role": "model", "parts": [
        {"function_call": {"name": "f", "args": {"q": "x"}}}]}, "finish_reason": "STOP"}],
        "usage_metadata": {"prompt_token_count": 3, "candidates_token_count": 2}}
    out = bridge.response(reply, sent.state).payload
    call = out["choices"][0]["message"]["tool_calls"][0]
    assert (call["function"], out["choices"][0]["finish_reason"], out["usage"]["prompt_tokens"]) == (
        {"name": "f", "arguments": '{"q":"x"}'}, "tool_calls", 3)


def test_snake_case_upstream_stream_chunks_are_read() -> None:
    bridge = get_bridge(CHAT, GEM)
    request = chat_with({"type": "object", "properties": {"q": {"type": "string"}}})
    sent = bridge.request({**request, "stream": True}, CHAT_PATH)
    stream = bridge.stream(sent.state)
    chunk = {"candidates": [{"content": {"role": "model", "parts": [
        {"function_call": {"name": "f", "args": {"q": "x"}}}]}, "finish_reason": "STOP"}],
        "usage_metadata": {"prompt_token_count": 3, "candidates_token_count": 2}}
    out = (stream.feed(b"data: " + orjson.dumps(chunk) + b"\r\n\r\n") + stream.close()).decode()
    events = [orjson.loads(line[6:]) for line in out.split("\n\n") if line.startswith("data: {")]
    calls = [call for event in events for choice in event["choices"] for call in choice["delta"].get("tool_calls", [])]
    assert [(call["function"].get("name"), call["function"]["arguments"]) for call in calls] == [
        ("f", ""), (None, '{"q":"x"}')]
    assert [choice["finish_reason"] for event in events for choice in event["choices"] if choice["finish_reason"]] \
        == ["tool_calls"]


def test_normalise_respells_messages_but_never_data() -> None:
    doc = {"tools": [{"function_declarations": [{"name": "f", "parameters": {"type": "OBJECT", "properties": {
        "snake_name": {"type": "STRING", "enum": ["a_b"], "max_length": 3}}}}]}],
        "contents": [{"parts": [{"function_call": {"name": "f", "args": {"snake_key": {"inner_key": 1}}}}]}],
        "labels": {"team_name": "x"}}
    assert normalise(doc) == {"tools": [{"functionDeclarations": [{"name": "f", "parameters": {
        "type": "OBJECT", "properties": {"snake_name": {"type": "STRING", "enum": ["a_b"], "maxLength": 3}}}}]}],
        "contents": [{"parts": [{"functionCall": {"name": "f", "args": {"snake_key": {"inner_key": 1}}}}]}],
        "labels": {"team_name": "x"}}
    assert spelled(doc, "/tools/0/functionDeclarations/0/parameters/properties/snake_name/maxLength") == \
        "/tools/0/function_declarations/0/parameters/properties/snake_name/max_length"


def test_gm16_a_field_in_both_spellings_is_flagged() -> None:
    payload = gemini_with(OBJ)
    payload["generation_config"] = {"temperature": 1}
    payload["generationConfig"] = {"temperature": 0}
    assert [(v.rule, v.pointer, v.severity.value) for v in check.check_request(payload, GEM)] == [
        ("GM-16", "/generation_config", "warning")]
    assert doubled({"args": {"a_b": 1, "aB": 2}}) == []  # data keys are the client's: near miss
    near = gemini_with(OBJ)
    near["generation_config"] = {"max_output_tokens": 9}
    assert check.check_request(near, GEM) == []


def test_the_fixer_keeps_the_camelcase_twin_of_a_doubled_field() -> None:
    payload = gemini_with(OBJ)
    payload["generation_config"] = {"temperature": 1, "top_p": 1, "topP": 0.5}
    payload["generationConfig"] = {"temperature": 0}
    payload["contents"][0]["parts"][0]["thought_signature"] = "c2ln"
    result = fix(payload, "gemini")
    assert [(r.rule, r.pointer, r.action) for r in result.repairs] == [("GM-16", "/generation_config", "removed")]
    assert set(result.payload) == {"contents", "tools", "generationConfig"}
    assert check.check_request(result.payload, GEM) == []


# --- summaries -----------------------------------------------------------------------------------

def test_summaries_count_declarations_and_calls_in_either_spelling() -> None:
    assert request_facts(SNAKE, GEM, GEM_PATH) == ("gemini-2.5-flash", 1)
    two = {"tools": [{"function_declarations": [{"name": "a"}, {"name": "b"}]}, {"google_search": {}}]}
    assert request_facts(two, GEM, GEM_PATH) == ("gemini-2.5-flash", 3)
    reply = {"candidates": [{"content": {"parts": [{"function_call": {"name": "a"}}, {"functionCall": {"name": "b"}},
                                                   {"text": "x"}]}}]}
    assert response_tool_calls(reply, GEM) == 2


# --- Anthropic: a root-anyOf schema nested under "value" ----------------------------------------

UNION = {"anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}},
                   {"type": "object", "properties": {"b": {"type": "integer"}}}]}


def _to_anthropic() -> tuple[Any, Any]:
    bridge = get_bridge(CHAT, ANT)
    request = chat_with(UNION)
    request["messages"] += [
        {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
                                              "function": {"name": "f", "arguments": '{"a":"x"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "ok"}]
    return bridge, bridge.request(request, CHAT_PATH)


def test_a_value_wrapped_tool_is_wrapped_in_history_too() -> None:
    _, sent = _to_anthropic()
    assert sent.payload["tools"][0]["input_schema"] == {"type": "object", "properties": {"value": UNION},
                                                        "required": ["value"]}
    assert sent.payload["messages"][1]["content"][0]["input"] == {"value": {"a": "x"}}
    assert [(loss.source, loss.target, loss.kind) for loss in sent.losses] == [
        ("/messages/1/tool_calls/0", "/messages/1/content/0/input", "converted"),
        ("/tools/0", "/tools/0/input_schema", "synthesised"),
        ("", "/max_tokens", "synthesised")]
    assert check.check_request(sent.payload, ANT) == []


def test_a_value_wrapped_call_comes_back_unwrapped_as_json() -> None:
    bridge, sent = _to_anthropic()
    reply = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude", "stop_reason": "tool_use",
             "content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"value": {"b": 3}}}],
             "usage": {"input_tokens": 1, "output_tokens": 2}}
    calls = bridge.response(reply, sent.state).payload["choices"][0]["message"]["tool_calls"]
    assert [c["function"] for c in calls] == [{"name": "f", "arguments": '{"b":3}'}]


def _events(*pairs: tuple[str, dict[str, Any]]) -> bytes:
    return b"".join(f"event: {name}\ndata: {orjson.dumps(data).decode()}\n\n".encode() for name, data in pairs)


@pytest.mark.parametrize(("pieces", "expected"), [
    (['{"value": {"b"', ': 3}}'], '{"b":3}'), (['{"val', 'ue": {"b": 3}', "}"], '{"b":3}'),
    (['{"value": {"b"'], '{"value": {"b"'),  # cut short: passed on as it came, not a crash
])
def test_a_value_wrapped_call_comes_back_unwrapped_in_a_stream(pieces: list[str], expected: str) -> None:
    bridge, sent = _to_anthropic()
    stream = bridge.stream(sent.state)
    body = _events(
        ("message_start", {"type": "message_start", "message": {"id": "m", "model": "c", "usage": {}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {
            "type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}}),
        *[("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
            "type": "input_json_delta", "partial_json": piece}}) for piece in pieces],
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}}),
        ("message_stop", {"type": "message_stop"}))
    out = stream.feed(body) + stream.close()
    chunks = [orjson.loads(line[6:]) for line in out.decode().split("\n\n") if line.startswith("data: {")]
    arguments = "".join(call["function"].get("arguments", "") for chunk in chunks for choice in chunk["choices"]
                        for call in choice["delta"].get("tool_calls", []))
    assert arguments == expected


def test_an_object_tool_is_not_wrapped_near_miss() -> None:
    bridge = get_bridge(CHAT, ANT)
    sent = bridge.request(chat_with({"type": "object", "properties": {"value": {"type": "object"}}}), CHAT_PATH)
    reply = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude", "stop_reason": "tool_use",
             "content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"value": {"b": 3}}}],
             "usage": {"input_tokens": 1, "output_tokens": 2}}
    calls = bridge.response(reply, sent.state).payload["choices"][0]["message"]["tool_calls"]
    assert [c["function"]["arguments"] for c in calls] == ['{"value":{"b":3}}']
