"""What the flow list shows of a Chat exchange: tools declared (legacy functions too), calls made, usage."""

from __future__ import annotations

from typing import Any

from ...rules.base import as_list

USAGE: tuple[str, tuple[str, ...], tuple[str, ...]] | None = ("usage", ("prompt_tokens",), ("completion_tokens",))


def tools(payload: dict[str, Any], path: str) -> int:
    return len(as_list(payload.get("tools"))) + len(as_list(payload.get("functions")))


def tool_calls(payload: dict[str, Any]) -> int:
    count = 0
    for choice in as_list(payload.get("choices")):
        message = choice.get("message") if isinstance(choice, dict) else None
        if isinstance(message, dict):
            count += len(as_list(message.get("tool_calls"))) + (1 if message.get("function_call") else 0)
    return count
