"""Gemini streams (SSE or one JSON array): candidates' parts merged as the SDK's `.text` reads them.

`reassemble(events, profile, report)` is this dialect's stream builder (see `wire.streams`)."""

from __future__ import annotations

from typing import Any

from ...pointer import join
from ...profiles import Profile
from ...rules.base import Report, as_dict, as_list
from . import rules as gemini
from .fields import field as gfield


def reassemble(events: list[Any], profile: Profile, report: Report) -> dict[str, Any] | None:
    candidates: dict[int, dict[str, Any]] = {}
    result: dict[str, Any] = {}
    for number, event in enumerate(events):
        if not isinstance(event, dict):
            continue
        for key in ("usageMetadata", "modelVersion", "responseId", "promptFeedback"):
            if key in event:
                result[key] = event[key]
        for position, candidate in enumerate(as_list(event.get("candidates"))):
            if not isinstance(candidate, dict):
                continue
            index = candidate.get("index", position)
            merged = candidates.setdefault(index if isinstance(index, int) else position,
                                           {"content": {"role": "model", "parts": []}})
            for key, value in candidate.items():
                if key not in ("content", "index"):
                    merged[key] = value
            parts = as_list(as_dict(candidate.get("content")).get("parts"))
            base = join("", number, "candidates", position, "content", "parts")
            gemini.check_candidate_parts(report, parts, base)
            for slot, part in enumerate(parts):
                if not isinstance(part, dict):
                    continue
                key, call = gfield(part, "functionCall")
                if isinstance(call, dict) and not profile.vertex:
                    for streaming in ("partialArgs", "willContinue", "partial_args", "will_continue"):
                        if streaming in call:
                            report.add("GM-15", join(base, slot, key, streaming), f"{streaming} is Vertex-only; "
                                                                                  "the Gemini API sends whole calls")
                _merge_part(merged["content"]["parts"], part)
    if not candidates and not result:
        return None
    result["candidates"] = [{"index": index, **candidates[index]} for index in sorted(candidates)]
    return result


def _merge_part(parts: list[dict[str, Any]], part: dict[str, Any]) -> None:
    """Adjacent text chunks of one kind (thought or not) join, as the SDK's `.text` reads them."""
    if parts and set(part) <= {"text", "thought"} and isinstance(part.get("text"), str):
        last = parts[-1]
        if set(last) <= {"text", "thought"} and isinstance(last.get("text"), str) and \
                bool(last.get("thought")) == bool(part.get("thought")):
            parts[-1] = {**last, "text": last["text"] + part["text"]}
            return
    parts.append(part)


def is_final(event: Any) -> bool:
    """Whether a client that read `event` had the whole answer: a candidate says why it finished."""
    return isinstance(event, dict) and any(isinstance(c, dict) and c.get("finishReason")
                                           for c in as_list(event.get("candidates")))
