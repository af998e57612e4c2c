"""Issue 9: a finding's why is about that finding (its value, its place), and every finding says what
the provider does with it (rejects, may reject, ignores, changes, accepts, breaks client)."""

from __future__ import annotations

import re

from inspector.wire import check, profiles
from inspector.wire.dialect import Dialect
from inspector.wire.rules.base import FACTS
from inspector.wire.rules.catalogue import RULES
from inspector.wire.violations import Effect, Severity

from .wire_payloads import anthropic_request, chat_request, chat_response, gemini_request, responses_request


def _found(violations):
    return [(v.rule, v.severity.value, v.effect.value, v.pointer, v.why) for v in violations]


def test_two_upper_case_types_each_quote_their_own_value():
    payload = chat_request()
    properties = payload["tools"][0]["function"]["parameters"]["properties"]
    properties["city"]["type"] = "STRING"
    properties["days"]["type"] = "OBJECT"
    head = ("parameters must be a JSON Schema object with lower-case types and a properties map at its root; OpenAI "
            "validates it and answers 400 naming ")
    tail = " \"is not valid under any of the given schemas\"; a bare object: \"object schema missing properties\")."
    # The nested OBJECT without properties is a free-form object: only the root needs its map.
    assert _found(check.check_request(payload, "openai-chat")) == [
        ("OC-05", "error", "rejects", "/tools/0/function/parameters/properties/city/type",
         head + "the value ('STRING' at 'tools[0].function.parameters.properties.city.type'" + tail),
        ("OC-05", "error", "rejects", "/tools/0/function/parameters/properties/days/type",
         head + "the value ('OBJECT' at 'tools[0].function.parameters.properties.days.type'" + tail),
    ]


def test_a_bare_object_root_quotes_its_own_value_and_the_provider_s_words():
    payload = chat_request()
    payload["tools"][0]["function"]["parameters"] = {"type": "object"}
    head = ("parameters must be a JSON Schema object with lower-case types and a properties map at its root; OpenAI "
            "validates it and answers 400 naming ")
    assert _found(check.check_request(payload, "openai-chat")) == [
        ("OC-05", "error", "rejects", "/tools/0/function/parameters",
         head + "the value ({\"type\": \"object\"} at 'tools[0].function.parameters' \"is not valid under any of the "
                "given schemas\"; a bare object: \"object schema missing properties\")."),
    ]


def test_a_keyword_the_provider_ignores_says_so_not_400():
    payload = anthropic_request()
    payload["tools"][0]["input_schema"]["properties"]["city"] = {"type": "STRING", "nullable": True}
    assert _found(check.check_request(payload, "anthropic")) == [
        ("XL-01", "error", "rejects", "/tools/0/input_schema/properties/city/type",
         "JSON-Schema consumers (OpenAI, Anthropic, MCP) validate tool schemas as JSON Schema with lower-case types, "
         "and reject the schema at 'tools[0].input_schema.properties.city.type' (it holds 'STRING')."),
        ("XL-01", "warning", "ignores", "/tools/0/input_schema/properties/city/nullable",
         "nullable: true is genai Schema, not JSON Schema; the provider accepts the schema and ignores the keyword, "
         "so what it says (nullability, property order, an enum format) is lost to the model."),
    ]


def test_null_and_empty_lists_are_told_apart():
    nulled = chat_request()
    nulled["tools"] = None
    del nulled["tool_choice"]
    del nulled["messages"][2:5]  # the history without its calls, so no tools are needed
    emptied = chat_request()
    emptied["tools"] = []
    del emptied["messages"][2:5]
    assert [(v.rule, v.severity.value, v.effect.value, v.why) for v in check.check_request(nulled, "openai-chat")] == [
        ("OC-09", "info", "ignores",
         "tools is not nullable in the spec; clients send null to mean absent, and OpenAI reads it so.")]
    assert [(v.rule, v.severity.value, v.effect.value, v.why) for v in check.check_request(emptied, "openai-chat")] == [
        ("OC-09", "error", "rejects", "tools: [] is rejected (\"[] is too short\"): the API needs at least one item."),
        ("OC-11", "warning", "may reject", "tool_choice without tools is rejected by OpenAI-compatible servers (\"When "
         "using `tool_choice`, `tools` must be set.\"); a named choice should name a declared tool.")]
    del emptied["tool_choice"]  # without a tool_choice an empty list is read as no tools
    assert [(v.rule, v.severity.value, v.effect.value, v.why) for v in check.check_request(emptied, "openai-chat")] == [
        ("OC-09", "warning", "ignores", "tools: [] declares nothing; the API accepts it and ignores it.")]


def test_an_empty_tool_list_is_refused_where_the_server_refuses_it():
    # earendil-works/pi#3649: DashScope answers tools: [] with 400 "[] is too short - 'tools'" (DeepSeek too);
    # the same request is read as no tools by OpenAI (the near miss above).
    emptied = chat_request()
    emptied["tools"] = []
    del emptied["messages"][2:5]
    del emptied["tool_choice"]
    profile = profiles.for_upstream("https://dashscope-intl.aliyuncs.com/compatible-mode/v1", Dialect.OPENAI_CHAT)
    assert profile.name == "openai-compatible"
    assert [(v.rule, v.severity.value, v.effect.value, v.why) for v in check.check_request(emptied, "openai-chat",
                                                                                           profile)] == [
        ("OC-09", "error", "rejects", "tools: [] is rejected (\"[] is too short\"): the API needs at least one item.")]


def test_spec_layer_findings_name_their_own_field_and_value():
    payload = chat_request()
    payload["temperature"] = "hot"
    payload["n"] = "two"
    head = "api.openai.com validates the request against its published schema and answers 400 naming the field "
    assert _found(check.check_request(payload, "openai-chat")) == [
        ("OC-28", "error", "rejects", "/temperature", head + "(\"Invalid 'temperature'…\"; it holds 'hot')."),
        ("OC-28", "error", "rejects", "/n", head + "(\"Invalid 'n'…\"; it holds 'two')."),
    ]


def test_range_findings_quote_their_own_field_and_value():
    payload = chat_request()
    payload["top_p"] = 7
    payload["temperature"] = 3
    assert _found(check.check_request(payload, "openai-chat")) == [
        ("OC-30", "error", "rejects", "/temperature", "Chat takes sampling and length values within their ranges only "
         "(temperature 0–2, top_p 0–1, max_tokens / max_completion_tokens at least 1) and answers 400 for temperature "
         "3 (\"Invalid 'temperature': … Expected a value …\"); compatible servers take the same ranges, Mistral "
         "documents no upper temperature bound."),
        ("OC-30", "error", "rejects", "/top_p", "Chat takes sampling and length values within their ranges only "
         "(temperature 0–2, top_p 0–1, max_tokens / max_completion_tokens at least 1) and answers 400 for top_p 7 "
         "(\"Invalid 'top_p': … Expected a value …\"); compatible servers take the same ranges, Mistral documents "
         "no upper temperature bound."),
    ]
    anthropic = anthropic_request()
    anthropic["max_tokens"] = "many"
    assert _found(check.check_request(anthropic, "anthropic")) == [
        ("AN-14", "error", "rejects", "/max_tokens", "Anthropic validates the request against its API definition and "
         "answers 400 field by field (\"max_tokens: …\"; it holds 'many')."),
    ]


def test_quoted_provider_errors_carry_the_finding_s_value():
    payload = responses_request()
    payload["input"][2] = {"role": "tool", "content": "4°C"}
    rule, severity, effect, pointer, why = _found(check.check_request(payload, "openai-responses"))[0]
    assert (rule, severity, effect, pointer, why) == (
        "OR-05", "error", "rejects", "/input/2/role", "Responses input has no role:\"tool\" (\"Invalid value: 'tool'. "
        "Supported values are: 'assistant', 'system', 'developer', and 'user'.\").")
    gemini = gemini_request()
    city = gemini["tools"][0]["functionDeclarations"][0]["parameters"]["properties"]["city"]
    city["type"] = ["STRING", "NULL"]
    city["const"] = "Oslo"
    head = ("Gemini parses parameters proto-strictly: unknown keywords, type arrays, \"null\" types, properties/enum "
            "in the wrong place give 400 naming the field ('tools[0].functionDeclarations[0].parameters.properties."
            "city.")
    assert [(v.pointer.rsplit("/", 1)[1], v.why) for v in check.check_request(gemini, "gemini")] == [
        ("const", head + "const', which holds 'Oslo')."),
        ("type", head + "type', which holds [\"STRING\", \"NULL\"])."),
    ]


def test_a_response_finding_breaks_the_client_rather_than_being_rejected():
    response = chat_response()
    response["choices"][0]["message"]["tool_calls"] = [{"id": "call_1", "type": "function",
                                                         "function": {"name": "get_weather", "arguments": {"a": 1}}}]
    response["choices"][0]["finish_reason"] = "tool_calls"
    assert [(v.rule, v.severity, v.effect, v.why) for v in check.check_response(response, "openai-chat")] == [
        ("OC-14", Severity.ERROR, Effect.BREAKS_CLIENT,
         "A tool call needs id, type:\"function\", function.name and function.arguments as a string; OpenAI answers "
         "400 naming 'choices[0].message.tool_calls[0].function.arguments' (which holds object here). Here it is in a "
         "response: the client gets it as it is, and a next request that replays it meets that answer.")]


def test_why_templates_quote_only_known_facts():
    for rule in RULES.values():
        for severity, why in [(rule.severity, rule.why), *rule.why_at.items()]:
            assert set(re.findall(r"\{\{(\w+)\}\}", why)) <= set(FACTS), (rule.id, severity)
            assert "{{" not in re.sub(r"\{\{\w+\}\}", "", why), (rule.id, severity)


def test_a_why_claims_rejection_only_where_the_effect_is_one():
    """Where the provider accepts (ignores, changes, accepts), the why must not say it answers 400."""
    claims = re.compile(r"answers 400|\bis rejected|\brejects it\b|\brefuses?\b", re.IGNORECASE)
    for rule in RULES.values():
        for severity in Severity:
            if rule.effect_at(severity) in (Effect.IGNORES, Effect.CHANGES, Effect.ACCEPTS):
                assert not claims.search(rule.why_for(severity)), (rule.id, severity.value, rule.why_for(severity))


def test_each_variant_of_a_rule_gets_a_why_about_its_own_defect():
    """GM-02 reports a bad name and a declaration that is not an object: only the first quotes the
    name error."""
    payload = gemini_request()
    declarations = payload["tools"][0]["functionDeclarations"]
    declarations[0]["name"] = "get weather"
    declarations[1] = "search"
    assert [(v.pointer, v.message, v.why) for v in check.check_request(payload, "gemini")] == [
        ("/tools/0/functionDeclarations/0/name",
         "function name 'get weather' must start with a letter or _, then a-z A-Z 0-9 _ . : -",
         "\"Invalid function name. Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or contain "
         "underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.\""),
        ("/tools/0/functionDeclarations/1", "function declaration is 'search', not an object",
         "A function declaration is an object {name, description?, parameters?…}; Gemini answers 400 for "
         "'tools[0].functionDeclarations[1]'."),
    ]


def test_json_mode_without_the_word_quotes_its_own_format_and_place():
    chat = chat_request()
    chat["response_format"] = {"type": "json_object"}
    responses = responses_request()
    responses["text"] = {"format": {"type": "json_object"}}
    assert _found(check.check_request(chat, "openai-chat")) == [
        ("OC-31", "error", "rejects", "/response_format/type",
         "JSON mode needs the prompt to ask for JSON: with 'json_object' at 'response_format.type' OpenAI answers 400 "
         "\"'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.\" "
         "The word counts in any message and any part, in any case; compatible servers do not check it.")]
    assert _found(check.check_request(responses, "openai-responses")) == [
        ("OR-20", "error", "rejects", "/text/format/type",
         "JSON mode needs the prompt to ask for JSON: with 'json_object' at 'text.format.type' the Responses API "
         "answers 400 as Chat does (the input messages \"must contain the word 'json' in some form\"). The word "
         "counts in instructions and in any input item, in any case.")]


def test_a_strict_tool_without_parameters_is_refused_at_its_own_place():
    payload = chat_request()
    del payload["tools"][1]["function"]["parameters"]
    payload["tools"][1]["function"]["strict"] = True
    payload["parallel_tool_calls"] = False
    assert _found(check.check_request(payload, "openai-chat")) == [
        ("OC-06", "error", "rejects", "/tools/1/function/parameters",
         "With strict:true OpenAI accepts only the Structured-Outputs subset and answers 400 naming the first place "
         "outside it ('tools[1].function.parameters').")]


def test_a_file_part_with_data_names_its_own_field():
    payload = chat_request()
    payload["messages"][1]["content"] = [{"type": "file", "file": {"filename": "a.pdf", "data": "data:application/pdf;"
                                                                                              "base64,JVBERi0="}}]
    assert [(v.rule, v.pointer, v.why, v.hint) for v in check.check_request(payload, "openai-chat")] == [
        ("OC-29", "/messages/1/content/0/file/data",
         "OpenAI rejects parameters an endpoint does not define (\"Unknown parameter: "
         "'messages[1].content[0].file.data'.\"); compatible servers take extras of their own, so only OpenAI's hosts "
         "are checked.", "Send the base64 data URL as file.file_data (and a filename).")]


def test_anthropic_container_and_output_format_in_openai_s_shape_name_their_place():
    payload = anthropic_request()
    payload["container"] = {"type": "auto"}
    payload["output_format"] = {"type": "json_schema", "json_schema": {"name": "w", "schema": {"type": "object"}}}
    assert _found(check.check_request(payload, "anthropic")) == [
        ("AN-14", "error", "rejects", "/container/type", "Anthropic validates the request against its API definition "
         "and answers 400 field by field (\"container.type: …\"; it holds 'auto')."),
        ("AN-14", "error", "rejects", "/output_format", "Anthropic validates the request against its API definition "
         "and answers 400 field by field (\"output_format: …\"; it holds {\"type\": \"json_schema\", \"json_schema\": "
         "{\"name\": \"w\", \"schema…)."),
    ]


def test_additional_properties_in_gemini_parameters_names_its_place():
    payload = gemini_request()
    payload["tools"][0]["functionDeclarations"][0]["parameters"]["additionalProperties"] = False
    assert [(v.rule, v.pointer, v.message, v.why) for v in check.check_request(payload, "gemini")] == [
        ("GM-04", "/tools/0/functionDeclarations/0/parameters/additionalProperties",
         "function 'get_weather': the Gemini API rejects 'additionalProperties' in a Schema (\"Unknown name\"; Vertex "
         "takes it): a JSON Schema goes in parametersJsonSchema",
         "Gemini parses parameters proto-strictly: unknown keywords, type arrays, \"null\" types, properties/enum in "
         "the wrong place give 400 naming the field ('tools[0].functionDeclarations[0].parameters."
         "additionalProperties', which holds false).")]
    assert check.check_request(payload, "gemini", "vertex") == []


def test_a_server_tool_use_without_its_result_quotes_its_own_id():
    payload = anthropic_request()
    payload["messages"][1]["content"][0] = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
                                            "input": {"query": "x"}}
    assert _found(check.check_request(payload, "anthropic")) == [
        ("AN-04", "error", "rejects", "/messages/1/content/0/id",
         "A server tool's call and its result (web_search_tool_result, mcp_tool_result, …) live in the same assistant "
         "message; Anthropic refuses a history where the use 'srvtoolu_1' at 'messages.1.content.0.id' has no result "
         "there, as it refuses a result with no use before it.")]


def test_a_files_api_source_without_the_beta_names_its_place_and_the_header():
    payload = anthropic_request()
    payload["messages"][0]["content"] = [{"type": "document", "source": {"type": "file", "file_id": "file_1"}}]
    assert [(v.rule, v.pointer, v.message, v.why) for v in check.check_request(payload, "anthropic")] == [
        ("AN-14", "/messages/0/content/0/source/type",
         "a document source of type 'file' is the Files API's, which needs the header anthropic-beta: "
         "files-api-2025-04-14",
         "Anthropic validates the request against its API definition and answers 400 field by field "
         "(\"messages.0.content.0.source.type: …\"; it holds 'file').")]
    # The header as a recorded flow or `check --header` gives it.
    assert check.check_document(payload, "anthropic", "request",
                                headers=[("anthropic-beta", "files-api-2025-04-14")]).violations == []
