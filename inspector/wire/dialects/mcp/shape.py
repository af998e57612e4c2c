"""How to tell an MCP response from a request: a request names its `method`."""

from __future__ import annotations

from typing import Any


def is_response(payload: dict[str, Any]) -> bool:
    return "method" not in payload
