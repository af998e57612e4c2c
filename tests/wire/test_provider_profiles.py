"""Providers that speak an existing dialect on paths of their own (Claude and Gemini on Vertex AI, Azure
OpenAI, Gemini Code Assist): the dialect, the profile and the model from the path alone (a relay or a
base-URL route keeps the provider's path, not its host), and Code Assist's envelope: every finding
of a wrapped document is the unwrapped document's finding at the same place inside the envelope."""

from __future__ import annotations

import pytest

from inspector.wire import check, profiles
from inspector.wire.dialect import Dialect, from_path, is_stream_path
from inspector.wire.dialects import Outgoing, home
from inspector.wire.summary import request_facts

from .wire_payloads import anthropic_request, gemini_chunks, gemini_request, gemini_response, sse

VERTEX = "/v1/projects/p-1/locations/us-east5/publishers"
CASES = [
    # (path, dialect, profile, model, stream)
    (f"{VERTEX}/anthropic/models/claude-sonnet-4-6@20250929:rawPredict", Dialect.ANTHROPIC, "vertex-anthropic",
     "claude-sonnet-4-6@20250929", False),
    (f"{VERTEX}/anthropic/models/claude-opus-4-6:streamRawPredict", Dialect.ANTHROPIC, "vertex-anthropic",
     "claude-opus-4-6", True),
    (f"{VERTEX}/google/models/gemini-2.5-pro:generateContent", Dialect.GEMINI, "vertex", "gemini-2.5-pro", False),
    (f"{VERTEX}/google/models/gemini-2.5-pro:streamGenerateContent", Dialect.GEMINI, "vertex", "gemini-2.5-pro", True),
    ("/v1internal:generateContent", Dialect.GEMINI, "code-assist", "", False),
    ("/v1internal:streamGenerateContent", Dialect.GEMINI, "code-assist", "", True),
    ("/openai/deployments/gpt4o-prod/chat/completions", Dialect.OPENAI_CHAT, "azure-openai", "gpt4o-prod", False),
    ("/openai/v1/chat/completions", Dialect.OPENAI_CHAT, "azure-openai", "", False),
    ("/openai/v1/responses", Dialect.OPENAI_RESPONSES, "azure-openai", "", False),
    # Near misses: the providers' own paths keep their own profiles.
    ("/v1/messages", Dialect.ANTHROPIC, "anthropic", "", False),
    ("/v1beta/models/gemini-2.5-pro:generateContent", Dialect.GEMINI, "gemini", "gemini-2.5-pro", False),
    ("/v1/chat/completions", Dialect.OPENAI_CHAT, "openai", "", False),
    ("/api/openai/v1/chat/completions", Dialect.OPENAI_CHAT, "openai", "", False),
]


@pytest.mark.parametrize(("path", "dialect", "profile", "model", "stream"), CASES, ids=[c[0] for c in CASES])
def test_the_path_names_dialect_profile_model_and_stream(path, dialect, profile, model, stream):
    assert from_path(path) is dialect
    assert profiles.for_upstream(f"http://127.0.0.1:9{path}", dialect).name == profile
    assert request_facts({}, dialect, path) == (model, 0)
    assert is_stream_path(path) is stream


@pytest.mark.parametrize(("host", "dialect", "profile"), [
    ("us-east5-aiplatform.googleapis.com", Dialect.ANTHROPIC, "vertex-anthropic"),
    ("aiplatform.googleapis.com", Dialect.ANTHROPIC, "vertex-anthropic"),
    ("cloudcode-pa.googleapis.com", Dialect.GEMINI, "code-assist"),
    ("my-res.cognitiveservices.azure.com", Dialect.OPENAI_RESPONSES, "azure-openai"),
    ("api.anthropic.com", Dialect.ANTHROPIC, "anthropic"),
])
def test_the_host_names_the_profile(host, dialect, profile):
    assert profiles.for_upstream(f"https://{host}/x", dialect).name == profile


def test_the_providers_auth_is_their_own():
    request = Outgoing("POST", "https://example.test/", [("accept", "*/*")], b"{}")
    sent = {p.name: p.auth(request, "k").headers[-1] for d in (Dialect.ANTHROPIC, Dialect.OPENAI_CHAT,
                                                                           Dialect.GEMINI)
            for p in home(d).providers if p.auth is not None}
    assert sent == {"anthropic": ("x-api-key", "k"), "vertex": ("Authorization", "Bearer k"),
                    "openai": ("Authorization", "Bearer k"), "azure-openai": ("api-key", "k"),
                    "gemini": ("x-goog-api-key", "k"), "code-assist": ("Authorization", "Bearer k")}


def test_vertex_takes_the_model_from_the_path_and_anthropic_version_in_the_body():
    """The published definition requires `model`; Vertex's variant has it in the path, and
    anthropic_version in the body (AN-14 says nothing of either). Anthropic's own endpoint is told."""
    body = {key: value for key, value in anthropic_request().items() if key != "model"}
    body["anthropic_version"] = "vertex-2023-10-16"
    vertex = profiles.with_model(profiles.get("vertex-anthropic", Dialect.ANTHROPIC), "claude-sonnet-4-6")
    assert check.check_request(body, Dialect.ANTHROPIC, vertex) == []
    assert [(v.rule, v.pointer) for v in check.check_request(body, Dialect.ANTHROPIC, "anthropic")] == [
        ("AN-14", "")]


def wrapped_request(inner):
    return {"model": "gemini-2.5-pro", "project": "p", "user_prompt_id": "u", "request": inner}


def defective_request():
    document = gemini_request()
    document["contents"].append({"role": "user", "parts": [{"functionResponse": {"name": "nobody",
                                                                                 "response": {}}}]})
    document["tools"][0]["functionDeclarations"][0]["name"] = "bad name"
    return document


def found(violations):
    return [(v.rule, v.severity.value, v.pointer) for v in violations]


def test_a_wrapped_request_is_judged_inside_with_pointers_into_the_envelope():
    inner = found(check.check_request(defective_request(), Dialect.GEMINI, "vertex"))
    assert inner and all(pointer.startswith("/") for _, _, pointer in inner)
    assert found(check.check_request(wrapped_request(defective_request()), Dialect.GEMINI, "code-assist")) == [
        (rule, severity, "/request" + pointer) for rule, severity, pointer in inner]
    # Without the profile the envelope is a document of no known field: nothing judged, and it says so.
    assert check.check_document(wrapped_request(defective_request()), Dialect.GEMINI).error is not None
    assert check.check_document(wrapped_request(defective_request()), Dialect.GEMINI,
                                profile="code-assist").kind == "request"


def test_a_wrapped_response_and_stream_are_judged_and_reassembled_inside():
    response = gemini_response()
    response["candidates"][0]["content"]["parts"][0]["functionCall"]["args"] = "not an object"
    inner = found(check.check_response(response, Dialect.GEMINI, "vertex"))
    assert inner
    assert found(check.check_response({"response": response, "traceId": "t"}, Dialect.GEMINI, "code-assist")) == [
        (rule, severity, "/response" + pointer) for rule, severity, pointer in inner]

    events = gemini_chunks()
    events[-1]["candidates"][0]["content"]["parts"][0]["functionCall"]["args"] = "not an object"
    violations, final = check.check_and_reassemble(sse(events), Dialect.GEMINI, "vertex")
    inner = found(violations)
    assert inner and all(pointer.startswith(f"/{len(events) - 1}/") for _, _, pointer in inner)
    wrapped = sse([{"response": event, "traceId": "t"} for event in events])
    violations, wrapped_final = check.check_and_reassemble(wrapped, Dialect.GEMINI, "code-assist")
    at = f"/{len(events) - 1}"
    assert found(violations) == [(rule, severity, at + "/response" + pointer[len(at):])
                                 for rule, severity, pointer in inner]
    assert wrapped_final == final


@pytest.mark.parametrize(("url", "profile"), [
    # Groq serves OpenAI's Chat on /openai/v1/ too: its flows were judged by Azure's profile, against
    # OpenAI's published schema (OC-28 on Groq's own service_tier, OC-29 on reasoning_format).
    ("https://api.groq.com/openai/v1/chat/completions", "openai"),
    ("https://gateway.example.com/openai/v1/chat/completions", "openai"),
    # Near misses: Azure's own host, a relay on loopback, a private gateway, a bare name; and the
    # deployments path, Azure's alone, behind any host (API Management's azure-api.net).
    ("https://my-res.openai.azure.com/openai/v1/chat/completions", "azure-openai"),
    ("http://127.0.0.1:8787/openai/v1/chat/completions", "azure-openai"),
    ("http://10.0.0.7/openai/v1/chat/completions", "azure-openai"),
    ("http://llm-gateway:4000/openai/v1/chat/completions", "azure-openai"),
    ("https://contoso-apim.azure-api.net/openai/deployments/gpt4o/chat/completions", "azure-openai"),
])
def test_a_path_another_provider_shares_names_azure_only_behind_azure_or_a_relay(url, profile):
    assert profiles.for_upstream(url, Dialect.OPENAI_CHAT).name == profile
