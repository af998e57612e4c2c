"""Chat's value ranges (api.openai.com's published ones; the compatible servers take the same, but
Mistral, whose API documents no upper temperature bound)."""

from __future__ import annotations

from ...profiles import Profile
from ...ranges import Range

# Neutral field name -> range: what the bridges fit a translated request into.
RANGES = {"max_tokens": Range(1), "temperature": Range(0, 2), "top_p": Range(0, 1)}
# Neutral field name -> where a Chat request holds it.
FIELDS: dict[str, tuple[str, ...]] = {"max_tokens": ("max_tokens", "max_completion_tokens"), "temperature": ("temperature",),
          "top_p": ("top_p",)}
_MISTRAL = {**RANGES, "temperature": Range(0)}


def ranges(profile: Profile) -> dict[str, Range]:
    return _MISTRAL if profile.mistral else RANGES
