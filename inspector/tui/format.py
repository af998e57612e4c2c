"""Cell text for the flow list and titles: one place decides how times, sizes and badges read."""

from __future__ import annotations

import time
from dataclasses import dataclass

# Short dialect names keep the list readable at 120 columns.
DIALECT_SHORT = {
    "openai-chat": "chat",
    "openai-responses": "responses",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "mcp": "mcp",
}


def clock_time(started_at: float, now: float) -> str:
    """Time of day with milliseconds for today's flows; the date instead of ms for older ones."""
    moment = time.localtime(started_at)
    if time.localtime(now)[:3] == moment[:3]:
        return time.strftime("%H:%M:%S", moment) + f".{int(started_at * 1000) % 1000:03d}"
    return time.strftime("%m-%d %H:%M", moment)


def duration(ms: float | None) -> str:
    if ms is None:
        return "…"
    if ms < 1000:
        return f"{ms:.0f}ms" if ms >= 10 else f"{ms:.1f}ms"
    return f"{ms / 1000:.2f}s" if ms < 10_000 else f"{ms / 1000:.1f}s"


def status(code: int | None, state: str) -> str:
    if state == "error":
        return "ERR" if code is None else str(code)
    return "…" if code is None else str(code)


def badge(errors: int, warnings: int) -> str:
    parts = []
    if errors:
        parts.append(f"✖{errors}")
    if warnings:
        parts.append(f"▲{warnings}")
    return " ".join(parts)


@dataclass(frozen=True, slots=True)
class Column:
    title: str
    width: int  # 0: takes the remaining width
    right: bool = False


COLUMNS = [
    Column("#", 5, right=True),
    Column("time", 12),
    Column("meth", 6),
    Column("path", 0),
    Column("dialect", 9),
    Column("model", 16),
    Column("st", 3, right=True),
    Column("latency", 7, right=True),
    Column("ttfb", 6, right=True),
    Column("tools", 5, right=True),
    Column("calls", 5, right=True),
    Column("issues", 7),
]
GUTTER = 2  # the session marker and a space
MIN_PATH = 12


def widths(total: int) -> list[int]:
    fixed = sum(c.width for c in COLUMNS) + len(COLUMNS) - 1 + GUTTER
    return [c.width or max(MIN_PATH, total - fixed) for c in COLUMNS]


def fit(text: str, width: int, right: bool = False) -> str:
    if len(text) > width:
        return text[: max(0, width - 1)] + "…"
    return text.rjust(width) if right else text.ljust(width)


def fold(text: str, width: int) -> list[tuple[int, int]]:
    """Where to cut `text` into rows of at most `width` cells: (start, end) spans that together cover
    it. A row ends after a space or a comma (raw JSON has no spaces), or before a `/` (pointers
    and paths have none either), and only a
    token wider than the whole row is cut inside; the spaces a row ends on stay on it (they are
    trailing blanks, the next row starts on the next word)."""
    if width <= 0 or len(text) <= width:
        return [(0, len(text))]
    spans: list[tuple[int, int]] = []
    start = 0
    while len(text) - start > width:
        limit = start + width
        cut = max(text.rfind(" ", start, limit + 1) + 1, text.rfind(",", start, limit) + 1,
                  text.rfind("/", start + 1, limit + 1))
        if cut <= start:
            cut = limit
        while cut < len(text) and text[cut] == " ":  # a row never starts on the space it broke at
            cut += 1
        spans.append((start, cut))
        start = cut
    if start < len(text):
        spans.append((start, len(text)))
    return spans
