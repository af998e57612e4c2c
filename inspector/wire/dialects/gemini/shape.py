"""How to tell a Gemini response from a request: its `candidates`."""

from __future__ import annotations

from typing import Any


def is_response(payload: dict[str, Any]) -> bool:
    return "candidates" in payload
