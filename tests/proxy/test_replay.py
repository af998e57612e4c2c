"""What a replay sends: the recorded request, its secrets from memory or the environment."""

from __future__ import annotations

import pytest

from inspector.flow import Flow, ReplayKind
from inspector.proxy import replay_marker
from inspector.redact import REDACTED
from inspector.replay import credentials_from_env, replay_request
from inspector.wire.dialect import Dialect


def test_credentials_from_env_per_dialect():
    env = {"OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-a", "GOOGLE_API_KEY": "g-2"}
    assert credentials_from_env(Dialect.OPENAI_CHAT, env) == [("Authorization", "Bearer sk-o")]
    assert credentials_from_env(Dialect.OPENAI_RESPONSES, env) == [("Authorization", "Bearer sk-o")]
    assert credentials_from_env(Dialect.ANTHROPIC, env) == [("x-api-key", "sk-a")]
    assert credentials_from_env(Dialect.GEMINI, env) == [("x-goog-api-key", "g-2")]
    assert credentials_from_env(Dialect.GEMINI, {**env, "GEMINI_API_KEY": "g-1"}) == [("x-goog-api-key", "g-1")]
    assert credentials_from_env(Dialect.MCP, env) == []
    assert credentials_from_env(None, env) == []
    assert credentials_from_env(Dialect.ANTHROPIC, {}) == []


def test_replay_request_drops_redacted_secrets_and_framing():
    flow = Flow(id=4, session_id=1, started_at=0.0, method="POST",
                path="/v1beta/models/gemini-2.5-flash:streamGenerateContent", query=f"key={REDACTED}&alt=sse",
                request_headers=[("Host", "127.0.0.1:8787"), ("Content-Length", "12"), ("x-goog-api-key", REDACTED),
                                 ("Content-Type", "application/json"), ("x-toolwire-replay-of", "2"),
                                 ("x-toolwire-replay-auth", REDACTED), ("x-toolwire-token", REDACTED)])
    target, headers = replay_request(flow, [("x-goog-api-key", "AIza-live")])
    assert target == "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert headers == [("Content-Type", "application/json"), ("x-goog-api-key", "AIza-live"), *replay_marker(4)]


def test_replay_request_keeps_the_query_untouched_without_secrets():
    flow = Flow(id=1, session_id=1, started_at=0.0, method="POST", path="/openai/deployments/d/chat/completions",
                query="api-version=2024-10-21&x=a%2Fb", request_headers=[("api-key", REDACTED)])
    target, headers = replay_request(flow, None)
    assert target == "/openai/deployments/d/chat/completions?api-version=2024-10-21&x=a%2Fb"
    assert headers == replay_marker(1)


def test_replay_request_drops_secrets_after_a_semicolon_and_session_ids():
    flow = Flow(id=2, session_id=1, started_at=0.0, method="POST", path="/mcp", query=f"alt=sse;token={REDACTED}",
                request_headers=[("Mcp-Session-Id", REDACTED), ("Accept", "application/json")])
    target, headers = replay_request(flow, [("Mcp-Session-Id", "session-live-1")])
    assert target == "/mcp?alt=sse"
    assert headers == [("Accept", "application/json"), ("Mcp-Session-Id", "session-live-1"), *replay_marker(2)]


@pytest.mark.parametrize(("kind", "encoding"), [
    (ReplayKind.AS_RECORDED, [("Content-Encoding", "gzip")]),  # the recorded bytes, still gzip
    (ReplayKind.FIXED, []),  # a new body, written decoded
    (ReplayKind.EDITED, []),
])
def test_a_new_body_goes_without_the_recorded_content_encoding(kind, encoding):
    flow = Flow(id=3, session_id=1, started_at=0.0, method="POST", path="/v1/messages",
                request_headers=[("Content-Type", "application/json"), ("Content-Encoding", "gzip")])
    _, headers = replay_request(flow, None, kind=kind)
    assert headers == [("Content-Type", "application/json"), *encoding, *replay_marker(3, kind=kind)]


def test_an_environment_key_goes_only_to_its_providers_host_or_one_named():
    from inspector.replay import ReplayRefused, env_credentials

    env = {"OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-a", "GEMINI_API_KEY": "g-1"}
    plain = {path: Flow(id=1, session_id=1, started_at=0.0, method="POST", path=path)
             for path in ("/v1/chat/completions", "/v1/responses", "/v1/messages",
                          "/v1beta/models/m:generateContent", "/mcp")}
    hosts = ("api.openai.com", "API.OpenAI.com", "api.anthropic.com", "generativelanguage.googleapis.com",
             "api.openai.com.evil.example", "127.0.0.1", "api.xn--openi-7ve.com")
    assert {(path, host): env_credentials(flow, host, env=env) for path, flow in plain.items() for host in hosts
            if env_credentials(flow, host, env=env)} == {
        ("/v1/chat/completions", "api.openai.com"): [("Authorization", "Bearer sk-o")],
        ("/v1/chat/completions", "API.OpenAI.com"): [("Authorization", "Bearer sk-o")],
        ("/v1/responses", "api.openai.com"): [("Authorization", "Bearer sk-o")],
        ("/v1/responses", "API.OpenAI.com"): [("Authorization", "Bearer sk-o")],
        ("/v1/messages", "api.anthropic.com"): [("x-api-key", "sk-a")],
        ("/v1beta/models/m:generateContent", "generativelanguage.googleapis.com"): [("x-goog-api-key", "g-1")],
    }
    assert env_credentials(plain["/v1/messages"], "127.0.0.1", key_hosts=["127.0.0.1"], env=env) == [
        ("x-api-key", "sk-a")]
    keyed = Flow(id=3, session_id=1, started_at=0.0, method="POST", path="/mcp",
                 request_headers=[("Authorization", REDACTED)])
    with pytest.raises(ReplayRefused) as refused:
        env_credentials(keyed, "127.0.0.1", env=env)
    assert str(refused.value) == ("flow #3 was sent with a key (authorization) and the store keeps none, and no "
                                  "environment variable holds a key for '/mcp'")


def test_replay_request_never_sends_a_redacted_header_of_any_credential_name_as_a_value():
    """Headers redacted by name (X-Api-Token, X-Auth-Token, Ocp-Apim-Subscription-Key) are left out, not
    resent as the word `[redacted]`; a header of the same kind that was not redacted, and near-miss
    names, go as recorded."""
    flow = Flow(id=3, session_id=1, started_at=0.0, method="POST", path="/v1/chat/completions",
                request_headers=[("X-Api-Token", REDACTED), ("X-Auth-Token", REDACTED),
                                 ("Ocp-Apim-Subscription-Key", REDACTED), ("Idempotency-Key", "k-1"),
                                 ("x-ratelimit-remaining-tokens", REDACTED), ("Accept", "application/json")])
    _, headers = replay_request(flow, None)
    assert headers == [("Idempotency-Key", "k-1"), ("x-ratelimit-remaining-tokens", REDACTED),
                       ("Accept", "application/json"), *replay_marker(3)]
