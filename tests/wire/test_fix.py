"""Fixers: each repair is recorded with its rule and the pointer of the defect in the original, the
input is never changed, and a repaired payload passes the checker without errors."""

from __future__ import annotations

import copy
import hashlib

import orjson

from inspector.wire import check
from inspector.wire.fix import UNAVAILABLE, fix

from .wire_payloads import anthropic_request, chat_request, gemini_request, mcp_call_request, mcp_list_result, \
    responses_request

CHAT = "openai-chat"


def _repairs(result):
    return [(r.rule, r.pointer, r.action) for r in result.repairs]


def _errors(payload, dialect, profile=None):
    return [(v.rule, v.pointer) for v in check.check_request(payload, dialect, profile) if v.severity.value == "error"]


def test_valid_payloads_need_no_repair():
    for builder, dialect in [(chat_request, CHAT), (responses_request, "openai-responses"),
                             (anthropic_request, "anthropic"), (gemini_request, "gemini")]:
        result = fix(builder(), dialect)
        assert (result.payload, result.repairs) == (builder(), [])


def test_the_input_is_never_changed():
    payload = chat_request()
    payload["tools"][0]["function"]["parameters"]["type"] = "OBJECT"
    del payload["messages"][3]["content"]
    before = copy.deepcopy(payload)
    fix(payload, CHAT)
    assert payload == before


def test_chat_dangling_call_gets_a_synthesised_result_and_orphans_are_dropped():
    payload = chat_request()
    del payload["messages"][4]  # call_2 unanswered
    payload["messages"].append({"role": "tool", "tool_call_id": "call_zz", "content": "?"})
    result = fix(payload, CHAT)
    assert _repairs(result) == [("OC-19", "/messages/4", "synthesised"), ("OC-18", "/messages/6", "dropped")]
    assert result.payload["messages"][4] == {"role": "tool", "tool_call_id": "call_2", "content": UNAVAILABLE}
    assert len(result.payload["messages"]) == 7
    assert _errors(result.payload, CHAT) == []


def test_chat_every_fixable_defect_at_once():
    payload = chat_request()
    payload["tools"].append({"type": "web_search"})
    payload["tools"].append(copy.deepcopy(payload["tools"][0]))
    payload["tools"][1]["function"]["name"] = "search.docs"
    payload["tools"][0]["function"]["parameters"]["properties"]["city"]["type"] = "STRING"
    payload["tools"][0]["function"]["strict"] = True
    payload["functions"] = []
    payload["tool_choice"] = {"type": "function", "name": "search.docs"}
    calls = payload["messages"][2]["tool_calls"]
    calls[0]["function"]["arguments"] = {"city": "Oslo"}
    calls[1]["function"]["arguments"] = '"[1, 2]"'
    calls[1]["function"]["name"] = "search.docs"
    payload["messages"][3]["content"] = None
    payload["messages"][5]["tool_calls"] = []
    payload["messages"][2]["content"] = []
    result = fix(payload, CHAT)
    assert _repairs(result) == [
        ("OC-05", "/tools/0/function/parameters/properties/city/type", "converted"),
        ("OC-06", "/tools/0/function/strict", "set"),
        ("OC-02", "/tools/1/function/name", "aliased"),
        ("XL-09", "/tools/2", "dropped"),
        ("XL-03", "/tools/3", "removed"),
        ("OC-09", "/functions", "removed"),
        ("OC-08", "/tool_choice", "converted"),
        ("OC-02", "/tool_choice/function/name", "aliased"),
        ("OC-12", "/messages/2/content", "set"),
        ("OC-15", "/messages/2/tool_calls/0/function/arguments", "encoded"),
        ("OC-02", "/messages/2/tool_calls/1/function/name", "aliased"),
        ("OC-15", "/messages/2/tool_calls/1/function/arguments", "wrapped"),
        ("OC-17", "/messages/3/content", "set"),
        ("OC-13", "/messages/5/tool_calls", "removed"),
    ]
    assert _errors(result.payload, CHAT) == []
    alias = result.payload["tools"][1]["function"]["name"]
    assert result.aliases == {alias: "search.docs"}
    assert orjson.loads(result.payload["messages"][2]["tool_calls"][1]["function"]["arguments"]) == {"value": [1, 2]}


def _aliased(names, dialect=CHAT, profile=None):
    """The names a fixer gives the tools `names` declare (Chat tools, or Gemini declarations)."""
    if dialect == "gemini":
        payload = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
                   "tools": [{"functionDeclarations": [{"name": n, "description": "d"} for n in names]}]}
        result = fix(payload, dialect, profile)
        return [d["name"] for d in result.payload["tools"][0]["functionDeclarations"]], result
    payload = {"model": "m", "messages": [{"role": "user", "content": "hi"}],
               "tools": [{"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {}}}}
                         for n in names]}
    result = fix(payload, dialect, profile)
    return [t["function"]["name"] for t in result.payload["tools"]], result


def _sha(name, width=8):
    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:width]


def test_aliases_are_injective_where_sanitising_collides():
    (dot, slash, long), result = _aliased(["a.b", "a/b", "x" * 200])
    assert (dot, slash, long) == (f"a_b_{_sha('a.b')}", f"a_b_{_sha('a/b')}", "x" * 55 + f"_{_sha('x' * 200)}")
    assert result.aliases == {dot: "a.b", slash: "a/b", long: "x" * 200}
    assert _aliased(["a.b"])[0] == [dot]  # stable across requests


def test_an_alias_follows_the_targets_own_name_rule():
    # The fixer and the bridges alias alike (naming.NameMap). Where the fixer's old copy disagreed,
    # the rule-driven behaviour is kept: a digit may start an OpenAI name, so no "_" is prepended;
    # Gemini accepts "." and ":" and needs a letter or "_" first.
    assert _aliased(["1st.tool"])[0] == [f"1st_tool_{_sha('1st.tool')}"]
    assert _aliased(["9 lives.get:v1"], "gemini")[0] == [f"_9_lives.get:v1_{_sha('9 lives.get:v1')}"]
    assert _aliased(["weather.get"], "gemini")[0] == ["weather.get"]  # near miss: valid on Gemini


def test_an_alias_never_takes_a_name_declared_in_the_payload():
    taken = f"a_b_{_sha('a.b')}"  # the 8-digit alias of "a.b", already a tool of its own
    names, result = _aliased(["a.b", taken])
    assert names == [f"a_b_{_sha('a.b', 12)}", taken]
    assert result.aliases == {names[0]: "a.b"}


def test_long_call_ids_are_rewritten_in_the_call_and_its_result_on_azure():
    payload = chat_request()
    long_id = "fc_" + "a" * 50
    payload["messages"][2]["tool_calls"][0]["id"] = long_id
    payload["messages"][3]["tool_call_id"] = long_id
    result = fix(payload, CHAT, "azure-openai")
    new = result.payload["messages"][2]["tool_calls"][0]["id"]
    assert (_repairs(result), result.payload["messages"][3]["tool_call_id"], len(new)) == (
        [("OC-16", "/messages/2/tool_calls/0/id", "rewritten")], new, 29)
    assert _errors(result.payload, CHAT, "azure-openai") == []


def test_repeated_call_id_is_rewritten_and_its_result_follows():
    payload = chat_request()
    payload["messages"] += [
        {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
                                              "function": {"name": "get_weather", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "x"}]
    result = fix(payload, CHAT)
    new = result.payload["messages"][7]["tool_calls"][0]["id"]
    assert (_repairs(result), result.payload["messages"][8]["tool_call_id"]) == (
        [("XL-04", "/messages/7/tool_calls/0/id", "rewritten")], new)
    assert _errors(result.payload, CHAT) == []


def test_compatible_profile_gets_the_content_key_and_loses_a_bare_tool_choice():
    payload = chat_request()
    del payload["messages"][2]["content"]
    result = fix(payload, CHAT, "openai-compatible")
    assert _repairs(result) == [("OC-12", "/messages/2/content", "set")]
    assert "content" in result.payload["messages"][2]


def test_responses_repairs():
    payload = responses_request()
    payload["tools"][0] = {"type": "function", "function": {"name": "get.weather", "parameters": {
        "type": "OBJECT", "properties": {"city": {"type": "STRING"}}}}}
    payload["tool_choice"] = {"type": "function", "function": {"name": "get.weather"}}
    payload["input"][1]["name"] = "get.weather"
    payload["input"][1]["id"] = "msg_1"
    payload["input"][1]["arguments"] = '"{\\"city\\":\\"Oslo\\"}"'
    payload["input"][2] = {"role": "tool", "tool_call_id": "call_1", "content": "4°C"}
    payload["input"].append({"type": "function_call", "call_id": "call_7", "name": "get_weather", "arguments": "{}"})
    payload["input"].append({"type": "function_call_output", "call_id": "call_x", "output": "?"})
    result = fix(payload, "openai-responses")
    assert _repairs(result) == [
        ("OR-02", "/tools/0/function", "converted"),
        ("OR-03", "/tools/0/name", "aliased"),
        ("XL-01", "/tools/0/parameters/type", "converted"),
        ("XL-01", "/tools/0/parameters/properties/city/type", "converted"),
        ("OR-04", "/tool_choice", "converted"),
        ("OR-03", "/tool_choice/name", "aliased"),
        ("OR-03", "/input/1/name", "aliased"),
        ("XL-08", "/input/1/arguments", "unwrapped"),
        ("OR-06", "/input/1/id", "removed"),
        ("OR-05", "/input/2", "converted"),
        ("OR-08", "/input/6", "dropped"),
        ("OR-08", "/input/7", "synthesised"),
    ]
    assert result.payload["input"][-1] == {"type": "function_call_output", "call_id": "call_7", "output": UNAVAILABLE}
    assert _errors(result.payload, "openai-responses") == []


def test_anthropic_repairs():
    payload = anthropic_request()
    payload["tools"].append({"name": "get_weather", "input_schema": {"type": "object"}})
    payload["tools"][0]["input_schema"]["properties"]["city"]["type"] = "STRING"
    payload["messages"][1]["content"][1]["input"] = '{"city":"Oslo"}'
    payload["messages"][1]["content"][2]["id"] = "functions.get_weather:1"
    payload["messages"][2]["content"] = [payload["messages"][2]["content"][2], payload["messages"][2]["content"][0],
                                         {"type": "tool_result", "tool_use_id": "toolu_zz", "content": "?"}]
    result = fix(payload, "anthropic")
    assert _repairs(result) == [
        ("XL-01", "/tools/0/input_schema/properties/city/type", "converted"),
        ("AN-03", "/tools/2", "removed"),
        ("AN-05", "/messages/1/content/1/input", "converted"),
        ("AN-05", "/messages/1/content/2/id", "rewritten"),
        ("AN-08", "/messages/2/content/2", "dropped"),
        ("AN-09", "/messages/2/content", "reordered"),
        ("AN-07", "/messages/2", "synthesised"),
    ]
    content = result.payload["messages"][2]["content"]
    assert [(b["type"], b.get("tool_use_id"), b.get("is_error")) for b in content] == [
        ("tool_result", "toolu_1", None), ("tool_result", result.payload["messages"][1]["content"][2]["id"], True),
        ("text", None, None)]
    assert _errors(result.payload, "anthropic") == []


def test_gemini_repairs():
    payload = gemini_request()
    params = payload["tools"][0]["functionDeclarations"][1]["parameters"]
    params["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    params["properties"]["q"] = {"type": ["string", "null"]}
    params["properties"]["mode"] = {"type": "string", "const": "fast"}
    payload["tools"][0]["functionDeclarations"].append({"name": "get_weather"})
    payload["contents"][1]["parts"][0]["functionCall"]["args"] = '{"city":"Oslo"}'
    payload["contents"][2]["parts"][1]["functionResponse"]["response"] = ["18°C"]
    result = fix(payload, "gemini")
    assert _repairs(result) == [
        ("GM-04", "/tools/0/functionDeclarations/1/parameters/properties/q/type", "converted"),
        ("GM-04", "/tools/0/functionDeclarations/1/parameters/properties/mode/const", "converted"),
        ("GM-04", "/tools/0/functionDeclarations/1/parameters/$schema", "removed"),
        ("GM-14", "/tools/0/functionDeclarations/2", "removed"),
        ("GM-08", "/contents/1/parts/0/functionCall/args", "converted"),
        ("GM-09", "/contents/2/parts/1/functionResponse/response", "wrapped"),
    ]
    assert result.payload["tools"][0]["functionDeclarations"][1]["parameters"]["properties"] == {
        "q": {"type": "string", "nullable": True}, "mode": {"type": "string", "enum": ["fast"]}}
    assert _errors(result.payload, "gemini") == []


def test_mcp_repairs():
    listing = mcp_list_result()
    listing["result"]["tools"][1]["inputSchema"] = None
    result = fix(listing, "mcp")
    assert (_repairs(result), result.payload["result"]["tools"][1]["inputSchema"]) == (
        [("MCP-02", "/result/tools/1/inputSchema", "set")], {"type": "object", "additionalProperties": False})
    call = mcp_call_request()
    call["params"]["arguments"] = '"{\\"city\\":\\"Oslo\\"}"'
    fixed = fix(call, "mcp")
    assert (fixed.payload["params"]["arguments"], _repairs(fixed)) == (
        {"city": "Oslo"}, [("MCP-04", "/params/arguments", "converted")])


def test_non_object_documents_come_back_unchanged():
    assert fix([1, 2], CHAT).payload == [1, 2]
    assert fix("text", "gemini").repairs == []


def test_chat_strict_tool_without_parameters_gets_the_empty_closed_schema():
    payload = chat_request()
    del payload["tools"][1]["function"]["parameters"]
    payload["tools"][1]["function"]["strict"] = True
    payload["parallel_tool_calls"] = False
    assert _errors(payload, CHAT) == [("OC-06", "/tools/1/function/parameters")]
    result = fix(payload, CHAT)
    assert _repairs(result) == [("OC-06", "/tools/1/function/parameters", "set")]
    assert result.payload["tools"][1]["function"] == {
        "name": "search_docs", "strict": True,
        "parameters": {"type": "object", "properties": {}, "required": [], "additionalProperties": False}}
    assert _errors(result.payload, CHAT) == []


def test_a_bare_object_root_gets_the_empty_properties_openai_wants_in_both_dialects():
    chat = chat_request()
    chat["tools"][0]["function"]["parameters"] = {"type": "object", "description": "no arguments"}
    result = fix(chat, CHAT)
    assert _repairs(result) == [("OC-05", "/tools/0/function/parameters", "set")]
    assert result.payload["tools"][0]["function"]["parameters"] == {"type": "object", "description": "no arguments",
                                                                    "properties": {}}
    assert _errors(result.payload, CHAT) == []
    responses = responses_request()
    responses["tools"][0]["parameters"] = {"type": "object"}
    result = fix(responses, "openai-responses")
    assert _repairs(result) == [("OR-02", "/tools/0/parameters", "set")]
    assert result.payload["tools"][0]["parameters"] == {"type": "object", "properties": {}}
    assert _errors(result.payload, "openai-responses") == []


def test_a_long_description_is_cut_only_where_the_endpoint_refuses_it():
    # Mirascope's test_caching_tool: api.openai.com answered 200 to a 15,664-character description.
    payload = chat_request()
    payload["tools"][0]["function"]["description"] = "Look it up. " * 1400
    assert _repairs(fix(payload, CHAT, "openai")) == []
    cut = fix(payload, CHAT, "azure-openai")
    assert _repairs(cut) == [("OC-03", "/tools/0/function/description", "set")]
    assert cut.payload["tools"][0]["function"]["description"] == ("Look it up. " * 1400)[:1024]


def test_a_schema_type_written_as_its_proto_number_is_kept():
    # tmc/langchaingo's TestGoogleAIWithTools (enum-encoding=int), answered 200: types 6 (OBJECT) and 1 (STRING).
    payload = gemini_request()
    payload["tools"] = [{"functionDeclarations": [{"name": "getWeather", "description": "Weather", "parameters": {
        "type": 6, "properties": {"location": {"type": 1, "description": "where"}}, "required": ["location"]}}]}]
    assert _repairs(fix(payload, "gemini")) == []
    # The near miss: a number that names no genai Type is still dropped (and the node typed anew).
    payload["tools"][0]["functionDeclarations"][0]["parameters"]["properties"]["location"]["type"] = 42
    assert [r.rule for r in fix(payload, "gemini").repairs] == ["GM-04", "GM-17"]
