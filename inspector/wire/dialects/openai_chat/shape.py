"""How to tell a Chat response from a request: `choices` without `messages`."""

from __future__ import annotations

from typing import Any


def is_response(payload: dict[str, Any]) -> bool:
    return "choices" in payload and "messages" not in payload
