"""Structured output across the bridges (issue 8): Chat's response_format, Responses' text.format,
Gemini's responseMimeType with responseJsonSchema/responseSchema (both spellings) and Anthropic's
output_config.format carry the schema, its name, description and strict each way, and report by
pointer whatever the target cannot take. Every translated request passes our own checker."""

from __future__ import annotations

import orjson
import pytest

from inspector.wire.dialect import Dialect
from inspector.wire.translate import PAIRS

from .test_translate_classes import ANT, BR, CHAT, GEM, PATH, RESP, ant, chat, send

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}, "temp": {"type": "number"}},
          "required": ["city", "temp"], "additionalProperties": False}
GENAI = {"type": "OBJECT", "properties": {"city": {"type": "STRING"}, "temp": {"type": "NUMBER"}},
         "required": ["city", "temp"]}
SCHEMA_TEXT = orjson.dumps(SCHEMA).decode()  # Converse takes the schema as its JSON text
HI_GEM = [{"role": "user", "parts": [{"text": "hi"}]}]


def resp(**extra) -> dict:
    return {"model": "gpt-5", "input": "hi", **extra}


def gem(**generation) -> dict:
    return {"contents": HI_GEM, "generationConfig": generation}


def notes(sent) -> list[tuple[str, str | None, str, str]]:
    # Responses always adds its store note, Anthropic its max_tokens one: neither is about structured output.
    return [(loss.source, loss.target, loss.kind, loss.why) for loss in sent.losses
            if loss.target not in ("/store", "/max_tokens")]


def pairs(*sources: Dialect):
    """The offered bridges from these client dialects, as parameters."""
    chosen = [(s, t) for s, t in PAIRS if s in sources]
    return pytest.mark.parametrize(("source", "target"), chosen, ids=[f"{s.value}:{t.value}" for s, t in chosen])


def output_of(target: Dialect, payload: dict):
    """The structured-output part of a translated request, wherever the target keeps it."""
    if target is CHAT:
        return payload.get("response_format")
    if target is RESP:
        return payload.get("text")
    if target is ANT:
        return payload.get("output_config")
    if target is BR:
        return payload.get("outputConfig")
    return {k: v for k, v in payload.get("generationConfig", {}).items() if k.startswith("response")} or None


# --- a named, described, strict schema -----------------------------------------------------------

NAMED = {CHAT: chat(response_format={"type": "json_schema", "json_schema": {
             "name": "weather", "description": "the forecast", "schema": SCHEMA, "strict": True}}),
         RESP: resp(text={"format": {"type": "json_schema", "name": "weather", "description": "the forecast",
                                     "schema": SCHEMA, "strict": True}})}
NAMED_AT = {CHAT: "/response_format/json_schema", RESP: "/text/format"}
CARRIED = {CHAT: {"type": "json_schema", "json_schema": {"name": "weather", "schema": SCHEMA,
                                                         "description": "the forecast", "strict": True}},
           RESP: {"format": {"type": "json_schema", "name": "weather", "schema": SCHEMA,
                             "description": "the forecast", "strict": True}},
           ANT: {"format": {"type": "json_schema", "schema": SCHEMA}},
           GEM: {"responseMimeType": "application/json", "responseJsonSchema": SCHEMA},
           BR: {"textFormat": {"type": "json_schema", "structure": {"jsonSchema": {
               "schema": SCHEMA_TEXT, "name": "weather", "description": "the forecast"}}}}}


@pairs(CHAT, RESP)
def test_an_openai_schema_reaches_every_target_with_what_it_can_carry(source: Dialect, target: Dialect) -> None:
    sent = send(source, target, NAMED[source])
    assert output_of(target, sent.payload) == CARRIED[target]
    at = NAMED_AT[source]
    expected = [] if target in (CHAT, RESP, BR) else [
        (f"{at}/name", None, "dropped", f"{target.value} takes no name for the response schema"),
        (f"{at}/description", None, "dropped",
         f"{target.value} takes no description for the response schema; put it in the prompt")]
    assert notes(sent) == expected


@pytest.mark.parametrize("target", [RESP, ANT, GEM])
def test_strict_false_is_reported_where_the_target_always_holds_to_the_schema(target: Dialect) -> None:
    sent = send(CHAT, target, chat(response_format={"type": "json_schema", "json_schema": {
        "name": "weather", "schema": SCHEMA, "strict": False}}))
    if target is RESP:
        assert output_of(target, sent.payload) == {"format": {"type": "json_schema", "name": "weather",
                                                              "schema": SCHEMA, "strict": False}}
        assert notes(sent) == []
        return
    assert output_of(target, sent.payload) == CARRIED[target]
    assert notes(sent) == [
        ("/response_format/json_schema/name", None, "dropped", f"{target.value} takes no name for the response schema"),
        ("/response_format/json_schema/strict", None, "converted",
         f"{target.value} always holds the answer to the schema; strict false cannot be stated")]


# --- a schema without a name (Anthropic, Gemini) gets one on OpenAI ------------------------------

UNNAMED = {ANT: ant(output_config={"format": {"type": "json_schema", "schema": SCHEMA}}),
           GEM: gem(responseMimeType="application/json", responseJsonSchema=SCHEMA)}
UNNAMED_AT = {ANT: "/output_config/format", GEM: "/generationConfig/responseMimeType"}
OPENAI_UNNAMED = {CHAT: {"type": "json_schema", "json_schema": {"name": "response", "schema": SCHEMA}},
                  RESP: {"format": {"type": "json_schema", "name": "response", "schema": SCHEMA}}}
NAME_AT = {CHAT: "/response_format/json_schema/name", RESP: "/text/format/name"}


@pairs(ANT, GEM)
def test_an_unnamed_schema_reaches_every_target(source: Dialect, target: Dialect) -> None:
    sent = send(source, target, UNNAMED[source])
    if target in (CHAT, RESP):
        assert output_of(target, sent.payload) == OPENAI_UNNAMED[target]
        assert notes(sent) == [(UNNAMED_AT[source], NAME_AT[target], "synthesised",
                                f"{target.value} needs a name for the response schema; 'response' is sent")]
    elif target is BR:
        assert output_of(target, sent.payload) == {"textFormat": {"type": "json_schema", "structure": {
            "jsonSchema": {"schema": SCHEMA_TEXT}}}}
        assert notes(sent) == []
    else:
        assert output_of(target, sent.payload) == CARRIED[target]
        assert notes(sent) == []


def test_a_converse_schema_reaches_every_target_and_strict_false_is_reported_on_the_way_in() -> None:
    body = {"messages": [{"role": "user", "content": [{"text": "hi"}]}], "outputConfig": {"textFormat": {
        "type": "json_schema", "structure": {"jsonSchema": {"schema": SCHEMA_TEXT, "name": "weather"}}}}}
    for target in (CHAT, RESP):
        assert output_of(target, send(BR, target, body).payload) == {
            CHAT: {"type": "json_schema", "json_schema": {"name": "weather", "schema": SCHEMA}},
            RESP: {"format": {"type": "json_schema", "name": "weather", "schema": SCHEMA}}}[target]
    sent = send(CHAT, BR, chat(response_format={"type": "json_schema", "json_schema": {
        "name": "weather", "schema": SCHEMA, "strict": False}}))
    assert notes(sent) == [("/response_format/json_schema/strict", None, "converted",
                            "Converse always holds the answer to the schema; strict false cannot be stated")]


@pytest.mark.parametrize("schema", ["{not json", "[1]", {"type": "object"}])
def test_a_converse_schema_that_is_not_json_schema_text_is_reported_not_read(schema) -> None:
    body = {"messages": [{"role": "user", "content": [{"text": "hi"}]}], "outputConfig": {"textFormat": {
        "type": "json_schema", "structure": {"jsonSchema": {"schema": schema}}}}}
    from inspector.wire.translate import get_bridge

    sent = get_bridge(BR, CHAT).request(body, PATH[BR])
    assert "response_format" not in sent.payload
    assert notes(sent) == [("/outputConfig/textFormat", None, "dropped", "an outputConfig.textFormat that is not a "
                            "JSON Schema (as JSON text) has no counterpart")]


def test_anthropic_beta_output_format_is_read_like_output_config() -> None:
    sent = send(ANT, RESP, ant(output_format={"type": "json_schema", "schema": SCHEMA}))
    assert output_of(RESP, sent.payload) == OPENAI_UNNAMED[RESP]
    assert notes(sent) == [("/output_format", "/text/format/name", "synthesised",
                            "openai-responses needs a name for the response schema; 'response' is sent")]


def test_anthropic_output_config_effort_is_reported_at_its_own_pointer() -> None:
    sent = send(ANT, CHAT, ant(output_config={"effort": "low", "format": {"type": "json_schema", "schema": SCHEMA}}))
    assert output_of(CHAT, sent.payload) == OPENAI_UNNAMED[CHAT]
    assert notes(sent) == [
        ("/output_config/format", "/response_format/json_schema/name", "synthesised",
         "openai-chat needs a name for the response schema; 'response' is sent"),
        ("/output_config/effort", None, "dropped", "output_config.effort has no counterpart")]


# --- Gemini: both spellings, and a genai Schema through the one converter ------------------------

@pytest.mark.parametrize("body", [
    gem(responseMimeType="application/json", responseJsonSchema=SCHEMA),
    {"contents": HI_GEM, "generation_config": {"response_mime_type": "application/json",
                                               "response_json_schema": SCHEMA}},
], ids=["camelCase", "snake_case"])
def test_gemini_response_json_schema_is_read_in_both_spellings(body: dict) -> None:
    sent = send(GEM, CHAT, body)
    assert output_of(CHAT, sent.payload) == OPENAI_UNNAMED[CHAT]
    at = "/generation_config/response_mime_type" if "generation_config" in body else UNNAMED_AT[GEM]
    assert notes(sent) == [(at, "/response_format/json_schema/name", "synthesised",
                            "openai-chat needs a name for the response schema; 'response' is sent")]


def test_a_genai_response_schema_is_converted_to_json_schema_with_a_report() -> None:
    body = {"contents": HI_GEM, "generation_config": {"response_mime_type": "application/json",
                                                      "response_schema": {**GENAI, "nullable": True}}}
    sent = send(GEM, CHAT, body)
    converted = {"type": ["object", "null"], "properties": {"city": {"type": "string"}, "temp": {"type": "number"}},
                 "required": ["city", "temp"]}
    assert output_of(CHAT, sent.payload) == {"type": "json_schema", "json_schema": {"name": "response",
                                                                                   "schema": converted}}
    assert [(s, t, k) for s, t, k, _ in notes(sent)] == [
        ("/generation_config/response_schema/type", None, "converted"),
        ("/generation_config/response_schema/properties/city/type", None, "converted"),
        ("/generation_config/response_schema/properties/temp/type", None, "converted"),
        ("/generation_config/response_schema/nullable", None, "converted"),
        ("/generation_config/response_mime_type", "/response_format/json_schema/name", "synthesised")]


def test_gemini_enum_mime_type_has_no_counterpart() -> None:
    # text/x.enum answers with the bare value; a JSON Schema on OpenAI would answer it quoted.
    sent = send(GEM, CHAT, gem(responseMimeType="text/x.enum", responseSchema={"type": "STRING", "enum": ["a", "b"]}))
    assert "response_format" not in sent.payload
    assert notes(sent) == [
        ("/generationConfig/responseMimeType", None, "dropped", "responseMimeType 'text/x.enum' has no counterpart"),
        ("/generationConfig/responseSchema", None, "dropped",
         "generationConfig.responseSchema serves 'text/x.enum', which has no counterpart")]


# --- JSON mode and plain text ---------------------------------------------------------------------

# JSON mode on OpenAI needs the prompt to ask for JSON (OC-31, OR-20): each source says it.
ASK_JSON = "hi, in JSON"
JSON_MODE = {CHAT: {**chat(response_format={"type": "json_object"}),
                    "messages": [{"role": "user", "content": ASK_JSON}]},
             RESP: resp(input=ASK_JSON, text={"format": {"type": "json_object"}}),
             GEM: {**gem(responseMimeType="application/json"), "contents": [{"role": "user",
                                                                               "parts": [{"text": ASK_JSON}]}]}}
JSON_CARRIED = {CHAT: {"type": "json_object"}, RESP: {"format": {"type": "json_object"}},
                GEM: {"responseMimeType": "application/json"}}
JSON_AT = {CHAT: "/response_format", RESP: "/text/format", GEM: "/generationConfig/responseMimeType"}


@pairs(CHAT, RESP, GEM)
def test_json_mode_is_carried_and_reported_lost_only_on_anthropic(source: Dialect, target: Dialect) -> None:
    sent = send(source, target, JSON_MODE[source])
    if target in (ANT, BR):
        assert output_of(target, sent.payload) is None
        said = {ANT: "Anthropic", BR: "Converse"}[target]
        assert notes(sent) == [(JSON_AT[source], None, "dropped", f"{said} constrains answers only to a JSON "
                                "Schema; 'any JSON object' has no counterpart, so the answer is not held to JSON")]
    else:
        assert output_of(target, sent.payload) == JSON_CARRIED[target]
        assert notes(sent) == []


TEXT = {CHAT: chat(response_format={"type": "text"}), RESP: resp(text={"format": {"type": "text"}}),
        GEM: gem(responseMimeType="text/plain")}
TEXT_CARRIED = {CHAT: {"type": "text"}, RESP: {"format": {"type": "text"}}, GEM: {"responseMimeType": "text/plain"}}


@pairs(CHAT, RESP, GEM)
def test_plain_text_is_stated_where_the_target_can_state_it(source: Dialect, target: Dialect) -> None:
    sent = send(source, target, TEXT[source])
    if target in (ANT, BR):
        assert output_of(target, sent.payload) is None
        said = {ANT: "Anthropic", BR: "Converse"}[target]
        assert notes(sent) == [(JSON_AT[source], None, "dropped", f"plain text is {said}'s default; nothing to state")]
    else:
        assert output_of(target, sent.payload) == TEXT_CARRIED[target]
        assert notes(sent) == []


# --- what does not fit ----------------------------------------------------------------------------

def test_a_schema_name_openai_refuses_is_fitted_and_reported() -> None:
    sent = send(ANT, CHAT, ant(output_config={"format": {"type": "json_schema", "schema": SCHEMA}}))
    assert sent.payload["response_format"]["json_schema"]["name"] == "response"
    sent = send(CHAT, RESP, chat(response_format={"type": "json_schema", "json_schema": {
        "name": "the weather!", "schema": SCHEMA}}))
    assert sent.payload["text"] == {"format": {"type": "json_schema", "name": "the_weather_", "schema": SCHEMA}}
    assert notes(sent) == [("/response_format/json_schema/name", "/text/format/name", "converted",
                            "the schema name 'the weather!' does not fit openai-responses (letters, digits, _ and -, "
                            "at most 64); sent as 'the_weather_'")]


def test_responses_text_verbosity_is_reported_beside_the_format() -> None:
    sent = send(RESP, CHAT, resp(input=ASK_JSON, text={"format": {"type": "json_object"}, "verbosity": "low"}))
    assert sent.payload["response_format"] == {"type": "json_object"}
    assert notes(sent) == [("/text/verbosity", None, "dropped", "text.verbosity has no counterpart")]


def test_a_format_type_nobody_else_has_is_reported_near_miss() -> None:
    sent = send(CHAT, ANT, chat(response_format={"type": "grammar", "grammar": "start: x"}))
    assert "output_config" not in sent.payload
    assert notes(sent) == [("/response_format/type", None, "dropped", "output format 'grammar' has no counterpart")]


def test_no_structured_output_asks_for_none_near_miss() -> None:
    for target in (RESP, ANT, GEM, BR):  # every bridge a Chat client has
        assert output_of(target, send(CHAT, target, chat()).payload) is None
