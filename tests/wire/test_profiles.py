"""Provider profiles: defaults per dialect, lookup by name and by upstream host."""

from __future__ import annotations

import pytest

from inspector.wire import profiles
from inspector.wire.dialect import Dialect


def test_defaults_per_dialect():
    assert {d.value: profiles.get(None, d).name for d in Dialect} == {
        "openai-chat": "openai", "openai-responses": "openai", "anthropic": "anthropic", "gemini": "gemini",
        "mcp": "mcp", "bedrock": "bedrock"}


def test_unknown_profile_names_the_known_ones():
    with pytest.raises(ValueError, match="unknown profile 'watsonx'; known: openai, azure-openai"):
        profiles.get("watsonx", Dialect.OPENAI_CHAT)


@pytest.mark.parametrize(("url", "dialect", "expected"), [
    ("https://openrouter.ai/api", Dialect.OPENAI_CHAT, "openrouter"),
    ("https://my-res.openai.azure.com", Dialect.OPENAI_CHAT, "azure-openai"),
    ("https://api.deepseek.com", Dialect.OPENAI_CHAT, "openai-compatible"),
    ("https://api.mistral.ai/v1", Dialect.OPENAI_CHAT, "mistral"),
    ("https://api.mistral.ai", Dialect.ANTHROPIC, "anthropic"),
    ("https://dashscope.aliyuncs.com/compatible-mode", Dialect.OPENAI_RESPONSES, "openai-compatible"),
    ("https://us-central1-aiplatform.googleapis.com", Dialect.GEMINI, "vertex"),
    ("https://generativelanguage.googleapis.com", Dialect.GEMINI, "gemini"),
    ("https://api.openai.com", Dialect.OPENAI_CHAT, "openai"),
    ("https://openrouter.ai/api", Dialect.ANTHROPIC, "anthropic"),
    ("http://127.0.0.1:8080", Dialect.MCP, "mcp"),
    ("https://notopenrouter.ai", Dialect.OPENAI_CHAT, "openai"),
    # A recorded URL whose brackets hold no address: no host, so the dialect's default (not a ValueError).
    ("http://[2J\x1b[H]/v1/messages", Dialect.ANTHROPIC, "anthropic"),
])
def test_profile_for_upstream(url, dialect, expected):
    assert profiles.for_upstream(url, dialect).name == expected


def test_name_rules_per_profile():
    assert [profiles.PROFILES[p].name_ok("a.b") for p in ("openai", "azure-openai", "gemini", "mcp", "anthropic")] == [
        False, True, True, True, False]
    assert (profiles.PROFILES["gemini"].name_ok("1a"), profiles.PROFILES["gemini"].name_ok("a:b")) == (False, True)
