"""Pretty-print JSON and know which line each JSON pointer lands on.

The TUI highlights a violation on "its line" in the pretty-printed payload; this module is the
single source of that mapping so the CLI, exports and UI agree."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from .pointer import join, split

INDENT = "  "


@dataclass(slots=True)
class LocatedText:
    text: str
    lines: dict[str, int]  # pointer -> 0-based line where its value (or its key) starts

    def line_of(self, pointer: str) -> int:
        """The line of the deepest existing ancestor of `pointer` (a missing key points at
        the object that should have held it)."""
        tokens = split(pointer)
        while True:
            candidate = join("", *tokens)
            if candidate in self.lines:
                return self.lines[candidate]
            if not tokens:
                return 0
            tokens.pop()


def _scalar(value: Any) -> str:
    return orjson.dumps(value).decode()


def pretty(document: Any) -> LocatedText:
    """Two-space indented JSON (keys in document order) with a pointer -> line map.

    Iterative, so the deepest document orjson accepts (1024 levels) cannot exhaust the stack."""
    out: list[str] = []
    lines: dict[str, int] = {}
    # Work items: ("value", value, pointer, depth, prefix, suffix) or ("close", text).
    stack: list[tuple[Any, ...]] = [("value", document, "", 0, "", "")]
    while stack:
        item = stack.pop()
        if item[0] == "close":
            out.append(item[1])
            continue
        _, value, pointer, depth, prefix, suffix = item
        pad = INDENT * depth
        lines[pointer] = len(out)
        if isinstance(value, dict) and value:
            out.append(f"{pad}{prefix}{{")
            stack.append(("close", f"{pad}}}{suffix}"))
            last = len(value) - 1
            children = [("value", child, join(pointer, key), depth + 1, f"{_scalar(str(key))}: ",
                         "," if i < last else "") for i, (key, child) in enumerate(value.items())]
            stack.extend(reversed(children))
        elif isinstance(value, list) and value:
            out.append(f"{pad}{prefix}[")
            stack.append(("close", f"{pad}]{suffix}"))
            last = len(value) - 1
            stack.extend(reversed([("value", child, join(pointer, i), depth + 1, "", "," if i < last else "")
                                   for i, child in enumerate(value)]))
        elif isinstance(value, dict):
            out.append(f"{pad}{prefix}{{}}{suffix}")
        elif isinstance(value, list):
            out.append(f"{pad}{prefix}[]{suffix}")
        else:
            out.append(f"{pad}{prefix}{_scalar(value)}{suffix}")
    return LocatedText("\n".join(out), lines)
