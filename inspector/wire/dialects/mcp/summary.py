"""What the flow list shows of an MCP exchange: no tools declared by a request; a response counts the
tools a tools/list result lists; MCP reports no usage."""

from __future__ import annotations

from typing import Any

from ...rules.base import as_list

USAGE: tuple[str, tuple[str, ...], tuple[str, ...]] | None = None


def tools(payload: dict[str, Any], path: str) -> int:
    return 0


def tool_calls(payload: dict[str, Any]) -> int:
    result = payload.get("result")
    return len(as_list(result.get("tools"))) if isinstance(result, dict) else 0
