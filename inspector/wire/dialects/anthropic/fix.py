"""Anthropic's repairs: tools, tool_choice, tool_use ids, and results paired in the next user turn.

`fix(fixer, payload)` is this dialect's fixer (see `wire.fix`): it repairs `payload` in place."""

from __future__ import annotations

from typing import Any

from ...fix import UNAVAILABLE, Fixer, drop_nulls, json_schema
from ...pointer import join
from ...rules import arguments
from .shape import IDS
from .rules import MAX_CACHE_BREAKPOINTS, cache_breakpoints


_ANTHROPIC_ID = IDS  # (pattern, max length) of a tool_use id


def fix(fixer: Fixer, payload: dict[str, Any]) -> None:
    drop_nulls(fixer, payload, ("tools", "tool_choice"), "XL-10")
    taken: set[str] = set()
    if isinstance(payload.get("tools"), list):
        kept = []
        for index, tool in enumerate(payload["tools"]):
            where = join("/tools", index)
            if not isinstance(tool, dict):
                fixer.note("AN-01", where, "dropped", "tool that is not an object dropped")
                continue
            if tool.get("type") in (None, "custom"):
                if not isinstance(tool.get("name"), str) or not tool["name"]:
                    fixer.note("AN-02", where, "dropped", "tool without a name dropped")
                    continue
                tool["name"] = fixer.name(tool["name"], "AN-02", join(where, "name"))
                if not isinstance(tool.get("input_schema"), dict):
                    tool["input_schema"] = {"type": "object", "properties": {}}
                    fixer.note("AN-01", join(where, "input_schema"), "set", "missing input_schema set to an empty "
                                                                     "object schema")
                tool["input_schema"] = json_schema(fixer, tool["input_schema"], join(where, "input_schema"), "XL-01")
            if fixer.keep_first(tool.get("name"), taken, "AN-03", where):
                kept.append(tool)
        payload["tools"] = kept
        if not kept:
            del payload["tools"]
    choice = payload.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "tool" and fixer.renamed(choice.get("name")):
        choice["name"] = fixer.renamed(choice["name"])
        fixer.note("AN-02", "/tool_choice/name", "aliased", f"→ {choice['name']!r}")
    if "tool_choice" in payload and "tools" not in payload:
        del payload["tool_choice"]
        fixer.note("AN-10", "/tool_choice", "removed", "tool_choice without tools removed")
    if isinstance(payload.get("messages"), list):
        payload["messages"] = _anthropic_messages(fixer, payload["messages"])
    _drop_extra_breakpoints(fixer, payload)


def _drop_extra_breakpoints(fixer: Fixer, payload: dict[str, Any]) -> None:
    """AN-18: the earliest cache_control breakpoints beyond four go; the latest cover the longest prefix."""
    found = cache_breakpoints(payload)
    for where, block in found[:max(0, len(found) - MAX_CACHE_BREAKPOINTS)]:
        del block["cache_control"]
        fixer.note("AN-18", join(where, "cache_control"), "removed",
                   f"cache_control removed: {len(found)} breakpoints, Anthropic takes {MAX_CACHE_BREAKPOINTS}")


def _anthropic_messages(fixer: Fixer, messages: list[Any]) -> list[Any]:
    out: list[Any] = []
    pending: list[str] = []
    seen: set[str] = set()
    rewritten: dict[str, str] = {}
    for index, message in enumerate(messages):
        base = join("/messages", index)
        if not isinstance(message, dict):
            out.append(message)
            continue
        role = message.get("role")
        blocks = message.get("content") if isinstance(message.get("content"), list) else None
        if role == "user":
            results, others = [], []
            for position, block in enumerate(blocks or []):
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    tool_use_id = block.get("tool_use_id")
                    tool_use_id = rewritten.get(tool_use_id, tool_use_id) if isinstance(tool_use_id, str) else None
                    if tool_use_id in pending:
                        block["tool_use_id"] = tool_use_id
                        pending.remove(tool_use_id)
                        results.append(block)
                    else:
                        fixer.note("AN-08", join(base, "content", position), "dropped",
                                   f"tool_result for {block.get('tool_use_id')!r} dropped: no pending tool_use")
                else:
                    others.append(block)
            if results and others and blocks is not None and blocks[: len(results)] != results:
                fixer.note("AN-09", join(base, "content"), "reordered", "tool_result blocks moved before the text")
            results.extend(_anthropic_unavailable(fixer, pending, base))
            if blocks is not None:
                message["content"] = results + others
            elif results:
                text = message.get("content")
                message["content"] = results + ([{"type": "text", "text": text}] if isinstance(text, str) and text
                                                 else [])
        else:
            if pending:
                out.append({"role": "user", "content": _anthropic_unavailable(fixer, pending, base)})
            if role == "assistant":
                for position, block in enumerate(blocks or []):
                    if isinstance(block, dict) and block.get("type") == "tool_use":
                        where = join(base, "content", position)
                        if isinstance(block.get("name"), str):
                            block["name"] = fixer.name(block["name"], "AN-02", join(where, "name"))
                        if not isinstance(block.get("input"), dict):
                            block["input"], note = arguments.as_object(block.get("input", {}))
                            fixer.note("AN-05", join(where, "input"), "converted", note or "input decoded")
                        original = block.get("id")
                        if isinstance(original, str):
                            new = fixer.call_id(original, seen, ("AN-05", join(where, "id")), _ANTHROPIC_ID[1],
                                                _ANTHROPIC_ID[0])
                            rewritten[original] = new
                            block["id"] = new
                            pending.append(new)
        content = message.get("content")
        if (content == "" or content == []) and not (role == "assistant" and index == len(messages) - 1):
            fixer.note("AN-12", base, "dropped", "message with empty content dropped")
            continue
        out.append(message)
    if pending:
        out.append({"role": "user",
                    "content": _anthropic_unavailable(fixer, pending, join("/messages", len(messages)))})
    return out


def _anthropic_unavailable(fixer: Fixer, pending: list[str], before: str) -> list[dict[str, Any]]:
    made = [{"type": "tool_result", "tool_use_id": block_id, "content": UNAVAILABLE, "is_error": True}
            for block_id in pending]
    for block_id in pending:
        fixer.note("AN-07", before, "synthesised", f"tool_result {UNAVAILABLE!r} (is_error) for {block_id!r}")
    pending.clear()
    return made
