"""Converse's value ranges (botocore's InferenceConfiguration): temperature and topP 0 to 1, at
least one token."""

from __future__ import annotations

from ...profiles import Profile
from ...ranges import Range

RANGES = {"max_tokens": Range(1), "temperature": Range(0, 1), "top_p": Range(0, 1)}
# Under inferenceConfig.
FIELDS: dict[str, tuple[str, ...]] = {"max_tokens": ("maxTokens",), "temperature": ("temperature",), "top_p": ("topP",)}


def ranges(profile: Profile) -> dict[str, Range]:
    return RANGES
