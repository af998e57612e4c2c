"""Cell text for the flow list and titles: one place decides how times, sizes and badges read."""

from __future__ import annotations

import time
from collections.abc import Mapping

from ..wire.dialects import Derived, short_names

# Short dialect names keep the list readable at 120 columns (each home's `short`).
DIALECT_SHORT: Mapping[str, str] = Derived(short_names)


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


def count(n: int) -> str:
    """A token count in at most 5 characters: 9950, 12.3k, 123k, 1.2M."""
    if n < 10_000:
        return str(n)
    for unit, size in (("k", 1_000), ("M", 1_000_000)):
        if round(n / size, 1) < 100:
            return f"{n / size:.1f}{unit}"
        if round(n / size) < 1000:
            return f"{round(n / size)}{unit}"
    return f"{round(n / 1_000_000_000)}G"


def usage(tokens_in: int | None, tokens_out: int | None) -> str:
    """Tokens in/out as the response reports them ("" when it reports none, "?" for a missing half)."""
    if tokens_in is None and tokens_out is None:
        return ""
    return "/".join("?" if n is None else count(n) for n in (tokens_in, tokens_out))


def badge(errors: int, warnings: int) -> str:
    parts = []
    if errors:
        parts.append(f"✖{errors}")
    if warnings:
        parts.append(f"▲{warnings}")
    return " ".join(parts)


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


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """`number` `noun`, in English: "1 note", "2 notes", "0 errors"."""
    return f"{number} {noun if number == 1 else plural or noun + 's'}"
