"""Token usage as each dialect's response reports it, for the list's usage column."""

from __future__ import annotations

import pytest

from inspector.wire.dialect import Dialect
from inspector.wire.summary import response_usage


@pytest.mark.parametrize(("dialect", "payload", "usage"), [
    (Dialect.OPENAI_CHAT, {"usage": {"prompt_tokens": 120, "completion_tokens": 31, "total_tokens": 151}}, (120, 31)),
    (Dialect.OPENAI_RESPONSES, {"usage": {"input_tokens": 90, "output_tokens": 12, "total_tokens": 102}}, (90, 12)),
    # Anthropic counts cached input apart from input_tokens: what the model read is their sum.
    (Dialect.ANTHROPIC, {"usage": {"input_tokens": 5, "cache_creation_input_tokens": 200,
                                   "cache_read_input_tokens": 1000, "output_tokens": 40}}, (1205, 40)),
    (Dialect.ANTHROPIC, {"usage": {"input_tokens": 5, "output_tokens": 40}}, (5, 40)),
    # Gemini: thinking tokens are output the caller pays for; both field spellings (GM-16).
    (Dialect.GEMINI, {"usageMetadata": {"promptTokenCount": 70, "candidatesTokenCount": 9,
                                        "thoughtsTokenCount": 100}}, (70, 109)),
    (Dialect.GEMINI, {"usage_metadata": {"prompt_token_count": 70, "candidates_token_count": 9}}, (70, 9)),
    # Near misses: no usage, a partial one, values that are not counts, another dialect's field names.
    (Dialect.OPENAI_CHAT, {"choices": []}, (None, None)),
    (Dialect.OPENAI_CHAT, {"usage": {"prompt_tokens": 120}}, (120, None)),
    (Dialect.OPENAI_CHAT, {"usage": {"prompt_tokens": "120", "completion_tokens": True}}, (None, None)),
    (Dialect.OPENAI_CHAT, {"usage": {"input_tokens": 90, "output_tokens": 12}}, (None, None)),
    (Dialect.GEMINI, {"usageMetadata": {"candidatesTokenCount": 9}}, (None, 9)),
    (Dialect.MCP, {"result": {"usage": {"input_tokens": 1}}}, (None, None)),
    (None, {"usage": {"prompt_tokens": 1, "completion_tokens": 2}}, (None, None)),
    (Dialect.OPENAI_CHAT, ["not", "an", "object"], (None, None)),
])
def test_usage_per_dialect(dialect, payload, usage):
    assert response_usage(payload, dialect) == usage
