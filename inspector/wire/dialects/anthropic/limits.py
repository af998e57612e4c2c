"""Anthropic's value ranges (the Messages API reference): temperature only up to 1, and a thinking
budget of at least 1024 tokens that max_tokens must exceed."""

from __future__ import annotations

from ...profiles import Profile
from ...ranges import Range

RANGES = {"max_tokens": Range(1), "temperature": Range(0, 1), "top_p": Range(0, 1), "top_k": Range(0)}
FIELDS: dict[str, tuple[str, ...]] = {"max_tokens": ("max_tokens",), "temperature": ("temperature",), "top_p": ("top_p",),
          "top_k": ("top_k",)}
THINKING_BUDGET = Range(1024)


def ranges(profile: Profile) -> dict[str, Range]:
    return RANGES
