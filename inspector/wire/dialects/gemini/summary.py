"""What the flow list shows of a Gemini exchange: function declarations and built-in tools, calls made,
usage (thinking tokens are output the caller pays for). Either field spelling is read (GM-16)."""

from __future__ import annotations

from typing import Any

from ...rules.base import as_list
from .fields import field

USAGE: tuple[str, tuple[str, ...], tuple[str, ...]] | None = ("usageMetadata", ("promptTokenCount",), ("candidatesTokenCount", "thoughtsTokenCount"))


def tools(payload: dict[str, Any], path: str) -> int:
    # A tool object holds many function declarations, or one built-in tool (googleSearch, …).
    count = 0
    for tool in as_list(payload.get("tools")):
        if isinstance(tool, dict):
            key, declarations = field(tool, "functionDeclarations")
            count += len(as_list(declarations)) + (0 if key in tool else 1)
    return count


def tool_calls(payload: dict[str, Any]) -> int:
    return sum(1 for cand in as_list(payload.get("candidates")) if isinstance(cand, dict)
               and isinstance(cand.get("content"), dict) for part in as_list(cand["content"].get("parts"))
               if isinstance(part, dict) and field(part, "functionCall")[0] in part)
