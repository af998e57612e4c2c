"""Where Anthropic's opaque state sits (XL-14 across flows, `wire/opaque.py`): the signed thinking and
redacted_thinking blocks before the tool_use blocks of one assistant message."""

from __future__ import annotations

from typing import Any

from ...opaque import Carried, State, model_turns
from ...pointer import join

# A block type -> what the message calls it, and the field holding its opaque text.
_OPAQUE = {"thinking": ("signed thinking block", "signature"), "redacted_thinking": ("redacted thinking block", "data")}


def _message(blocks: list[Any], pointer: str, latest: bool) -> list[Carried]:
    states: list[State] = []
    carried = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = _OPAQUE.get(block.get("type"))  # type: ignore[arg-type]
        if kind is not None and isinstance(block.get(kind[1]), str):
            states.append(State(kind[0], block[kind[1]]))
        elif block.get("type") == "tool_use" and isinstance(block.get("id"), str):
            carried.append(Carried(block["id"], tuple(states), pointer, latest))
    return carried


def carried(payload: dict[str, Any], response: bool) -> list[Carried]:
    if response:
        content = payload.get("content")
        return _message(content, "/content", True) if isinstance(content, list) else []
    return [each for index, content, latest in model_turns(payload.get("messages"), "assistant", "content")
            for each in _message(content, join("/messages", index, "content"), latest)]
