"""What the flow list shows of a Responses exchange: tools declared, calls made (any `*_call` item), usage."""

from __future__ import annotations

from typing import Any

from ...rules.base import as_list

USAGE: tuple[str, tuple[str, ...], tuple[str, ...]] | None = ("usage", ("input_tokens",), ("output_tokens",))


def tools(payload: dict[str, Any], path: str) -> int:
    return len(as_list(payload.get("tools")))


def tool_calls(payload: dict[str, Any]) -> int:
    return sum(1 for item in as_list(payload.get("output"))
               if isinstance(item, dict) and isinstance(item.get("type"), str) and item["type"].endswith("_call"))
