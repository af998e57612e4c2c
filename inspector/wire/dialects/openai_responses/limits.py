"""The Responses API's value ranges (openai-openapi's CreateResponse): notably max_output_tokens
of at least 16, where Chat takes 1."""

from __future__ import annotations

from ...profiles import Profile
from ...ranges import Range

RANGES = {"max_tokens": Range(16), "temperature": Range(0, 2), "top_p": Range(0, 1)}
FIELDS: dict[str, tuple[str, ...]] = {"max_tokens": ("max_output_tokens",), "temperature": ("temperature",), "top_p": ("top_p",)}


def ranges(profile: Profile) -> dict[str, Range]:
    return RANGES
