"""What the flow list shows of a Converse exchange: tools declared, toolUse blocks, usage."""

from __future__ import annotations

from typing import Any

from ...rules.base import as_dict, as_list

# Cached input is counted apart from inputTokens (TokenUsage); the model read all of it.
USAGE: tuple[str, tuple[str, ...], tuple[str, ...]] | None = (
    "usage", ("inputTokens", "cacheReadInputTokens", "cacheWriteInputTokens"), ("outputTokens",))


def tools(payload: dict[str, Any], path: str) -> int:
    return sum(1 for tool in as_list(as_dict(payload.get("toolConfig")).get("tools"))
               if isinstance(tool, dict) and "toolSpec" in tool)


def tool_calls(payload: dict[str, Any]) -> int:
    message = as_dict(as_dict(payload.get("output")).get("message"))
    return sum(1 for block in as_list(message.get("content")) if isinstance(block, dict) and "toolUse" in block)
