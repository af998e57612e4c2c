"""Where Gemini's opaque state sits (XL-14 across flows, `wire/opaque.py`): the thoughtSignature on a
functionCall part (the first call of each step carries it; parallel calls after it carry none)."""

from __future__ import annotations

from typing import Any

import orjson

from ...opaque import Carried, State, model_turns
from ...pointer import join


def _field(node: dict[str, Any], camel: str, snake: str) -> Any:
    return node.get(camel, node.get(snake))  # Gemini reads either spelling


def _call_key(call: dict[str, Any]) -> str | None:
    """The call's id, or (before Gemini 3 minted ids) its name and arguments, which the history repeats."""
    if isinstance(call.get("id"), str) and call["id"]:
        return str(call["id"])
    if not isinstance(call.get("name"), str):
        return None
    try:
        return str(call["name"]) + orjson.dumps(call.get("args"), option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        return None


def _turn(parts: list[Any], pointer: str, latest: bool) -> list[Carried]:
    carried = []
    for index, part in enumerate(parts):
        call = _field(part, "functionCall", "function_call") if isinstance(part, dict) else None
        key = _call_key(call) if isinstance(call, dict) else None
        if key is None:
            continue
        signature = _field(part, "thoughtSignature", "thought_signature")
        states = (State("thoughtSignature", signature),) if isinstance(signature, str) else ()
        carried.append(Carried(key, states, join(pointer, index), latest))
    return carried


def carried(payload: dict[str, Any], response: bool) -> list[Carried]:
    if response:
        candidates = payload.get("candidates")
        first = candidates[0] if isinstance(candidates, list) and candidates else None
        content = first.get("content") if isinstance(first, dict) else None
        parts = content.get("parts") if isinstance(content, dict) else None
        return _turn(parts, "/candidates/0/content/parts", True) if isinstance(parts, list) else []
    return [each for index, parts, latest in model_turns(payload.get("contents"), "model", "parts")
            for each in _turn(parts, join("/contents", index, "parts"), latest)]
