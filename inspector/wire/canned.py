"""What a fake model says, in no dialect's terms: text and tool calls. Each dialect's home writes it
as that dialect's response and stream events (`dialects/<name>/mock.py`); the mock upstream serves
them (`inspector.mock`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call the fake model makes: arguments as the JSON text the provider sends."""

    name: str
    arguments: str = "{}"
    id: str = "call_1"


def split(text: str, pieces: int) -> list[str]:
    """`text` in exactly `pieces` parts (fewer only when it has fewer characters)."""
    count = max(1, min(pieces, len(text)))
    size, extra = divmod(len(text), count)
    parts, start = [], 0
    for n in range(count):
        end = start + size + (1 if n < extra else 0)
        parts.append(text[start:end])
        start = end
    return [p for p in parts if p]

