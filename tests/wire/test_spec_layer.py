"""The spec layer (rules/spec.py): the vendored schema is what refresh.py makes, the provider's
known leniencies are not errors, and compatible servers are not judged by OpenAI's schema."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from inspector.wire import check, profiles
from inspector.wire.dialect import Dialect
from inspector.wire.specs import refresh

from .test_hostile_json import DEEP_SCHEMAS
from .wire_payloads import anthropic_request, chat_request, gemini_request, responses_request

SNIPPET = {
    "openapi": "3.1.0",
    "paths": {"/chat/completions": {"post": {"requestBody": {"content": {"application/json": {
        "schema": {"$ref": "#/components/schemas/Req"}}}}}},
              "/responses": {"post": {"requestBody": {"content": {"application/json": {
                  "schema": {"$ref": "#/components/schemas/Resp"}}}}}}},
    "components": {"schemas": {
        "Resp": {"type": "object", "properties": {"input": {"type": "string", "title": "dropped"}}},
        "Req": {"type": "object", "description": "dropped", "required": ["model"],
                "properties": {"model": {"type": "string", "example": "gpt"},
                               "temperature": {"type": "number", "minimum": 0, "maximum": 2, "nullable": True},
                               "kind": {"type": "string", "enum": ["a"], "nullable": True, "x-stainless-const": True},
                               "part": {"$ref": "#/components/schemas/Part", "nullable": True}}},
        "Part": {"oneOf": [{"type": "string"}], "discriminator": {"propertyName": "type"}},
        "Unreached": {"type": "string"},
    }},
}


def test_refresh_extracts_what_the_request_reaches_and_rewrites_nullable(tmp_path):
    provenance = {"source": "snippet", "commit": "0", "date": "2026-11-30", "license": "MIT"}
    document = refresh.extract(SNIPPET, {"openai-chat": ("/chat/completions", "post")}, provenance)
    assert document == {
        "provenance": provenance,
        "requests": {"openai-chat": "Req"},
        "$defs": {
            "Part": {"oneOf": [{"type": "string"}]},
            "Req": {"type": "object", "required": ["model"], "properties": {
                "model": {"type": "string"},
                "temperature": {"type": ["number", "null"], "minimum": 0, "maximum": 2},
                "kind": {"type": ["string", "null"], "enum": ["a", None]},
                "part": {"anyOf": [{"$ref": "#/$defs/Part"}, {"type": "null"}]}}},
        },
    }
    # The script end to end: YAML in, the same document and the licence beside it out.
    yaml = pytest.importorskip("yaml")
    (tmp_path / "openapi.yaml").write_text(yaml.safe_dump(SNIPPET))
    (tmp_path / "openai-openapi.LICENSE").write_text("MIT\n")
    out = tmp_path / "out" / "openai.json"
    out.parent.mkdir()
    refresh.main(["openai", "--openapi", str(tmp_path / "openapi.yaml"), "--commit", "0", "--date", "2026-11-30",
                  "--out", str(out)])
    written = json.loads(out.read_text())
    assert written["requests"] == {"openai-chat": "Req", "openai-responses": "Resp"}
    assert written["$defs"] == {**document["$defs"], "Resp": {"type": "object", "properties": {
        "input": {"type": "string"}}}}
    assert written["provenance"] == {"source": "https://github.com/openai/openai-openapi/blob/0/openapi.yaml",
                                     "commit": "0", "date": "2026-11-30", "license": "MIT (OPENAI-LICENSE)"}
    assert (out.parent / "OPENAI-LICENSE").read_text() == "MIT\n"


def test_refresh_turns_pydantics_schema_of_the_sdk_types_into_the_vendored_shape():
    # What pydantic's TypeAdapter(TypedDict).json_schema() gives, in small.
    schema = {"$defs": {"TextBlockParam": {"title": "TextBlockParam", "type": "object", "required": ["text", "type"],
                                           "properties": {"text": {"title": "Text", "type": "string"},
                                                          "type": {"const": "text", "type": "string"}}}},
              "title": "MessageCreateParamsNonStreaming", "type": "object", "required": ["max_tokens"],
              "properties": {"max_tokens": {"title": "Max Tokens", "type": "integer"},
                             "system": {"anyOf": [{"type": "string"},
                                                  {"items": {"$ref": "#/$defs/TextBlockParam"}, "type": "array"}]},
                             "stream": {"const": False, "type": "boolean", "description": "dropped"}}}
    provenance = {"source": "sdk", "version": "0", "license": "Apache-2.0"}
    assert refresh.anthropic_document(schema, provenance) == {
        "provenance": provenance,
        "requests": {"anthropic": "MessageCreateParams"},
        "$defs": {
            "MessageCreateParams": {"type": "object", "required": ["max_tokens"], "properties": {
                "max_tokens": {"type": "integer"},
                "system": {"anyOf": [{"type": "string"}, {"items": {"$ref": "#/$defs/TextBlockParam"},
                                                           "type": "array"}]},
                "stream": {"type": "boolean"}}},
            "TextBlockParam": {"type": "object", "required": ["text", "type"],
                               "properties": {"text": {"type": "string"}, "type": {"const": "text", "type": "string"}}},
        },
    }


def test_refresh_writes_geminis_leniencies_into_the_sdk_types():
    # pydantic's schema (by alias) of the request assembled from google-genai's types, in small.
    ref = {"$ref": "#/$defs/Tool"}
    schema = {"$defs": {
        "Tool": {"title": "Tool", "type": "object", "additionalProperties": False,
                 "properties": {"googleSearch": {"anyOf": [{"type": "object"}, {"type": "null"}]}}},
        "Type": {"title": "Type", "type": "string", "enum": ["STRING", "OBJECT"]},
        "Schema": {"title": "Schema", "type": "object", "additionalProperties": False,
                   "properties": {"type": {"anyOf": [{"$ref": "#/$defs/Type"}, {"type": "null"}]}}}},
        "title": "MessageCreateParams", "type": "object", "additionalProperties": False,
        "properties": {"tools": {"anyOf": [{"items": ref, "type": "array"}, {"type": "null"}]}}}
    provenance = {"source": "google-genai", "version": "0", "license": "Apache-2.0"}
    only = {"Vertex AI": {"Tool": ["retrieval"]}}
    assert refresh.gemini_document(schema, provenance, only) == {
        "provenance": provenance, "only": only,
        "requests": {"gemini": "GenerateContentRequest"},
        "$defs": {
            # One message where a list is declared; enum values in either case; $ref/$defs on a Schema.
            "GenerateContentRequest": {"type": "object", "additionalProperties": False, "properties": {
                "tools": {"anyOf": [{"anyOf": [{"items": ref, "type": "array"}, ref]}, {"type": "null"}]}}},
            "Schema": {"type": "object", "additionalProperties": False, "properties": {
                "type": {"anyOf": [{"$ref": "#/$defs/Type"}, {"type": "null"}]}, "$ref": {"type": "string"},
                "$defs": {"type": "object", "additionalProperties": {"$ref": "#/$defs/Schema"}}}},
            "Tool": {"type": "object", "additionalProperties": False,
                     "properties": {"googleSearch": {"anyOf": [{"type": "object"}, {"type": "null"}]}}},
            "Type": {"type": "string", "enum": ["STRING", "OBJECT", "string", "object"]},
        },
    }


def test_the_vendored_document_names_the_fields_each_google_api_takes_alone_as_the_sdk_says():
    # The SDK's words ("This field is not supported in Gemini API."), re-read from the installed
    # google-genai: the vendored `only` is what a refresh writes, so the two cannot drift apart.
    from google.genai import version

    vendored = json.loads((Path(refresh.__file__).parent / "gemini.json").read_text())
    if version.__version__ != vendored["provenance"]["version"]:
        pytest.skip(f"google-genai {version.__version__} is installed; the document was written from "
                    f"{vendored['provenance']['version']} (refresh it: python -m inspector.wire.specs.refresh gemini)")
    only = refresh._gemini_only(vendored["$defs"])
    assert only == vendored["only"]
    assert only["Vertex AI"]["Tool"] == ["enterpriseWebSearch", "exaAiSearch", "parallelAiSearch", "retrieval"]
    assert only["Vertex AI"]["SafetySetting"] == ["method"]
    assert only["the Gemini API"]["Tool"] == ["fileSearch", "mcpServers"]
    assert only["the Gemini API"]["GenerateContentRequest"] == ["store"]


def test_gemini_is_judged_on_its_own_hosts_in_the_clients_spelling():
    request = gemini_request()
    request["tools"] = request["tools"][0]  # one message for the list: accepted (recorded)
    del request["toolConfig"]  # the hand-written rules read tools as a list only (GM-13 would warn)
    request["generation_config"] = {"max_output_tokens": 64, "max_tokens": 64, "response_mime_type": "text/plain"}
    request["contents"][0]["parts"][0]["inline_data"] = {"mime_type": "image/png", "data": "iVBORw0K", "size": 3}
    expected = [("GM-19", "/contents/0/parts/0/inline_data/size", "error"),
                ("GM-19", "/generation_config/max_tokens", "error")]
    for host in ("https://generativelanguage.googleapis.com/", "https://europe-west4-aiplatform.googleapis.com/"):
        profile = profiles.for_upstream(host, Dialect.GEMINI)
        assert sorted(_findings(request, "gemini", profile)) == expected
    # A gateway speaking Gemini's dialect takes its own variants.
    assert _findings(request, "gemini", profiles.for_upstream("http://127.0.0.1:4000/", Dialect.GEMINI)) == []
    # Pointers into single messages read as lists of one have no index, as the client wrote them.
    single = {"contents": {"role": "user", "parts": {"text": "hi", "txt": "hi"}},
              "tools": {"functionDeclaration": [{"name": "f"}]}}
    assert sorted(_findings(single, "gemini")) == [("GM-19", "/contents/parts/txt", "error"),
                                                   ("GM-19", "/tools/functionDeclaration", "error")]


def test_a_hand_written_gemini_rule_at_the_same_place_wins():
    request = gemini_request()
    request["toolConfig"]["functionCallingConfig"]["mode"] = "SOMETIMES"  # GM-13 knows why; the enum agrees
    request["contents"][0]["role"] = "assistant"  # GM-07
    assert sorted(_findings(request, "gemini")) == [("GM-07", "/contents/0/role", "error"),
                                                    ("GM-13", "/toolConfig/functionCallingConfig/mode", "error")]


@pytest.mark.parametrize("vendored, requests", [
    (refresh.OPENAI_JSON, {"openai-chat": "CreateChatCompletionRequest", "openai-responses": "CreateResponse"}),
    (refresh.ANTHROPIC_JSON, {"anthropic": "MessageCreateParams"}),
    (refresh.GEMINI_JSON, {"gemini": "GenerateContentRequest"}),
])
def test_vendored_files_are_what_refresh_writes(vendored, requests):
    """The shipped JSON is canonical refresh output (sorted, compact), with provenance and licence."""
    text = vendored.read_text()
    document = json.loads(text)
    assert document["requests"] == requests
    assert sorted(document["provenance"]) in (["commit", "date", "license", "source"], ["license", "source", "version"],
                                              ["license", "source", "version", "versions"])  # Gemini's per-version tables
    assert json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n" == text
    assert _keywords(document["$defs"].values()) <= refresh.KEYWORDS  # no nullable, docs or x-* left
    licence = {refresh.OPENAI_JSON: refresh.OPENAI_LICENSE, refresh.ANTHROPIC_JSON: refresh.ANTHROPIC_LICENSE,
               refresh.GEMINI_JSON: refresh.GEMINI_LICENSE}[vendored]
    assert licence.read_text().strip()


def _keywords(schemas) -> set[str]:
    found: set[str] = set()
    for schema in schemas:
        if isinstance(schema, dict):
            found |= set(schema)
            for key in refresh.SCHEMA_MAPS:
                found |= _keywords(schema.get(key, {}).values())
            found |= _keywords(schema.get(key) for key in refresh.SCHEMA_ONE)
            found |= _keywords(sub for key in refresh.SCHEMA_LIST for sub in schema.get(key, ()))
    return found


def _findings(payload, dialect, profile=None):
    return [(v.rule, v.pointer, v.severity.value) for v in check.check_request(payload, dialect, profile)]


def test_replayed_output_items_the_api_accepts_are_not_errors():
    # Recorded: api.openai.com accepts assistant output_text parts, an image generation call by id and
    # type alone, and function tools without strict.
    request = responses_request()
    request["input"][0] = {"role": "assistant", "content": [{"type": "output_text", "text": "Hi"}]}
    request["input"].insert(1, {"type": "image_generation_call", "id": "ig_1"})
    del request["tools"][0]["strict"]
    assert _findings(request, "openai-responses") == []


def test_the_leniencies_stay_where_they_were_seen():
    request = responses_request()
    request["input"][0] = {"role": "user", "content": [{"type": "output_text", "text": "Hi"}]}
    request["input"].insert(1, {"type": "image_generation_call"})
    assert _findings(request, "openai-responses") == [("OR-13", "/input/0/content/0", "error"),
                                                      ("OR-13", "/input/1", "error")]


def test_null_in_an_enum_field_of_a_replayed_item_is_a_note():
    request = responses_request()
    request["input"][1]["status"] = None
    assert _findings(request, "openai-responses") == [("OR-13", "/input/1/status", "info")]


def test_other_servers_speaking_openai_chat_are_not_judged_by_openais_schema():
    request = {"model": "llama", "messages": [{"role": "user", "content": "hi"}], "top_k": 40, "n": 0}
    groq = profiles.for_upstream("https://api.groq.com/openai/v1", "openai-chat")
    assert _findings(request, "openai-chat", groq) == []
    assert _findings(request, "openai-chat", "openrouter") == []
    assert _findings(request, "openai-chat", "openai") == [("OC-29", "/top_k", "error"), ("OC-28", "/n", "error")]


def test_a_long_history_is_validated_in_its_newest_items_with_true_pointers():
    messages = [{"role": "user", "content": "hi"}] * 40 + [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": None}}]}]
    old = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": None}}]}] + messages
    assert _findings({"model": "m", "messages": messages}, "openai-chat") == [
        ("OC-28", "/messages/40/content/0/image_url/url", "error")]
    # The first item is older than the validated tail (spec.py: _TAIL), already checked when first sent.
    assert _findings({"model": "m", "messages": old}, "openai-chat") == [
        ("OC-28", "/messages/41/content/0/image_url/url", "error")]


def test_messages_say_what_the_schema_expects():
    request = chat_request()
    request.update(temperature=2.5, n=0, response_format={"type": "json"}, max_output_tokens=5)
    # The range the dialect's home states is a hand-written rule: at its place the schema says nothing more.
    assert [(v.rule, v.pointer, v.message) for v in check.check_request(request, "openai-chat")] == [
        ("OC-30", "/temperature", "temperature 2.5 is outside the accepted range (0 to 2)"),
        ("OC-29", "/max_output_tokens", "'max_output_tokens' is not a field of this request"),
        ("OC-28", "/n", "0 is below the minimum 1"),
        ("OC-28", "/response_format", 'type "json" is not accepted here (takes ["text", "json_schema", "json_object"])'),
    ]
    request = anthropic_request()
    request["metadata"] = {"user_id": 5}
    request["max_tokens"] = "100"
    assert [(v.rule, v.pointer, v.message) for v in check.check_request(request, "anthropic")] == [
        ("AN-14", "/max_tokens", '"100" is not of type integer'),
        ("AN-14", "/metadata/user_id", "5 is not of type string or null"),
    ]


def test_anthropic_compatible_gateways_are_not_judged_by_the_sdk_types():
    request = anthropic_request()
    request["max_tokens"] = "100"
    gateway = profiles.for_upstream("https://api.deepseek.com/anthropic", "anthropic")
    assert _findings(request, "anthropic", gateway) == []
    official = profiles.for_upstream("https://api.anthropic.com/v1/messages", "anthropic")
    assert _findings(request, "anthropic", official) == [("AN-14", "/max_tokens", "error")]


@pytest.mark.parametrize("shape", sorted(DEEP_SCHEMAS))
def test_a_request_nested_past_the_recursion_limit_keeps_what_was_found(shape):
    # jsonschema exhausts the stack on these parameters (it descends into them); the checker does not.
    body = '{"model":"m","input":"x","top_logprobs":21,"tools":[{"type":"function","name":"f","parameters":%s}]}'
    request = orjson.loads(body % DEEP_SCHEMAS[shape])
    assert _findings(request, "openai-responses") == [("OR-13", "/top_logprobs", "error")]


# One request of fields only some API versions take, as clients send it to each.
_V1_REJECTS = {"systemInstruction": {"parts": [{"text": "Be brief."}]},
               "contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
               "generationConfig": {"responseMimeType": "application/json", "maxOutputTokens": 64}}
_GEMINI = "https://generativelanguage.googleapis.com"
_VERTEX = "https://us-central1-aiplatform.googleapis.com/{}/projects/p/locations/us-central1/publishers/google/models/"


@pytest.mark.parametrize("path, version", [
    ("/v1/models/gemini-2.5-flash:generateContent", "v1"),
    ("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", "v1beta"),
    ("/v1alpha/models/gemini-3-pro-preview:generateContent", "v1alpha"),
    ("/v1beta/tunedModels/my-model:generateContent", "v1beta"),
    ("/v1beta1/projects/p/locations/global/publishers/google/models/gemini-2.5-pro:generateContent", "v1beta1"),
    ("/v1/publishers/google/models/gemini-2.5-flash:generateContent", "v1"),  # Vertex express mode
    # A relay's prefix (Cloudflare's AI gateway names its own /v1/ first): the provider's version counts.
    ("/v1/acct/gw/google-ai-studio/v1beta/models/gemini-2.5-flash:generateContent", "v1beta"),
    ("/v1internal:streamGenerateContent", ""),  # Code Assist: one version of its own, no table
    ("/models/gemini-2.5-flash:generateContent", ""),
])
def test_the_gemini_api_version_is_read_from_the_path(path, version):
    assert profiles.for_upstream(_GEMINI + path, Dialect.GEMINI).api_version == version


def test_the_gemini_api_v1_refuses_the_fields_only_v1beta_takes_and_v1beta_takes_them():
    # Recorded 400s on /v1/ ("Invalid JSON payload received. Unknown name \"systemInstruction\": Cannot find
    # field.", the same for responseMimeType at 'generation_config'); v1beta takes the same request.
    v1 = profiles.for_upstream(_GEMINI + "/v1/models/gemini-2.5-flash:generateContent", Dialect.GEMINI)
    found = check.check_request(_V1_REJECTS, Dialect.GEMINI, v1)
    assert [(v.rule, v.pointer, v.message, v.severity.value) for v in found] == [
        ("GM-19", "/systemInstruction",
         "'systemInstruction' is not a field of this request (v1alpha and v1beta take it, v1 does not)", "error"),
        ("GM-19", "/generationConfig/responseMimeType",
         "'responseMimeType' is not a field here (v1alpha and v1beta take it, v1 does not)", "error"),
    ]
    for version in ("v1beta", "v1alpha"):
        profile = profiles.for_upstream(f"{_GEMINI}/{version}/models/gemini-2.5-flash:generateContent", Dialect.GEMINI)
        assert _findings(_V1_REJECTS, "gemini", profile) == []
    # A path without a version (a test double, the CLI without a URL): judged by the SDK's types alone.
    assert _findings(_V1_REJECTS, "gemini") == []


def test_a_part_in_a_media_resolution_is_taken_on_v1beta_today():
    # Drift: Google's media-resolution guide first said "The media_resolution parameter for parts is
    # currently only available in the v1alpha API version", and now "… is available in the v1beta API
    # version"; the 400 "Unknown name \"mediaResolution\" at 'contents[0].parts[0]'" clients still match
    # on is the older answer. v1 never took it.
    request = {"contents": [{"role": "user", "parts": [
        {"inlineData": {"mimeType": "image/png", "data": "iVBORw0K"}, "mediaResolution": {"level": "MEDIA_RESOLUTION_LOW"}}]}]}
    beta = profiles.for_upstream(_GEMINI + "/v1beta/models/gemini-3-pro-preview:generateContent", Dialect.GEMINI)
    assert _findings(request, "gemini", beta) == []
    v1 = profiles.for_upstream(_GEMINI + "/v1/models/gemini-3-pro-preview:generateContent", Dialect.GEMINI)
    assert _findings(request, "gemini", v1) == [("GM-19", "/contents/0/parts/0/mediaResolution", "error")]


def test_vertex_v1_refuses_what_only_v1beta1_takes():
    # The aiplatform discovery documents: GoogleCloudAiplatformV1beta1Part has mediaProcessing, V1Part not.
    request = {"contents": [{"role": "user", "parts": [
        {"fileData": {"mimeType": "video/mp4", "fileUri": "gs://b/v.mp4"}, "mediaProcessing": "STATIC"}]}]}
    v1 = profiles.for_upstream(_VERTEX.format("v1") + "gemini-2.5-pro:generateContent", Dialect.GEMINI)
    assert [(v.rule, v.pointer, v.message) for v in check.check_request(request, Dialect.GEMINI, v1)] == [
        ("GM-19", "/contents/0/parts/0/mediaProcessing", "'mediaProcessing' is not a field here (v1beta1 takes it, "
                                                          "v1 does not)")]
    beta1 = profiles.for_upstream(_VERTEX.format("v1beta1") + "gemini-2.5-pro:generateContent", Dialect.GEMINI)
    assert (beta1.name, beta1.api_version) == ("vertex", "v1beta1")
    assert _findings(request, "gemini", beta1) == []


def test_the_version_tables_are_each_versions_published_fields_missing_from_the_sdks():
    # refresh._absent over a discovery document's schemas: what the SDK's definition has and the
    # version's message of the same name lacks; definitions the version does not publish are not judged.
    document = {"name": "aiplatform", "version": "v1", "revision": "20261106", "schemas": {
        "GoogleCloudAiplatformV1Part": {"properties": {"text": {}, "inlineData": {}}},
        "GoogleCloudAiplatformV1GenerateContentRequest": {"properties": {"contents": {}}},
        "GoogleCloudAiplatformV1beta1Part": {"properties": {"text": {}, "mediaProcessing": {}}}}}
    published = refresh._discovery_fields(document)
    assert published == {"Part": {"text", "inlineData"}, "GenerateContentRequest": {"contents"},
                         "beta1Part": {"text", "mediaProcessing"}}
    defs = {"Part": {"properties": {"text": {}, "mediaProcessing": {}, "thought": {}}},
            "GenerateContentRequest": {"properties": {"contents": {}, "model": {}, "store": {}}},
            "Schema": {"properties": {"anyOf": {}}}, "Blob": {"properties": {"data": {}}}}
    assert refresh._absent(defs, {**published, "Schema": set()}, ("Schema",)) == {
        "Part": ["mediaProcessing", "thought"], "GenerateContentRequest": ["store"]}


def test_the_vendored_version_tables_name_their_sources():
    vendored = json.loads(refresh.GEMINI_JSON.read_text())
    assert sorted((api, version) for api, per in vendored["versions"].items() for version in per) == [
        ("Vertex AI", "v1"), ("Vertex AI", "v1beta1"),
        ("the Gemini API", "v1"), ("the Gemini API", "v1alpha"), ("the Gemini API", "v1beta")]
    assert vendored["versions"]["the Gemini API"]["v1alpha"] == vendored["versions"]["the Gemini API"]["v1beta"] == {}
    assert sorted(vendored["provenance"]["versions"]) == ["Vertex AI v1", "Vertex AI v1beta1", "the Gemini API v1"]
    assert "systemInstruction" in vendored["versions"]["the Gemini API"]["v1"]["GenerateContentRequest"]
