"""What the flow list shows of an Anthropic exchange: tools declared, calls made (server tools too), usage."""

from __future__ import annotations

from typing import Any

from ...rules.base import as_list

# Cached input is counted apart from input_tokens; the model read all of it.
USAGE: tuple[str, tuple[str, ...], tuple[str, ...]] | None = ("usage", ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"), ("output_tokens",))


def tools(payload: dict[str, Any], path: str) -> int:
    return len(as_list(payload.get("tools")))


def tool_calls(payload: dict[str, Any]) -> int:
    return sum(1 for block in as_list(payload.get("content"))
               if isinstance(block, dict) and block.get("type") in ("tool_use", "server_tool_use"))
