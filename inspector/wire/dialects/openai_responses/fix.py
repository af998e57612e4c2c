"""Responses' repairs: tools, tool_choice, and the input's calls and outputs.

`fix(fixer, payload)` is this dialect's fixer (see `wire.fix`): it repairs `payload` in place."""

from __future__ import annotations

from typing import Any

from ...rules.schema import strict_problem
from ...fix import UNAVAILABLE, Fixer, drop_nulls, fixed_arguments, json_schema
from ...pointer import join
from ..openai_chat.fix import root_properties


def fix(fixer: Fixer, payload: dict[str, Any]) -> None:
    drop_nulls(fixer, payload, ("tools", "tool_choice"), "XL-10")
    taken: set[str] = set()
    if isinstance(payload.get("tools"), list):
        kept = []
        for index, tool in enumerate(payload["tools"]):
            where = join("/tools", index)
            if isinstance(tool, dict) and tool.get("type") == "function" and isinstance(tool.get("function"), dict):
                tool = {"type": "function", **tool["function"]}
                fixer.note("OR-02", join(where, "function"), "converted", "nested Chat tool flattened")
            if isinstance(tool, dict) and tool.get("type") == "function":
                if not isinstance(tool.get("name"), str) or not tool["name"]:
                    fixer.note("XL-09", where, "dropped", "function tool with an empty name dropped")
                    continue
                tool["name"] = fixer.name(tool["name"], "OR-03", join(where, "name"))
                if isinstance(tool.get("parameters"), dict):
                    tool["parameters"] = root_properties(fixer, json_schema(fixer, tool["parameters"],
                                                                            join(where, "parameters"), "XL-01"),
                                                         join(where, "parameters"), "OR-02")
                    if tool.get("strict") is True and strict_problem(tool["parameters"]) is not None:
                        tool["strict"] = False
                        fixer.note("XL-13", join(where, "strict"), "set", "strict:true → false (schema not strict)")
                if not fixer.keep_first(tool["name"], taken, "XL-03", where):
                    continue
            kept.append(tool)
        payload["tools"] = kept
    choice = payload.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "function":
        if isinstance(choice.get("function"), dict):
            payload["tool_choice"] = choice = {"type": "function", "name": choice["function"].get("name")}
            fixer.note("OR-04", "/tool_choice", "converted", "nested Chat tool_choice flattened")
        if fixer.renamed(choice.get("name")):
            choice["name"] = fixer.renamed(choice["name"])
            fixer.note("OR-03", "/tool_choice/name", "aliased", f"→ {choice['name']!r}")
    if isinstance(payload.get("input"), list):
        payload["input"] = _responses_input(fixer, payload["input"], payload.get("previous_response_id") is not None)


def _responses_input(fixer: Fixer, items: list[Any], server_history: bool) -> list[Any]:
    out: list[Any] = []
    pending: list[str] = []
    seen: set[str] = set()
    answered: set[str] = set()
    for index, item in enumerate(items):
        base = join("/input", index)
        if not isinstance(item, dict):
            out.append(item)
            continue
        kind = item.get("type")
        if kind in (None, "message") and item.get("role") == "tool":
            item = {"type": "function_call_output", "call_id": item.get("tool_call_id"),
                    "output": item.get("content") if isinstance(item.get("content"), str) else ""}
            fixer.note("OR-05", base, "converted", "role:'tool' message → function_call_output item")
            kind = "function_call_output"
        if kind == "function_call":
            if isinstance(item.get("name"), str):
                item["name"] = fixer.name(item["name"], "OR-03", join(base, "name"))
            item["arguments"] = fixed_arguments(fixer, item.get("arguments", "{}"), "XL-08", join(base, "arguments"))
            if item.get("id") is not None and not (isinstance(item["id"], str) and item["id"].startswith("fc")):
                fixer.note("OR-06", join(base, "id"), "removed", f"id {item['id']!r} is not an fc_ id")
                del item["id"]
            call_id = item.get("call_id")
            if isinstance(call_id, str):
                item["call_id"] = call_id = fixer.call_id(call_id, seen, ("XL-04", join(base, "call_id")), 64)
                pending.append(call_id)
            out.append(item)
        elif kind == "function_call_output":
            call_id = item.get("call_id")
            if not isinstance(item.get("output"), (str, list)):
                item["output"] = ""
                fixer.note("OR-07", join(base, "output"), "set", "missing output set to \"\"")
            if isinstance(call_id, str) and call_id in pending:
                pending.remove(call_id)
                answered.add(call_id)
                out.append(item)
            elif server_history and isinstance(call_id, str) and call_id not in seen:
                out.append(item)
            else:
                fixer.note("OR-08", base, "dropped", f"function_call_output for {call_id!r} dropped: no pending call")
        else:
            if pending and "role" in item:
                out.extend(_responses_unavailable(fixer, pending, base))
            out.append(item)
    if pending:
        out.extend(_responses_unavailable(fixer, pending, join("/input", len(items))))
    return out


def _responses_unavailable(fixer: Fixer, pending: list[str], before: str) -> list[dict[str, Any]]:
    made = [{"type": "function_call_output", "call_id": call_id, "output": UNAVAILABLE} for call_id in pending]
    for call_id in pending:
        fixer.note("OR-08", before, "synthesised", f"function_call_output {UNAVAILABLE!r} for {call_id!r}")
    pending.clear()
    return made
