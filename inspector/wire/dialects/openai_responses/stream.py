"""Responses streams: output items and their argument deltas joined into the final `response`, checked
against each other (OR-10) and against the final event.

`reassemble(events, profile, report)` is this dialect's stream builder (see `wire.streams`)."""

from __future__ import annotations

from typing import Any

from ...pointer import join
from ...profiles import Profile
from ...rules.base import Report, as_list, short
from ...violations import Severity
from ..openai_chat import rules as openai_chat


_ARGUMENT_EVENTS = {
    "response.function_call_arguments": "arguments",
    "response.custom_tool_call_input": "input",
    "response.mcp_call_arguments": "arguments",
}


def reassemble(events: list[Any], profile: Profile, report: Report) -> dict[str, Any] | None:
    items: dict[str, dict[str, Any]] = {}  # item id -> accumulated item
    by_call_id: dict[str, str] = {}
    deltas: dict[str, list[str]] = {}
    outputs: dict[int, dict[str, Any]] = {}
    done_where: dict[str, str] = {}
    final: dict[str, Any] | None = None
    final_where = ""
    last_sequence = None
    for number, event in enumerate(events):
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if not isinstance(kind, str):
            continue
        sequence = event.get("sequence_number")
        if isinstance(sequence, int):
            if last_sequence is not None and sequence <= last_sequence:
                report.add("OR-10", join("", number, "sequence_number"),
                           f"sequence_number {sequence} does not increase (previous {last_sequence})", Severity.WARNING)
            last_sequence = sequence
        if kind in ("response.output_item.added", "response.output_item.done"):
            item = event.get("item")
            if not isinstance(item, dict):
                continue
            item_id = item.get("id")
            if kind.endswith("added"):
                if isinstance(item_id, str):
                    items[item_id] = dict(item)
                    deltas[item_id] = []
                    if isinstance(item.get("call_id"), str):
                        by_call_id[item["call_id"]] = item_id
            else:
                if isinstance(item_id, str) and item_id in items:
                    _compare(report, items[item_id], item, deltas.get(item_id), join("", number, "item"))
                if isinstance(event.get("output_index"), int):
                    outputs[event["output_index"]] = item
                if item.get("type") == "function_call":
                    done_where.setdefault(str(item_id), join("", number, "item", "arguments"))
            continue
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            if isinstance(event.get("response"), dict):
                final, final_where = event["response"], join("", number, "response")
            continue
        stem, _, phase = kind.rpartition(".")
        if stem not in _ARGUMENT_EVENTS or phase not in ("delta", "done"):
            continue
        item_id = event.get("item_id")
        where = join("", number)
        if not isinstance(item_id, str) or item_id not in items:
            called = by_call_id.get(item_id) if isinstance(item_id, str) else None  # the item of that call_id
            report.add("OR-10", join(where, "item_id"),
                       f"{kind} is keyed by call_id {short(item_id)}; deltas are keyed by the item id"
                       if called is not None else f"{kind} names item {short(item_id)}, which no output_item.added opened")
            if called is None:
                continue
            item_id = called
        if phase == "delta":
            if isinstance(event.get("delta"), str):
                deltas[item_id].append(event["delta"])
        else:
            field_name = _ARGUMENT_EVENTS[stem]
            text = event.get(field_name)
            joined = "".join(deltas[item_id])
            if deltas[item_id] and isinstance(text, str) and text != joined:
                report.add("OR-10", join(where, field_name), f"done {field_name} differ from the concatenated deltas "
                                                             f"({short(text, 30)} vs {short(joined, 30)})")
            if isinstance(text, str):
                items[item_id][field_name] = text
                deltas[item_id] = [text]
                done_where[item_id] = join(where, field_name)
    if final is not None:
        for position, item in enumerate(as_list(final.get("output"))):
            if isinstance(item, dict) and isinstance(item.get("id"), str) and item["id"] in items:
                _compare(report, items[item["id"]], item, deltas.get(item["id"]), join(final_where, "output", position))
    for item_id, item in items.items():
        if item.get("type") == "function_call":
            arguments = "".join(deltas.get(item_id, [])) if deltas.get(item_id) else item.get("arguments", "")
            if isinstance(arguments, str) and arguments:
                openai_chat.check_arguments_text(report, profile, arguments, done_where.get(item_id, ""), rule="XL-08")
    if final is not None:
        return final
    if not outputs and not items:
        return None
    output = [outputs[index] for index in sorted(outputs)] or list(items.values())
    return {"object": "response", "status": "incomplete", "output": output}


def _compare(report: Report, started: dict[str, Any], item: dict[str, Any], parts: list[str] | None,
             where: str) -> None:
    if item.get("type") != "function_call" or not parts:
        return
    joined = "".join(parts)
    if isinstance(item.get("arguments"), str) and item["arguments"] != joined:
        report.add("OR-10", join(where, "arguments"), "final arguments differ from the streamed ones "
                                                      f"({short(item['arguments'], 30)} vs {short(joined, 30)})")
    if started.get("call_id") is not None and item.get("call_id") != started.get("call_id"):
        report.add("OR-10", join(where, "call_id"), "call_id changed between output_item.added and the end")


_FINAL_TYPES = frozenset({"response.completed", "response.incomplete", "response.failed"})


def is_final(event: Any) -> bool:
    """Whether a client that read `event` had the whole answer."""
    return isinstance(event, dict) and event.get("type") in _FINAL_TYPES
