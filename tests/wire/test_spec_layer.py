"""The spec layer (rules/spec.py): the vendored schema is what refresh.py makes, the provider's
known leniencies are not errors, and compatible servers are not judged by OpenAI's schema."""

from __future__ import annotations

from inspector.wire import check, profiles
from inspector.wire.specs import refresh

from .wire_payloads import responses_request

SNIPPET = {
    "openapi": "3.1.0",
    "paths": {"/chat/completions": {"post": {"requestBody": {"content": {"application/json": {
        "schema": {"$ref": "#/components/schemas/Req"}}}}}}},
    "components": {"schemas": {
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
    refresh.write(document, tmp_path / "out.json")
    assert (tmp_path / "out.json").read_text().startswith('{"$defs":{"Part"')


def test_vendored_file_is_what_refresh_writes():
    """The shipped JSON is canonical refresh output (sorted, compact), with its provenance."""
    import json
    vendored = refresh.OPENAI_JSON.read_text()
    document = json.loads(vendored)
    assert document["requests"] == {"openai-chat": "CreateChatCompletionRequest",
                                    "openai-responses": "CreateResponse"}
    assert document["provenance"]["commit"] == "f85dbe223d40"
    assert json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n" == vendored
    assert not any("nullable" in json.dumps(schema) for schema in document["$defs"].values())


def _findings(payload, dialect, profile=None):
    return [(v.rule, v.pointer, v.severity.value) for v in check.check_request(payload, dialect, profile)]


def test_replayed_output_items_the_api_accepts_are_not_errors():
    # Recorded: api.openai.com accepts assistant output_text parts and function tools without strict.
    request = responses_request()
    request["input"][0] = {"role": "assistant", "content": [{"type": "output_text", "text": "Hi"}]}
    del request["tools"][0]["strict"]
    assert _findings(request, "openai-responses") == []


def test_null_in_an_enum_field_of_a_replayed_item_is_a_note():
    request = responses_request()
    request["input"][1]["status"] = None
    assert _findings(request, "openai-responses") == [("OR-13", "/input/1/status", "info")]


def test_other_servers_speaking_openai_chat_are_not_judged_by_openais_schema():
    request = {"model": "llama", "messages": [{"role": "user", "content": "hi"}], "top_k": 40, "temperature": 3}
    groq = profiles.for_upstream("https://api.groq.com/openai/v1", "openai-chat")
    assert _findings(request, "openai-chat", groq) == []
    assert _findings(request, "openai-chat", "openrouter") == []
    assert _findings(request, "openai-chat", "openai") == [("OC-29", "/top_k", "error"),
                                                           ("OC-28", "/temperature", "error")]


def test_a_long_history_is_validated_in_its_newest_items_with_true_pointers():
    messages = [{"role": "user", "content": "hi"}] * 40 + [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": None}}]}]
    old = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": None}}]}] + messages
    assert _findings({"model": "m", "messages": messages}, "openai-chat") == [
        ("OC-28", "/messages/40/content/0/image_url/url", "error")]
    # The first item is older than the validated tail (spec.py: _TAIL), already checked when first sent.
    assert _findings({"model": "m", "messages": old}, "openai-chat") == [
        ("OC-28", "/messages/41/content/0/image_url/url", "error")]
