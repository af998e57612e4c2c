"""Gemini generateContent rules (GM-* in docs/rules.md), Gemini API and Vertex profiles."""

from __future__ import annotations

import pytest

from inspector.wire import check, profiles
from inspector.wire.dialect import Dialect

from .rule_cases import assert_case, deleting, doing, makers, same, setting
from .wire_payloads import gemini_chunks, gemini_request, gemini_response, sse

GEM = "gemini"

req, _, stream = makers(GEM, gemini_request, None, gemini_chunks)

DECL = ["tools", 0, "functionDeclarations", 0]
PARAMS = DECL + ["parameters"]
P = "/tools/0/functionDeclarations/0"


def _declarations(count):
    return setting(["tools", 0, "functionDeclarations"],
                   [{"name": f"f{i}", "parameters": {"type": "OBJECT"}} for i in range(count)])


def _contents(*contents):
    return setting(["contents"], list(contents))


def _model(model):
    return profiles.with_model(profiles.get("gemini", Dialect.GEMINI), model)


USER = {"role": "user", "parts": [{"text": "hi"}]}
CALL = {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}}]}
ANSWER = {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"output": "4°C"}}}]}
CALLS = ["contents", 1, "parts"]
RESPONSES = ["contents", 2, "parts"]

CASES = [
    # Value ranges from the dialect's home (dialects/gemini/limits.py), issue 8.
    req("temperature above 2", setting(["generationConfig"], {"temperature": 2.5}), "GM-21",
        "/generationConfig/temperature", "error", setting(["generationConfig"], {"temperature": 2})),
    req("snake_case top_p above 1", setting(["generation_config"], {"top_p": 1.5}), "GM-21",
        "/generation_config/top_p", "error", setting(["generation_config"], {"top_p": 1})),
    req("maxOutputTokens of zero", setting(["generationConfig"], {"maxOutputTokens": 0}), "GM-21",
        "/generationConfig/maxOutputTokens", "error", setting(["generationConfig"], {"maxOutputTokens": 1})),
    req("a field in both spellings", doing(setting(["generation_config"], {"temperature": 1}),
                                           setting(["generationConfig"], {"temperature": 0})),
        "GM-16", "/generation_config", "warning", setting(["generation_config"], {"max_output_tokens": 9})),
    req("array without items", setting(PARAMS + ["properties", "city"], {"type": "ARRAY"}), "GM-17",
        f"{P}/parameters/properties/city", "error",
        setting(PARAMS + ["properties", "city"], {"type": "ARRAY", "items": {"type": "STRING"}})),
    req("a format Gemini refuses", setting(PARAMS + ["properties", "city", "format"], "email"), "GM-17",
        f"{P}/parameters/properties/city/format", "warning",
        setting(PARAMS + ["properties", "city", "format"], "date-time")),
    req("129 declarations on Vertex", _declarations(129), "GM-01", "/tools", "error", _declarations(128),
        profile="vertex"),
    req("enterpriseWebSearch on the Gemini API", lambda doc: doc["tools"].append({"enterpriseWebSearch": {}}) or doc,
        "GM-01", "/tools/1/enterpriseWebSearch", "error",
        lambda doc: doc["tools"].append({"googleSearch": {}}) or doc),
    req("name starting with a digit", setting(DECL + ["name"], "1weather"), "GM-02", f"{P}/name", "error",
        setting(DECL + ["name"], "_weather")),
    req("name over 64", setting(DECL + ["name"], "w" * 65), "GM-02", f"{P}/name", "error",
        setting(DECL + ["name"], "w" * 64)),
    req("name with a slash", setting(DECL + ["name"], "mcp/get"), "GM-02", f"{P}/name", "error",
        setting(DECL + ["name"], "mcp:get.weather")),
    req("$schema in parameters", setting(PARAMS + ["$schema"], "https://json-schema.org/draft/2020-12/schema"),
        "GM-04", f"{P}/parameters/$schema", "error", same),
    # Issue 18: in the SDK's Schema and taken by Vertex, refused by the Gemini API ("Unknown name"), in
    # either spelling; the same schema as JSON Schema in parametersJsonSchema is taken.
    req("additionalProperties in parameters", setting(PARAMS + ["additionalProperties"], False), "GM-04",
        f"{P}/parameters/additionalProperties", "error",
        doing(deleting(PARAMS), setting(DECL + ["parametersJsonSchema"], {
            "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
            "additionalProperties": False}))),
    req("additional_properties (ADK's spelling) in a nested schema", setting(PARAMS + ["properties", "city"], {
        "type": "OBJECT", "properties": {"name": {"type": "STRING"}}, "additional_properties": False}), "GM-04",
        f"{P}/parameters/properties/city/additional_properties", "error", setting(PARAMS + ["properties", "city"], {
            "type": "OBJECT", "properties": {"name": {"type": "STRING"}}, "additional_properties": False}),
        near_profile="vertex"),
    req("const in parameters", setting(PARAMS + ["properties", "city", "const"], "Oslo"), "GM-04",
        f"{P}/parameters/properties/city/const", "error", setting(PARAMS + ["properties", "city", "enum"], ["Oslo"])),
    req("type array", setting(PARAMS + ["properties", "city", "type"], ["string", "null"]), "GM-04",
        f"{P}/parameters/properties/city/type", "error", setting(PARAMS + ["properties", "city", "nullable"], True)),
    req("null type inside anyOf", setting(PARAMS + ["properties", "city"], {"anyOf": [{"type": "null"},
                                                                                     {"type": "STRING"}]}),
        "GM-04", f"{P}/parameters/properties/city/anyOf/0/type", "error",
        setting(PARAMS + ["properties", "city"], {"anyOf": [{"type": "INTEGER"}, {"type": "STRING"}]})),
    req("properties on a STRING", setting(PARAMS + ["properties", "city", "properties"], {}), "GM-04",
        f"{P}/parameters/properties/city/properties", "error", same),
    req("enum on an INTEGER", setting(PARAMS + ["properties", "city"], {"type": "INTEGER", "enum": [1, 2]}), "GM-04",
        f"{P}/parameters/properties/city/enum", "error",
        setting(PARAMS + ["properties", "city"], {"type": "STRING", "enum": ["1", "2"]})),
    req("property value not a schema", setting(PARAMS + ["properties", "city"], "string"), "GM-04",
        f"{P}/parameters/properties/city", "error", same),
    req("parameters and parametersJsonSchema", setting(DECL + ["parametersJsonSchema"], {"type": "object"}), "GM-05",
        f"{P}/parametersJsonSchema", "error",
        doing(deleting(DECL + ["parameters"]), setting(DECL + ["parametersJsonSchema"], {"type": "object"}))),
    req("Vertex root not OBJECT", setting(PARAMS + ["type"], "STRING"), "GM-06", f"{P}/parameters/type", "error",
        same, profile="vertex",
        also=(("GM-04", "/tools/0/functionDeclarations/0/parameters/properties", "error"), ("GM-04", "/tools/0/functionDeclarations/0/parameters/required", "error"),)),
    req("Vertex mode ANY without parameters", doing(deleting(DECL + ["parameters"]),
                                                    setting(["toolConfig", "functionCallingConfig", "mode"], "ANY")),
        "GM-06", f"{P}/name", "error", setting(["toolConfig", "functionCallingConfig", "mode"], "ANY"),
        profile="vertex"),
    req("role assistant", setting(["contents", 1, "role"], "assistant"), "GM-07", "/contents/1/role", "error", same,
        also=(("GM-07", "/contents/1/parts/0/functionCall", "error"), ("GM-07", "/contents/1/parts/1/functionCall", "error"),)),
    # Role "function" is taken on a turn of functionResponse parts (rules/tolerance.py), not on text.
    req("role function on a text turn", setting(["contents", 0, "role"], "function"), "GM-07", "/contents/0/role",
        "error", setting(["contents", 2, "role"], "function")),
    req("functionCall in a user turn", _contents(USER, {"role": "user", "parts": CALL["parts"]}, ANSWER), "GM-07",
        "/contents/1/parts/0/functionCall", "error", _contents(USER, CALL, ANSWER),
        also=(("GM-10", "/contents/2/parts/0", "error"),)),
    req("args as a JSON string", setting(CALLS + [0, "functionCall", "args"], '{"city":"Oslo"}'), "GM-08",
        "/contents/1/parts/0/functionCall/args", "error", same),
    req("thoughtSignature inside functionCall", setting(CALLS + [0, "functionCall", "thoughtSignature"], "c2ln"),
        "GM-08", "/contents/1/parts/0/functionCall/thoughtSignature", "error",
        setting(CALLS + [0, "thoughtSignature"], "c2ln")),
    req("signature dropped in one turn", _contents(
        USER, {"role": "model", "parts": [{**CALL["parts"][0], "thoughtSignature": "c2ln"}]}, ANSWER,
        CALL, ANSWER), "GM-08", "/contents/3/parts/0", "warning",
        _contents(USER, {"role": "model", "parts": [{**CALL["parts"][0], "thoughtSignature": "c2ln"}]}, ANSWER,
                  {"role": "model", "parts": [{**CALL["parts"][0], "thoughtSignature": "c2ln"}]}, ANSWER)),
    req("response as an array", setting(RESPONSES + [0, "functionResponse", "response"], ["4°C"]), "GM-09",
        "/contents/2/parts/0/functionResponse/response", "error",
        setting(RESPONSES + [0, "functionResponse", "response"], {"output": ["4°C"]})),
    req("functionResponse without name", deleting(RESPONSES + [0, "functionResponse", "name"]), "GM-09",
        "/contents/2/parts/0/functionResponse/name", "error", same,
        also=(("GM-10", "/contents/2", "error"),)),
    req("history starts with a model call", _contents(CALL, ANSWER), "GM-10", "/contents/0/parts/0", "error",
        _contents(USER, CALL, ANSWER)),
    # Consecutive contents of one role are one turn (the API merges them): responses split over two
    # user contents, or a model text before the call, are valid.
    req("fewer responses than calls", deleting(RESPONSES + [1]), "GM-10", "/contents/2", "error",
        lambda doc: doc["contents"].insert(3, {"role": "user", "parts": [doc["contents"][2]["parts"].pop()]}) or doc),
    req("response names do not match", setting(RESPONSES + [1, "functionResponse", "name"], "search_docs"), "GM-10",
        "/contents/2", "error", same),
    req("response turn not after its call", _contents(USER, ANSWER), "GM-10", "/contents/1/parts/0", "error", same),
    req("call turn left unanswered", _contents(USER, CALL, USER), "GM-10", "/contents/1", "error",
        _contents(USER, {"role": "model", "parts": [{"text": "Checking."}]}, CALL, ANSWER)),
    req("call turn with a response part", _contents(USER, {"role": "model", "parts": [
        CALL["parts"][0], ANSWER["parts"][0]]}, ANSWER), "GM-10", "/contents/1/parts/1", "error", same,
        also=(("GM-07", "/contents/1/parts/1/functionResponse", "error"),)),
    # Model-dependent: gemini-2.5 accepts text beside a functionResponse, newer models reject it.
    req("text next to functionResponse", lambda doc: doc["contents"][2]["parts"].append({"text": "and?"}) or doc,
        "GM-11", "/contents/2/parts/2", "warning",
        lambda doc: doc["contents"].insert(3, {"role": "user", "parts": [{"text": "and?"}]}) or doc),
    req("text next to functionResponse on a model that rejects it",
        lambda doc: doc["contents"][2]["parts"].append({"text": "and?"}) or doc, "GM-11", "/contents/2/parts/2",
        "error", lambda doc: doc["contents"].insert(3, {"role": "user", "parts": [{"text": "and?"}]}) or doc,
        profile=_model("gemini-3.1-flash-lite")),
    req("response id echoes no call id", setting(RESPONSES + [0, "functionResponse", "id"], "zz"), "GM-12",
        "/contents/2/parts/0/functionResponse/id", "warning",
        doing(setting(RESPONSES + [0, "functionResponse", "id"], "c2"),
              setting(RESPONSES + [1, "functionResponse", "id"], "c1"))),
    # Gemini 3 pairs by the id it minted: a response without it gets an empty STOP (earendil-works/pi#7494).
    req("response does not echo its call's id", deleting(RESPONSES + [1, "functionResponse", "id"]), "GM-12",
        "/contents/2/parts/1/functionResponse", "warning",
        doing(*(deleting(where + [i, key, "id"]) for where, key in ((CALLS, "functionCall"),
                                                                     (RESPONSES, "functionResponse"))
                for i in (0, 1)))),
    req("call ids repeated", setting(CALLS + [1, "functionCall", "id"], "c1"), "GM-12",
        "/contents/1/parts/1/functionCall/id", "warning", same,
        also=(("GM-12", "/contents/2/parts/1/functionResponse/id", "warning"),)),
    req("allowedFunctionNames with AUTO", setting(["toolConfig", "functionCallingConfig", "allowedFunctionNames"],
                                                  ["get_weather"]), "GM-13",
        "/toolConfig/functionCallingConfig/allowedFunctionNames", "error",
        doing(setting(["toolConfig", "functionCallingConfig", "allowedFunctionNames"], ["get_weather"]),
              setting(["toolConfig", "functionCallingConfig", "mode"], "ANY"))),
    req("allowedFunctionNames names nothing declared", doing(
        setting(["toolConfig", "functionCallingConfig", "allowedFunctionNames"], ["nope"]),
        setting(["toolConfig", "functionCallingConfig", "mode"], "ANY")), "GM-13",
        "/toolConfig/functionCallingConfig/allowedFunctionNames/0", "error", same),
    # Gemini 3 accepts a config beside built-in tools only, Gemini 2.x rejects it: error only when the model says so.
    req("config with only built-in tools", setting(["tools"], [{"googleSearch": {}}]), "GM-13",
        "/toolConfig/functionCallingConfig", "warning",
        doing(setting(["tools"], [{"googleSearch": {}}]), deleting(["toolConfig"]))),
    req("config without declarations on Gemini 2.5", doing(deleting(["tools"]), _contents(USER)), "GM-13",
        "/toolConfig/functionCallingConfig", "error",
        doing(deleting(["tools"]), _contents(USER), setting(["toolConfig", "functionCallingConfig", "mode"], "NONE")),
        profile=_model("models/gemini-2.5-flash")),
    req("duplicate declarations", setting(["tools", 0, "functionDeclarations", 1, "name"], "get_weather"), "GM-14",
        "/tools/0/functionDeclarations/1/name", "error", same),
    req("snake_case duplicate declarations", lambda doc: {**doc, "tools": [{"function_declarations": [
        {"name": "a"}, {"name": "a"}]}], "toolConfig": {}}, "GM-14", "/tools/0/function_declarations/1/name", "error",
        lambda doc: {**doc, "tools": [{"function_declarations": [{"name": "a"}, {"name": "b"}]}], "toolConfig": {}}),
    req("upper-case type in parametersJsonSchema", doing(deleting(DECL + ["parameters"]), setting(
        DECL + ["parametersJsonSchema"], {"type": "OBJECT"})), "XL-01", f"{P}/parametersJsonSchema/type", "error",
        doing(deleting(DECL + ["parameters"]), setting(DECL + ["parametersJsonSchema"], {"type": "object"}))),
    stream("argument streaming on the Gemini API", setting([2, "candidates", 0, "content", "parts", 0, "functionCall",
                                                            "willContinue"], True),
           "GM-15", "/2/candidates/0/content/parts/0/functionCall/willContinue", "warning", same,
           near_profile="vertex"),
    stream("streamed args as a string", setting([3, "candidates", 0, "content", "parts", 0, "functionCall", "args"],
                                                "{}"),
           "GM-08", "/3/candidates/0/content/parts/0/functionCall/args", "error", same),
    # The spec layer: google-genai's types beneath the hand-written rules, read in either spelling (issue 8).
    req("another dialect's field at the top", setting(["max_tokens"], 256), "GM-19", "/max_tokens", "error",
        setting(["generationConfig"], {"maxOutputTokens": 256})),
    req("an unknown field in generation_config, snake_case", setting(["generation_config"], {"max_tokens": 256}),
        "GM-19", "/generation_config/max_tokens", "error", setting(["generation_config"], {"max_output_tokens": 256})),
    req("a misspelt part field", setting(["contents", 4, "parts", 0], {"txt": "Thanks"}), "GM-19",
        "/contents/4/parts/0/txt", "error", setting(["contents", 4, "parts", 0], {"text": "Thanks", "thought": False})),
    # google-genai's types serve both APIs and say which fields one of them refuses ("not supported in
    # Gemini API" / "… in Vertex AI"): the field trips on the API that does not take it, and is the
    # near miss on the one that does.
    req("a Vertex AI tool on the Gemini API", lambda doc: {**doc, "tools": [*doc["tools"], {"retrieval": {
        "vertexAiSearch": {"datastore": "projects/p/locations/global/collections/default_collection/dataStores/d"}}}]},
        "GM-19", "/tools/1/retrieval", "error", same, near_profile="vertex"),
    req("a Vertex AI safety-setting field on the Gemini API", setting(["safetySettings"], [
        {"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_NONE", "method": "SEVERITY"}]), "GM-19",
        "/safetySettings/0/method", "error", same, near_profile="vertex"),
    req("a Gemini API field on Vertex AI", setting(["store"], True), "GM-19", "/store", "error", same,
        profile="vertex", near_profile="gemini"),
    req("a string where a number goes", setting(["generationConfig"], {"temperature": "warm"}), "GM-20",
        "/generationConfig/temperature", "error", setting(["generationConfig"], {"temperature": 0.7, "topK": 40})),
    req("a harm category Gemini does not have", setting(["safetySettings"], [
        {"category": "HARM_CATEGORY_RUDENESS", "threshold": "BLOCK_NONE"}]), "GM-20", "/safetySettings/0/category",
        "error", setting(["safety_settings"], [{"category": "harm_category_hate_speech", "threshold": "BLOCK_NONE"}])),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_rule(case):
    assert_case(case)


def test_valid_baselines_have_no_violations():
    assert check.check_request(gemini_request(), GEM) == []
    assert check.check_request(gemini_request(), GEM, "vertex") == []
    assert check.check_response(gemini_response(), GEM) == []
    assert check.check_stream(sse(gemini_chunks()), GEM) == []


def test_json_array_stream_and_sse_reassemble_alike():
    import orjson

    as_array = check.reassemble(orjson.dumps(gemini_chunks()), GEM)
    assert as_array == check.reassemble(sse(gemini_chunks()), GEM)
    parts = as_array["candidates"][0]["content"]["parts"]
    assert parts == [{"text": "Checking."},
                     {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}, "id": "a"}},
                     {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}, "id": "b"}}]
    assert (as_array["candidates"][0]["finishReason"], as_array["usageMetadata"]) == ("STOP", {"totalTokenCount": 7})


def test_a_truncated_json_array_stream_keeps_the_whole_elements():
    import orjson

    body = orjson.dumps(gemini_chunks())[:-40]
    parts = check.reassemble(body, GEM)["candidates"][0]["content"]["parts"]
    assert parts == [{"text": "Checking."},
                     {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}, "id": "a"}}]
