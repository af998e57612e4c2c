"""Gemini's generationConfig value ranges (the GenerationConfig reference: temperature 0.0–2.0,
topP 0.0–1.0), the same on the Gemini API and Vertex."""

from __future__ import annotations

from ...profiles import Profile
from ...ranges import Range

RANGES = {"max_tokens": Range(1), "temperature": Range(0, 2), "top_p": Range(0, 1)}
# Where generationConfig holds each, in both spellings Gemini reads (GM-16).
FIELDS: dict[str, tuple[str, ...]] = {"max_tokens": ("maxOutputTokens", "max_output_tokens"), "temperature": ("temperature",),
          "top_p": ("topP", "top_p")}


def ranges(profile: Profile) -> dict[str, Range]:
    return RANGES
