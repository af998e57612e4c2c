"""One test (or a table) per cross-dialect rule XL-01..XL-15 that the translation must honour."""

from __future__ import annotations

import re

import orjson
import pytest

from inspector.wire.dialect import Dialect
from inspector.wire.translate import TranslationError, UnsupportedPair, get_bridge, translate_document
from inspector.wire.naming import NAME_RULES, IdMap, NameMap

from . import translate_cases as cases

CHAT, RESP, ANT, GEM = Dialect.OPENAI_CHAT, Dialect.OPENAI_RESPONSES, Dialect.ANTHROPIC, Dialect.GEMINI
CHAT_PATH = "/v1/chat/completions"


def chat(messages: list, **extra) -> dict:
    return {"model": "gpt-4o", "messages": messages, **extra}


def tool(name: str, parameters: dict | None = None) -> dict:
    return {"type": "function", "function": {"name": name, "parameters": parameters or {
        "type": "object", "properties": {"q": {"type": "string"}}}}}


def losses(translation) -> list[tuple[str, str | None, str, str]]:
    return [(loss.source, loss.target, loss.kind, loss.rule) for loss in translation.losses]


# --- XL-01 schemas -------------------------------------------------------------------------------

def test_xl01_genai_schema_becomes_json_schema_only_on_schema_nodes() -> None:
    gemini = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "tools": [{"functionDeclarations": [{
        "name": "pick", "parameters": {"type": "OBJECT", "properties": {
            "type": {"type": "STRING", "enum": ["OBJECT", "STRING"], "example": "OBJECT"},
            "tags": {"type": "ARRAY", "nullable": True, "items": {"type": "STRING"}},
            "deep": {"anyOf": [{"type": "INTEGER"}, {"type": "BOOLEAN"}], "nullable": True}},
            "required": ["type"], "propertyOrdering": ["type", "tags"]}}]}]}
    sent = get_bridge(GEM, CHAT).request(gemini, "/v1beta/models/gemini-2.5-flash:generateContent")
    assert sent.payload["tools"][0]["function"]["parameters"] == {"type": "object", "properties": {
        "type": {"type": "string", "enum": ["OBJECT", "STRING"], "examples": ["OBJECT"]},
        "tags": {"type": ["array", "null"], "items": {"type": "string"}},
        "deep": {"anyOf": [{"type": "integer"}, {"type": "boolean"}, {"type": "null"}]}},
        "required": ["type"]}
    assert ("/tools/0/functionDeclarations/0/parameters/propertyOrdering", None, "dropped", "XL-01") in losses(sent)


def test_xl01_json_schema_to_gemini_drops_or_rewrites_what_gemini_rejects() -> None:
    parameters = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                  "additionalProperties": False, "properties": {
                      "mode": {"const": "fast"}, "note": {"type": ["string", "null"]},
                      "level": {"type": "integer", "enum": [1, 2]},
                      "when": {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}]}}}
    sent = get_bridge(CHAT, GEM).request(chat([{"role": "user", "content": "hi"}], tools=[tool("f", parameters)]),
                                         CHAT_PATH)
    assert sent.payload["tools"] == [{"functionDeclarations": [{"name": "f", "parameters": {
        "type": "OBJECT", "properties": {
            "mode": {"enum": ["fast"], "type": "STRING"}, "note": {"type": "STRING", "nullable": True},
            "level": {"type": "STRING", "enum": ["1", "2"]},
            "when": {"type": "STRING", "format": "date-time", "nullable": True}}}}]}]
    dropped = [loss.source for loss in sent.losses if loss.kind == "dropped" and loss.rule == "XL-01"]
    assert dropped == ["/tools/0/function/parameters/$schema", "/tools/0/function/parameters/additionalProperties"]


def test_xl01_json_schema_with_refs_goes_to_gemini_as_parameters_json_schema() -> None:
    parameters = {"type": "object", "properties": {"p": {"$ref": "#/$defs/P"}},
                  "$defs": {"P": {"type": "object", "properties": {"x": {"type": "number"}}}}}
    sent = get_bridge(CHAT, GEM).request(chat([{"role": "user", "content": "hi"}], tools=[tool("f", parameters)]),
                                         CHAT_PATH)
    assert sent.payload["tools"][0]["functionDeclarations"][0] == {"name": "f", "parametersJsonSchema": parameters}
    assert ("/tools/0", "/tools/0/functionDeclarations/0/parametersJsonSchema", "converted", "XL-01") in losses(sent)


# --- XL-02 / XL-03 names -------------------------------------------------------------------------

def test_xl02_aliases_are_reversed_in_the_json_response_and_the_stream() -> None:
    bridge = get_bridge(CHAT, ANT)
    sent = bridge.request(chat([{"role": "user", "content": "hi"}], tools=[tool("admin.tools.list")]), CHAT_PATH)
    alias = sent.payload["tools"][0]["name"]
    assert alias == "admin_tools_list_" + alias.rsplit("_", 1)[1] and re.fullmatch(r"[0-9a-f]{8}", alias[-8:])
    upstream = {**cases.ANTHROPIC_RESPONSE, "content": [
        {"type": "tool_use", "id": "toolu_a", "name": alias, "input": {"q": "x"}}]}
    back = bridge.response(upstream, sent.state)
    assert back.payload["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "admin.tools.list"
    stream = cases.ANTHROPIC_STREAM.replace(b'"get_weather"', orjson.dumps(alias))
    out, _ = cases.run_stream(bridge.stream(sent.state), stream, 11)
    names = [c["function"]["name"] for e in cases.events(out)[:-1] for c in e["choices"][0]["delta"].get("tool_calls", [])
             if "name" in c.get("function", {})]
    assert names == ["admin.tools.list", "get_time"]


def test_xl02_replayed_history_gets_the_same_alias_as_the_declaration() -> None:
    history = chat([{"role": "user", "content": "hi"},
                    {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
                                                          "function": {"name": "admin.tools.list", "arguments": "{}"}}]},
                    {"role": "tool", "tool_call_id": "call_1", "content": "[]"}],
                   tools=[tool("admin.tools.list")], tool_choice={"type": "function",
                                                                   "function": {"name": "admin.tools.list"}})
    sent = get_bridge(CHAT, RESP).request(history, CHAT_PATH)
    alias = sent.payload["tools"][0]["name"]
    assert sent.payload["input"][1]["name"] == alias
    assert sent.payload["tool_choice"] == {"type": "function", "name": alias}
    assert sent.state.aliases == {alias: "admin.tools.list"}


def test_xl02_long_names_are_cut_injectively_and_gemini_keeps_dots() -> None:
    long_a, long_b = "x" * 70 + "a", "x" * 70 + "b"
    names = NameMap(NAME_RULES[CHAT], set())
    assert len(names.alias(long_a)) == 64 and len(names.alias(long_b)) == 64
    assert names.alias(long_a) != names.alias(long_b)
    gemini = NameMap(NAME_RULES[GEM], set())
    assert gemini.alias("weather.get") == "weather.get"
    assert re.fullmatch(r"_9lives_[0-9a-f]{8}", gemini.alias("9lives"))


def test_xl03_an_alias_never_takes_a_name_already_in_use() -> None:
    names = NameMap(NAME_RULES[CHAT], {"a_b"})
    alias = names.alias("a.b")
    assert alias not in ("a_b", "a.b") and names.alias("a_b") == "a_b"


def test_xl03_duplicate_declarations_are_dropped_with_a_report() -> None:
    body = chat([{"role": "user", "content": "hi"}], tools=[tool("search")],
                functions=[{"name": "search", "parameters": {"type": "object", "properties": {}}}])
    sent = get_bridge(CHAT, ANT).request(body, CHAT_PATH)
    assert [t["name"] for t in sent.payload["tools"]] == ["search"]
    assert ("/functions/0", None, "dropped", "XL-03") in losses(sent)


# --- XL-04 call ids ------------------------------------------------------------------------------

def test_xl04_ids_are_rewritten_to_fit_and_still_pair() -> None:
    long_id = "fc_" + "9" * 50
    body = {"model": "m", "input": [
        {"type": "function_call", "call_id": long_id, "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": long_id, "output": "ok"},
        {"type": "function_call", "call_id": "functions.f:1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "functions.f:1", "output": "ok"}]}
    sent = get_bridge(RESP, CHAT).request(body, "/v1/responses")
    call = sent.payload["messages"][0]["tool_calls"][0]["id"]
    assert re.fullmatch(r"call_[0-9a-f]{24}", call) and sent.payload["messages"][1]["tool_call_id"] == call
    assert sent.payload["messages"][2]["tool_calls"][0]["id"] == "functions.f:1"  # fits Chat: kept
    assert sent.state.ids[call] == long_id
    to_anthropic = get_bridge(CHAT, ANT).request(chat([
        {"role": "assistant", "tool_calls": [{"id": "functions.f:1", "type": "function",
                                              "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "functions.f:1", "content": "ok"}]), CHAT_PATH)
    minted = to_anthropic.payload["messages"][0]["content"][0]["id"]
    assert re.fullmatch(r"call_[0-9a-f]{24}", minted)
    assert to_anthropic.payload["messages"][1]["content"][0]["tool_use_id"] == minted
    assert ("/messages/0/tool_calls/0/id", "/messages/0/content/0/id", "renamed", "XL-04") in losses(to_anthropic)


def test_xl04_minted_ids_never_collide_with_history_or_each_other() -> None:
    first = IdMap(ANT, set(), "seed").map("bad id")
    again = IdMap(ANT, {first}, "seed").map("bad id")
    assert again != first and re.fullmatch(r"call_[0-9a-f]+", again)
    ids = IdMap(ANT, set(), "seed")
    assert ids.map("a b") != ids.map("a/b")


def test_xl04_upstream_id_that_repeats_a_history_id_is_renamed() -> None:
    bridge = get_bridge(ANT, CHAT)
    sent = bridge.request({"model": "m", "max_tokens": 10, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "call_a", "name": "get_weather", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_a", "content": "x"}]}]}, "/v1/messages")
    back = bridge.response(cases.CHAT_RESPONSE, sent.state)
    ids = [b["id"] for b in back.payload["content"] if b["type"] == "tool_use"]
    assert ids[0] != "call_a" and re.fullmatch(r"call_[0-9a-f]{24}", ids[0]) and ids[1] == "call_b"
    assert ("/choices/0/message/tool_calls/0", "/content/1/id", "renamed", "XL-04") in losses(back)


# --- XL-05 / XL-06 legacy functions --------------------------------------------------------------

def test_xl05_legacy_results_pair_by_name_first_in_first_out() -> None:
    body = chat([{"role": "user", "content": "two lookups"},
                 {"role": "assistant", "content": None, "function_call": {"name": "lookup", "arguments": "{\"k\":1}"}},
                 {"role": "function", "name": "lookup", "content": "one"},
                 {"role": "assistant", "content": None, "function_call": {"name": "lookup", "arguments": "{\"k\":2}"}},
                 {"role": "function", "name": "lookup", "content": "two"}],
                functions=[{"name": "lookup", "parameters": {"type": "object", "properties": {"k": {"type": "integer"}}}}],
                function_call={"name": "lookup"})
    sent = get_bridge(CHAT, RESP).request(body, CHAT_PATH)
    items = sent.payload["input"]
    assert [i.get("type", "message") for i in items] == ["message", "function_call", "function_call_output",
                                                        "function_call", "function_call_output"]
    assert items[2]["call_id"] == items[1]["call_id"] and items[4]["call_id"] == items[3]["call_id"]
    assert items[1]["call_id"] != items[3]["call_id"]
    assert (items[2]["output"], items[4]["output"]) == ("one", "two")
    assert sent.payload["tool_choice"] == {"type": "function", "name": "lookup"}
    assert [(loss.kind, loss.rule) for loss in sent.losses] == [("synthesised", "XL-05"), ("synthesised", "XL-05"),
                                                                ("synthesised", "")]


def test_xl06_an_orphan_legacy_result_is_rejected_with_its_pointer() -> None:
    body = chat([{"role": "user", "content": "x"},
                 {"role": "assistant", "content": None, "function_call": {"name": "a", "arguments": "{}"}},
                 {"role": "function", "name": "a", "content": "1"},
                 {"role": "function", "name": "a", "content": "2"}])
    with pytest.raises(TranslationError) as caught:
        get_bridge(CHAT, RESP).request(body, CHAT_PATH)
    assert caught.value.pointer == "/messages/3"
    with pytest.raises(TranslationError) as nameless:
        get_bridge(CHAT, RESP).request(chat([{"role": "function", "content": "1"}]), CHAT_PATH)
    assert nameless.value.pointer == "/messages/0/name"


# --- XL-07 mixed content -------------------------------------------------------------------------

def test_xl07_gemini_text_beside_function_responses_gets_its_own_turn() -> None:
    body = chat([{"role": "user", "content": "x"},
                 {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
                                                       "function": {"name": "f", "arguments": "{}"}}]},
                 {"role": "tool", "tool_call_id": "c1", "content": "done"},
                 {"role": "user", "content": "and now?"}], tools=[tool("f")])
    contents = get_bridge(CHAT, GEM).request(body, CHAT_PATH).payload["contents"]
    assert contents[2] == {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "f",
                                                                          "response": {"output": "done"}}}]}
    assert contents[3] == {"role": "user", "parts": [{"text": "and now?"}]}


# --- XL-08 arguments -----------------------------------------------------------------------------

@pytest.mark.parametrize(("arguments", "expected", "why"), [
    ("{\"a\":1}", {"a": 1}, None),
    ("\"{\\\"a\\\":1}\"", {"a": 1}, "unwrapped 2 JSON encodings"),
    (orjson.dumps(orjson.dumps(orjson.dumps({"a": 1}).decode()).decode()).decode(), {"a": 1},
     "unwrapped 3 JSON encodings"),
    ("[1,2]", {"value": [1, 2]}, "a JSON array, not an object wrapped under 'value'"),
    ("42", {"value": 42}, "a JSON scalar, not an object wrapped under 'value'"),
    ("{'a': 1}", {"value": "{'a': 1}"}, "unparseable arguments kept as text under 'value'"),
    ("{\"a\":1}{\"b\":2}", {"value": "{\"a\":1}{\"b\":2}"}, "unparseable arguments kept as text under 'value'"),
    ("", {}, None),  # a call of a tool that takes no arguments: nothing to report
    # The bridges' old copy kept blank text as {"value": "  "}; the checker and the fixer read it as
    # empty, and the one decoder (rules.arguments) now serves all three.
    ("  ", {}, "empty arguments replaced by {}"),
    ([1, 2], {"value": [1, 2]}, "non-object arguments wrapped under 'value'"),
])
def test_xl08_arguments_become_exactly_one_object(arguments, expected: dict, why: str | None) -> None:
    body = chat([{"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
                                                       "function": {"name": "f", "arguments": arguments}}]},
                 {"role": "tool", "tool_call_id": "c1", "content": "ok"}])
    to_anthropic = get_bridge(CHAT, ANT).request(body, CHAT_PATH)
    assert to_anthropic.payload["messages"][0]["content"][0]["input"] == expected
    to_responses = get_bridge(CHAT, RESP).request(body, CHAT_PATH)
    assert orjson.loads(to_responses.payload["input"][0]["arguments"]) == expected
    assert [(loss.source, loss.target, loss.kind, loss.why) for loss in to_anthropic.losses if loss.rule == "XL-08"] \
        == ([] if why is None else [("/messages/0/tool_calls/0/function/arguments", None, "converted",
                                     f"arguments: {why}")])


# --- XL-09 built-in tools ------------------------------------------------------------------------

def test_xl09_builtins_map_or_drop_with_a_warning_never_an_empty_function() -> None:
    body = {"model": "m", "input": "hi", "tools": [
        {"type": "web_search", "search_context_size": "high",
         "user_location": {"type": "approximate", "country": "DE"}},
        {"type": "code_interpreter", "container": {"type": "auto"}},
        {"type": "function"}]}
    sent = get_bridge(RESP, CHAT).request(body, "/v1/responses")
    assert sent.payload.get("tools") is None
    assert sent.payload["web_search_options"] == {"search_context_size": "high",
                                                  "user_location": {"type": "approximate",
                                                                    "approximate": {"country": "DE"}}}
    assert losses(sent) == [("/tools/2", None, "dropped", "XL-09"), ("/tools/1", None, "dropped", "XL-09")]
    only_builtins = get_bridge(CHAT, RESP).request(chat([{"role": "user", "content": "hi"}],
                                                        web_search_options={}), CHAT_PATH)
    assert only_builtins.payload["tools"] == [{"type": "web_search"}]


# --- XL-10 null means absent ---------------------------------------------------------------------

def test_xl10_null_fields_are_absent_not_empty() -> None:
    body = chat([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo", "tool_calls": None,
                                                     "function_call": None}],
                tools=None, functions=None, tool_choice=None, function_call=None)
    sent = get_bridge(CHAT, RESP).request(body, CHAT_PATH)
    assert sent.payload == {"model": "gpt-4o", "input": [{"role": "user", "content": "hi"},
                                                        {"role": "assistant", "content": "yo"}], "store": False}
    assert {(loss.source, loss.rule) for loss in sent.losses if loss.kind == "dropped"} == {
        ("/tools", "XL-10"), ("/functions", "XL-10"), ("/tool_choice", "XL-10"), ("/function_call", "XL-10"),
        ("/messages/1/tool_calls", "XL-10"), ("/messages/1/function_call", "XL-10")}


# --- XL-11 tool_choice ---------------------------------------------------------------------------

@pytest.mark.parametrize(("choice", "anthropic", "gemini", "responses"), [
    ("none", {"type": "none"}, {"mode": "NONE"}, "none"),
    ("auto", {"type": "auto"}, {"mode": "AUTO"}, "auto"),
    ("required", {"type": "any"}, {"mode": "ANY"}, "required"),
    ({"type": "function", "function": {"name": "f"}}, {"type": "tool", "name": "f"},
     {"mode": "ANY", "allowedFunctionNames": ["f"]}, {"type": "function", "name": "f"}),
])
def test_xl11_tool_choice_maps_in_every_direction(choice, anthropic, gemini, responses) -> None:
    body = chat([{"role": "user", "content": "hi"}], tools=[tool("f")], tool_choice=choice)
    assert get_bridge(CHAT, ANT).request(body, CHAT_PATH).payload["tool_choice"] == anthropic
    assert get_bridge(CHAT, GEM).request(body, CHAT_PATH).payload["toolConfig"] == {"functionCallingConfig": gemini}
    assert get_bridge(CHAT, RESP).request(body, CHAT_PATH).payload["tool_choice"] == responses
    back = get_bridge(ANT, CHAT).request({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}],
                                          "tools": [{"name": "f", "input_schema": {"type": "object"}}],
                                          "tool_choice": anthropic}, "/v1/messages")
    assert back.payload["tool_choice"] == choice


def test_xl11_legacy_selector_and_no_parallel_calls() -> None:
    body = chat([{"role": "user", "content": "hi"}], functions=[{"name": "f", "parameters": {}}],
                function_call="none", parallel_tool_calls=False)
    assert get_bridge(CHAT, ANT).request(body, CHAT_PATH).payload["tool_choice"] == {"type": "none"}
    body = chat([{"role": "user", "content": "hi"}], tools=[tool("f")], parallel_tool_calls=False)
    assert get_bridge(CHAT, ANT).request(body, CHAT_PATH).payload["tool_choice"] == {
        "type": "auto", "disable_parallel_tool_use": True}


# --- XL-12 stream re-chunking --------------------------------------------------------------------

@pytest.mark.parametrize("target", [RESP, ANT, GEM])
def test_xl12_chat_stream_has_id_and_name_only_on_each_calls_first_delta(target: Dialect) -> None:
    bridge = get_bridge(CHAT, target)
    sent = bridge.request(chat([{"role": "user", "content": "hi"}], stream=True), CHAT_PATH)
    out, _ = cases.run_stream(bridge.stream(sent.state), {RESP: cases.RESPONSES_STREAM, ANT: cases.ANTHROPIC_STREAM,
                                                          GEM: cases.GEMINI_STREAM}[target], 3)
    chunks = cases.events(out)
    assert chunks[-1] == "[DONE]"
    deltas = [c for chunk in chunks[:-1] for choice in chunk["choices"] for c in choice["delta"].get("tool_calls", [])]
    seen: set[int] = set()
    for delta in deltas:
        first = delta["index"] not in seen
        seen.add(delta["index"])
        assert ("id" in delta) is first and ("name" in delta["function"]) is first
    assert seen == {0, 1}
    finishes = [choice["finish_reason"] for chunk in chunks[:-1] for choice in chunk["choices"] if choice["finish_reason"]]
    assert finishes == ["tool_calls"]


# --- XL-14 opaque state --------------------------------------------------------------------------

def test_xl14_upstream_reasoning_and_thinking_are_reported_when_dropped() -> None:
    bridge = get_bridge(CHAT, RESP)
    sent = bridge.request(chat([{"role": "user", "content": "hi"}]), CHAT_PATH)
    upstream = {**cases.RESPONSES_RESPONSE, "output": [{"type": "reasoning", "id": "rs_1", "summary": []},
                                                       *cases.RESPONSES_RESPONSE["output"]]}
    assert losses(bridge.response(upstream, sent.state)) == [("/output/0", None, "dropped", "XL-14")]
    bridge = get_bridge(CHAT, ANT)
    sent = bridge.request(chat([{"role": "user", "content": "hi"}], stream=True), CHAT_PATH)
    thinking = cases.sse({"type": "message_start", "message": {"id": "msg_1", "model": "m", "usage": {}}},
                         {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
                         {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "hm"}},
                         {"type": "content_block_stop", "index": 0},
                         {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}},
                         {"type": "message_stop"}, named=True)
    relay = bridge.stream(sent.state)
    cases.run_stream(relay, thinking, 50)
    assert losses(relay) == [("/stream", None, "dropped", "XL-14")]


# --- XL-15 tool-result fidelity ------------------------------------------------------------------

def test_xl15_error_flag_and_media_cross_as_each_dialect_allows() -> None:
    anthropic = {"model": "m", "max_tokens": 9, "messages": [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": True, "content": [
            {"type": "text", "text": "boom"},
            {"type": "image", "source": {"type": "url", "url": "https://x.test/i.png"}}]}]}]}
    to_responses = get_bridge(ANT, RESP).request(anthropic, "/v1/messages").payload["input"][1]
    assert to_responses == {"type": "function_call_output", "call_id": "t1", "output": [
        {"type": "input_text", "text": "Error:"}, {"type": "input_text", "text": "boom"},
        {"type": "input_image", "image_url": "https://x.test/i.png", "detail": "auto"}]}
    chat_body = get_bridge(ANT, CHAT).request(anthropic, "/v1/messages").payload
    assert chat_body["messages"][1:] == [{"role": "tool", "tool_call_id": "t1", "content": "Error: boom"},
                                         {"role": "user", "content": [{"type": "image_url",
                                                                       "image_url": {"url": "https://x.test/i.png"}}]}]
    back = get_bridge(CHAT, ANT).request(chat_body, CHAT_PATH).payload["messages"][1]["content"][0]
    assert back == {"type": "tool_result", "tool_use_id": "t1", "content": "Error: boom"}


# --- pairs and errors ----------------------------------------------------------------------------

def test_pairs_not_offered_are_refused_clearly() -> None:
    with pytest.raises(UnsupportedPair, match="no bridge from openai-responses to anthropic"):
        get_bridge(RESP, ANT)
    with pytest.raises(UnsupportedPair, match="translate_document"):
        get_bridge(Dialect.MCP, CHAT)


def test_server_side_history_cannot_be_translated() -> None:
    with pytest.raises(TranslationError) as caught:
        get_bridge(RESP, CHAT).request({"model": "m", "input": "hi", "previous_response_id": "resp_1"}, "/v1/responses")
    assert caught.value.pointer == "/previous_response_id"


def test_audio_cannot_reach_anthropic() -> None:
    body = chat([{"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}]}])
    with pytest.raises(TranslationError) as caught:
        get_bridge(CHAT, ANT).request(body, CHAT_PATH)
    assert caught.value.pointer == "/messages/0/content/0"


def test_a_response_document_translates_the_way_responses_travel() -> None:
    payload, report = translate_document(cases.ANTHROPIC_RESPONSE, ANT, CHAT, "response")
    assert payload["choices"][0]["message"]["tool_calls"][0]["id"] == "toolu_a"
    assert report == []


def test_xl14_a_signed_gemini_text_part_keeps_its_text_and_reports_the_signature() -> None:
    bridge = get_bridge(CHAT, GEM)
    sent = bridge.request(chat([{"role": "user", "content": "hi"}], tools=[tool("get_weather")]), CHAT_PATH)
    upstream = {"candidates": [{"index": 0, "finishReason": "STOP", "content": {"role": "model", "parts": [
        {"text": "Let me check.", "thoughtSignature": "c2ln"},
        {"functionCall": {"name": "get_weather", "args": {"q": "x"}}, "thoughtSignature": "c2lnMg=="}]}}]}
    back = bridge.response(upstream, sent.state)
    message = back.payload["choices"][0]["message"]
    assert message["content"] == "Let me check."
    assert [c["function"]["name"] for c in message["tool_calls"]] == ["get_weather"]
    assert [(loss.source, loss.kind, loss.rule) for loss in back.losses if loss.rule == "XL-14"] == [
        ("/candidates/0/content/parts/1/thoughtSignature", "dropped", "XL-14"),
        ("/candidates/0/content/parts/0/thoughtSignature", "dropped", "XL-14")]
    relay = bridge.stream(sent.state)
    out, _ = cases.run_stream(relay, cases.sse(upstream), 13)
    assert [(loss.kind, loss.rule) for loss in relay.losses if loss.rule == "XL-14"] == [("dropped", "XL-14")] * 2
    assert b"Let me check." in out


def test_a_malformed_upstream_event_is_reported_and_the_stream_goes_on() -> None:
    bridge = get_bridge(ANT, CHAT)
    sent = bridge.request({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}],
                           "stream": True}, "/v1/messages")
    relay = bridge.stream(sent.state)
    body = cases.sse({"id": "x", "choices": [{"index": 0, "delta": {"tool_calls": 5}}]}) + cases.CHAT_STREAM
    out, _ = cases.run_stream(relay, body, 17)
    assert [(loss.source, loss.kind) for loss in relay.losses] == [("/stream", "dropped")]
    assert b'"stop_reason":"tool_use"' in out and b'"name":"get_time"' in out


def test_malformed_requests_are_translation_errors() -> None:
    with pytest.raises(TranslationError, match="malformed openai-chat request"):
        get_bridge(CHAT, ANT).request({"model": "m", "messages": [{"role": "user", "content": "x"}], "tools": 5},
                                      CHAT_PATH)
    with pytest.raises(TranslationError, match="must be a JSON object"):
        get_bridge(CHAT, ANT).request([], CHAT_PATH)


def test_xl12_a_gateways_duplicate_summary_delta_is_not_relayed() -> None:
    bridge = get_bridge(ANT, CHAT)
    sent = bridge.request({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}],
                           "stream": True}, "/v1/messages")
    summary = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [
        {"index": 0, "finish_reason": None, "delta": {"tool_calls": [
            {"index": 0, "id": "call_a", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]}}]}
    body = cases.CHAT_STREAM.replace(b"data: [DONE]", cases.sse(summary) + b"data: [DONE]")
    relay = bridge.stream(sent.state)
    out, _ = cases.run_stream(relay, body, 31)
    arguments = "".join(e["delta"]["partial_json"] for e in cases.events(out)
                        if e["type"] == "content_block_delta" and e["index"] == 1)
    assert arguments == "{\"city\":\"Paris\"}"
    assert [(loss.kind, loss.rule) for loss in relay.losses] == [("dropped", "XL-12")]


def test_error_bodies_come_back_in_the_clients_dialect() -> None:
    error = {"error": {"message": "Invalid 'tools[0].function.name'", "type": "invalid_request_error",
                       "code": "invalid_value"}}
    sent = get_bridge(ANT, CHAT).request({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]},
                                         "/v1/messages")
    assert get_bridge(ANT, CHAT).response(error, sent.state).payload == {
        "type": "error", "error": {"type": "invalid_request_error", "message": "Invalid 'tools[0].function.name'"}}
    sent = get_bridge(GEM, CHAT).request({"contents": [{"parts": [{"text": "x"}]}]},
                                         "/v1beta/models/g:generateContent")
    assert get_bridge(GEM, CHAT).response(error, sent.state).payload == {"error": {
        "code": 400, "message": "Invalid 'tools[0].function.name'", "status": "INVALID_ARGUMENT"}}
    anthropic_error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    sent = get_bridge(CHAT, ANT).request({"model": "m", "messages": [{"role": "user", "content": "x"}]}, CHAT_PATH)
    assert get_bridge(CHAT, ANT).response(anthropic_error, sent.state).payload == {
        "error": {"message": "Overloaded", "type": "server_error", "param": None, "code": "overloaded"}}


def test_a_gemini_client_streaming_without_sse_reads_one_json_array() -> None:
    bridge = get_bridge(GEM, CHAT)
    sent = bridge.request({"contents": [{"parts": [{"text": "x"}]}]}, "/v1beta/models/g:streamGenerateContent?alt=json")
    assert bridge.stream(bridge.request({"contents": []}, "/v1beta/models/g:streamGenerateContent").state) \
        .content_type == "text/event-stream"
    assert sent.payload["stream"] is True
    relay = bridge.stream(sent.state)
    assert relay.content_type == "application/json"
    out, pieces = cases.run_stream(relay, cases.CHAT_STREAM, 40)
    chunks = orjson.loads(out)
    assert [p for c in chunks for p in c["candidates"][0]["content"]["parts"]] == [
        {"text": "Checking both."},
        {"functionCall": {"id": "call_a", "name": "get_weather", "args": {"city": "Paris"}}},
        {"functionCall": {"id": "call_b", "name": "get_time", "args": {"tz": "CET"}}}]
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert out.startswith(b"[{") and any(b"Checking both." in piece for piece in pieces[:-1])


def test_every_loss_pointer_escapes_the_key_it_names() -> None:
    # Pointers are built one way (pointer.join); a key holding "/" or "~" is escaped (RFC 6901).
    for source, body, path in [
        (CHAT, chat([{"role": "user", "content": "hi"}], **{"x-vendor/flag": 1, "a~b": 2}), CHAT_PATH),
        (ANT, {"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}],
               "x-vendor/flag": 1, "a~b": 2}, "/v1/messages"),
        (RESP, {"model": "m", "input": "hi", "x-vendor/flag": 1, "a~b": 2}, "/v1/responses"),
        (GEM, {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "x-vendor/flag": 1, "a~b": 2,
               "generationConfig": {"x/y": 1}}, "/v1beta/models/g:generateContent"),
    ]:
        target = CHAT if source is not CHAT else ANT
        sent = get_bridge(source, target).request(body, path)
        named = sorted(loss.source for loss in sent.losses if "~" in loss.source or "flag" in loss.source
                       or "x/y" in loss.source or "x~1y" in loss.source)
        assert named == (["/a~0b", "/generationConfig/x~1y", "/x-vendor~1flag"] if source is GEM
                         else ["/a~0b", "/x-vendor~1flag"]), source


def test_xl03_xl09_every_bridge_drops_nameless_and_repeated_tools_alike() -> None:
    # One helper (common.declared_once) for what five parsers did each their own way.
    fn = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}
    cases = [
        (CHAT, ANT, chat([{"role": "user", "content": "hi"}], tools=[fn, {"type": "function", "function": {}}, fn]),
         CHAT_PATH, "/tools", "function tool"),
        (RESP, CHAT, {"model": "m", "input": "hi", "tools": [{"type": "function", "name": "f"},
                                                             {"type": "function"}, {"type": "function", "name": "f"}]},
         "/v1/responses", "/tools", "function tool"),
        (ANT, CHAT, {"model": "m", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}],
                     "tools": [{"name": "f", "input_schema": {}}, {"input_schema": {}},
                               {"name": "f", "input_schema": {}}]}, "/v1/messages", "/tools", "tool"),
        (GEM, CHAT, {"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
                     "tools": [{"functionDeclarations": [{"name": "f"}, {}, {"name": "f"}]}]},
         "/v1beta/models/g:generateContent", "/tools/0/functionDeclarations", "function declaration"),
    ]
    for source, target, body, path, base, what in cases:
        sent = get_bridge(source, target).request(body, path)
        assert [(loss.source, loss.kind, loss.why, loss.rule) for loss in sent.losses
                if loss.rule in ("XL-03", "XL-09")] == [
            (f"{base}/1", "dropped", f"a {what} without a name cannot be declared", "XL-09"),
            (f"{base}/2", "dropped", f"{what} 'f' is declared twice; the first is kept", "XL-03"),
        ], source
