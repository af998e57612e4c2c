"""Where the Responses API's opaque state sits (XL-14 across flows, `wire/opaque.py`): the reasoning
items before the function_call they produced, carried back with their encrypted_content (stateless
and ZDR use) or referred to by id (stored responses)."""

from __future__ import annotations

from typing import Any

from ...opaque import Carried, State
from ...pointer import join

KIND = "reasoning item"


def _items(items: list[Any], base: str, latest_from: int) -> list[Carried]:
    states: list[State] = []
    carried = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        ref = item["id"] if isinstance(item.get("id"), str) else ""
        if kind == "reasoning":
            value = item.get("encrypted_content")
            states.append(State(KIND, value if isinstance(value, str) else "", ref))
        elif kind == "item_reference" and ref.startswith("rs_"):
            states.append(State(KIND, "", ref))
        elif kind == "function_call" and isinstance(item.get("call_id"), str):
            # The reasoning item goes back before the first call it produced; parallel calls follow.
            carried.append(Carried(item["call_id"], tuple(states), join(base, index), index > latest_from))
            states = []
        elif kind is not None and kind != "function_call_output":
            states = []
    return carried


def carried(payload: dict[str, Any], response: bool) -> list[Carried]:
    field = "output" if response else "input"
    items = payload.get(field)
    if not isinstance(items, list):
        return []
    users = [index for index, item in enumerate(items)
             if isinstance(item, dict) and item.get("role") == "user" and item.get("type", "message") == "message"]
    return _items(items, "/" + field, -1 if response or not users else users[-1])
