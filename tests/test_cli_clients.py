"""Which client settings fit an upstream: the providers' own hosts, anything else, translate mode."""

from inspector.clients import likely_dialects, suggestions


def test_a_providers_own_host_gets_its_clients_settings():
    assert likely_dialects("https://api.openai.com") == ("openai-chat", "openai-responses")
    assert likely_dialects("https://API.anthropic.com:443/") == ("anthropic",)
    assert likely_dialects("https://generativelanguage.googleapis.com") == ("gemini",)
    assert [setting.name for setting, _ in suggestions("http://h:1", likely_dialects("https://api.anthropic.com"))] == [
        "ANTHROPIC_BASE_URL"]


def test_any_other_upstream_gets_every_setting_and_translate_mode_its_source():
    assert likely_dialects("http://127.0.0.1:11434") == ("openai-chat", "openai-responses", "anthropic", "gemini", "mcp")
    assert likely_dialects("https://api.openai.com", "anthropic:openai-chat") == ("anthropic",)
    assert [(setting.name, url) for setting, url in suggestions("http://h:1", ("gemini",))] == [
        ("GOOGLE_GEMINI_BASE_URL", "http://h:1"), ("GEMINI_API_BASE", "http://h:1/v1beta")]
    assert [s.name for s, _ in suggestions("http://h:1", ("gemini",), header_only=True)] == ["GOOGLE_GEMINI_BASE_URL"]
