"""Bedrock Converse's repairs: tool names and duplicates, toolChoice, toolUse ids and inputs, and
results paired with the calls of the message before them.

`fix(fixer, payload)` is this dialect's fixer (see `wire.fix`): it repairs `payload` in place."""

from __future__ import annotations

from typing import Any

from ...fix import UNAVAILABLE, Fixer, json_schema
from ...pointer import join
from ...rules import arguments
from ...rules.base import as_dict
from .shape import IDS


def fix(fixer: Fixer, payload: dict[str, Any]) -> None:
    config = payload.get("toolConfig")
    if isinstance(config, dict) and isinstance(config.get("tools"), list):
        _fix_tools(fixer, config)
    if isinstance(payload.get("messages"), list):
        payload["messages"] = _messages(fixer, payload["messages"])


def _fix_tools(fixer: Fixer, config: dict[str, Any]) -> None:
    taken: set[str] = set()
    kept = []
    for index, tool in enumerate(config["tools"]):
        spec = as_dict(tool).get("toolSpec")
        where = join("/toolConfig/tools", index, "toolSpec")
        if isinstance(spec, dict) and isinstance(spec.get("name"), str):
            spec["name"] = fixer.name(spec["name"], "BR-02", join(where, "name"))
            schema = spec.get("inputSchema")
            if isinstance(schema, dict) and isinstance(schema.get("json"), dict):
                schema["json"] = json_schema(fixer, schema["json"], join(where, "inputSchema", "json"), "XL-01")
            elif isinstance(schema, dict) and schema.get("type") == "object":
                # A bare JSON Schema where its `json` wrapper belongs (an Anthropic input_schema).
                spec["inputSchema"] = {"json": json_schema(fixer, schema, join(where, "inputSchema"), "XL-01")}
                fixer.note("BR-01", join(where, "inputSchema"), "wrapped", "the schema put under inputSchema.json")
            if not fixer.keep_first(spec["name"], taken, "BR-03", join("/toolConfig/tools", index)):
                continue
        kept.append(tool)
    config["tools"] = kept
    named = as_dict(as_dict(config.get("toolChoice")).get("tool"))
    if fixer.renamed(named.get("name")):
        named["name"] = fixer.renamed(named["name"])
        fixer.note("BR-02", "/toolConfig/toolChoice/tool/name", "aliased", f"→ {named['name']!r}")


def _messages(fixer: Fixer, messages: list[Any]) -> list[Any]:
    """BR-04..06: each call's id fits and is unique, its input an object; a result answering no call
    of the message before it is dropped (BR-05), and a call left unanswered gets an error result."""
    out: list[Any] = []
    pending: list[str] = []
    calls: dict[str, str] = {}  # toolUseId -> where the call is (BR-06 is reported there)
    seen: set[str] = set()
    rewritten: dict[str, str] = {}
    pattern, limit = IDS
    for index, message in enumerate(messages):
        base = join("/messages", index)
        content = as_dict(message).get("content")
        if not isinstance(content, list):
            out.append(message)
            continue
        role = message.get("role")
        if role == "user":
            kept = []
            for position, block in enumerate(content):
                result = as_dict(block).get("toolResult")
                if not isinstance(result, dict):
                    kept.append(block)
                    continue
                use_id = result.get("toolUseId")
                use_id = rewritten.get(use_id, use_id) if isinstance(use_id, str) else None
                if use_id in pending:
                    result["toolUseId"] = use_id
                    pending.remove(use_id)
                    kept.append(block)
                else:
                    fixer.note("BR-05", join(base, "content", position), "dropped",
                               f"toolResult for {result.get('toolUseId')!r} dropped: no toolUse of the previous "
                               "message has that id")
            message["content"] = _unavailable(fixer, pending, calls) + kept
            if not message["content"]:
                fixer.note("BR-09", base, "dropped", "message left without content dropped")
                continue
        elif pending:
            out.append({"role": "user", "content": _unavailable(fixer, pending, calls)})
        if role == "assistant":
            for position, block in enumerate(content):
                use = as_dict(block).get("toolUse")
                if not isinstance(use, dict):
                    continue
                where = join(base, "content", position, "toolUse")
                if isinstance(use.get("name"), str):
                    use["name"] = fixer.name(use["name"], "BR-02", join(where, "name"))
                if not isinstance(use.get("input"), dict):
                    use["input"], note = arguments.as_object(use.get("input", {}))
                    fixer.note("BR-04", join(where, "input"), "converted", note or "input decoded")
                original = use.get("toolUseId")
                if isinstance(original, str) and original:
                    new = fixer.call_id(original, seen, ("BR-04", join(where, "toolUseId")), limit, pattern)
                    rewritten[original] = new
                    use["toolUseId"] = new
                    pending.append(new)
                    calls[new] = where
        out.append(message)
    return out


def _unavailable(fixer: Fixer, pending: list[str], calls: dict[str, str]) -> list[dict[str, Any]]:
    made: list[dict[str, Any]] = [{"toolResult": {"toolUseId": use_id, "content": [{"text": UNAVAILABLE}],
                                                  "status": "error"}} for use_id in pending]
    for use_id in pending:
        fixer.note("BR-06", calls[use_id], "synthesised", f"toolResult {UNAVAILABLE!r} (status error) for {use_id!r}")
    pending.clear()
    return made
