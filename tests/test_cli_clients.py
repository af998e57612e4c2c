"""Which client settings fit an upstream (the providers' own hosts, anything else, translate mode), and
the official SDKs reading them."""

import anthropic
import openai
import pytest
from google import genai

from e2e.conftest import passthrough  # noqa: F401  (the fixture)
from inspector.clients import likely_dialects, suggestions
from inspector.mock import json_response
from inspector.wire.dialects.anthropic.mock import anthropic_message
from inspector.wire.dialects.gemini.mock import gemini_response
from inspector.wire.dialects.openai_chat.mock import chat_completion
from inspector.wire.dialect import DIALECT_NAMES


def test_a_providers_own_host_gets_its_clients_settings():
    assert likely_dialects("https://api.openai.com") == ("openai-chat", "openai-responses")
    assert likely_dialects("https://API.anthropic.com:443/") == ("anthropic",)
    assert likely_dialects("https://generativelanguage.googleapis.com") == ("gemini",)
    assert [setting.name for setting, _ in suggestions("http://h:1", likely_dialects("https://api.anthropic.com"))] == [
        "ANTHROPIC_BASE_URL"]


def test_any_other_upstream_gets_every_setting_and_translate_mode_its_source():
    assert likely_dialects("http://127.0.0.1:11434") == ("openai-chat", "openai-responses", "anthropic", "gemini", "mcp",
                                                         "bedrock")
    assert likely_dialects("https://api.openai.com", "anthropic:openai-chat") == ("anthropic",)
    assert [(setting.name, url) for setting, url in suggestions("http://h:1", ("gemini",))] == [
        ("GOOGLE_GEMINI_BASE_URL", "http://h:1"), ("GEMINI_API_BASE", "http://h:1/v1beta")]
    assert [s.name for s, _ in suggestions("http://h:1", ("gemini",), header_only=True)] == ["GOOGLE_GEMINI_BASE_URL"]


# Each official SDK, configured only through the variable `record` and the README name, reaches the
# forwarder and is recorded (the README's shell lines). MCP over streamable HTTP: tests/e2e/test_mcp_e2e.py.

@pytest.fixture
def clean_env(monkeypatch):
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "ANTHROPIC_BASE_URL", "GOOGLE_GEMINI_BASE_URL",
                 "GEMINI_API_BASE", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def _setting(name: str, base_url: str) -> str:
    (url,) = [url for setting, url in suggestions(base_url, tuple(DIALECT_NAMES)) if setting.name == name]
    return url


def test_the_openai_sdk_reads_openai_base_url(passthrough, clean_env):
    mock, store, forwarder, completed = passthrough
    clean_env.setenv("OPENAI_BASE_URL", _setting("OPENAI_BASE_URL", forwarder.base_url))
    mock.push(json_response(chat_completion("hi")))
    answer = openai.OpenAI(api_key="sk-env-test", max_retries=0).chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
    assert answer.choices[0].message.content == "hi"
    assert [(row.path, row.status) for row in completed.wait(1)] == [("/v1/chat/completions", 200)]


def test_the_anthropic_sdk_reads_anthropic_base_url(passthrough, clean_env):
    mock, store, forwarder, completed = passthrough
    clean_env.setenv("ANTHROPIC_BASE_URL", _setting("ANTHROPIC_BASE_URL", forwarder.base_url))
    mock.push(json_response(anthropic_message("hi")))
    answer = anthropic.Anthropic(api_key="sk-ant-env-test", max_retries=0).messages.create(
        model="claude-sonnet-4-6", max_tokens=16, messages=[{"role": "user", "content": "hi"}])
    assert answer.content[0].text == "hi"
    assert [(row.path, row.status) for row in completed.wait(1)] == [("/v1/messages", 200)]


def test_google_genai_reads_google_gemini_base_url(passthrough, clean_env):
    mock, store, forwarder, completed = passthrough
    clean_env.setenv("GOOGLE_GEMINI_BASE_URL", _setting("GOOGLE_GEMINI_BASE_URL", forwarder.base_url))
    mock.push(json_response(gemini_response("hi")))
    # kept: a dropped Client closes its connection pool. The API version is pinned because google-genai 2.x
    # and 3.x default to different ones; the base URL comes from the environment alone.
    client = genai.Client(api_key="AIza-env-test", http_options={"api_version": "v1beta"})
    answer = client.models.generate_content(model="gemini-2.5-flash", contents="hi")
    assert answer.text == "hi"
    assert [(row.path, row.status) for row in completed.wait(1)] == [
        ("/v1beta/models/gemini-2.5-flash:generateContent", 200)]
