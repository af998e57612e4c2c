"""Pretty-print JSON and know which line each JSON pointer lands on.

The TUI highlights a violation on "its line" in the pretty-printed payload; this module is the
single source of that mapping so the CLI, exports and UI agree."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

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
        return _nearest(self.lines, pointer, 0)


_Place = TypeVar("_Place")


def _nearest(places: Mapping[str, _Place], pointer: str, default: _Place) -> _Place:
    """What `places` holds for the deepest existing ancestor of `pointer` (itself included)."""
    tokens = split(pointer) if pointer.startswith("/") else []
    while True:
        candidate = join("", *tokens)
        if candidate in places:
            return places[candidate]
        if not tokens:
            return default
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


# Where a finding is in the file a user checked (CI annotations, SARIF): the document as written,
# not as pretty-printed. Line ends as SSE splits them (sse.py).
_LINE_END = re.compile("\r\n|\r|\n")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"?', re.S)
_SCALAR = re.compile(r'[^\s,:\[\]{}"]+')


@dataclass(slots=True)
class SourceText:
    """Offsets of JSON pointers in the text of a checked file, as 1-based (line, column) in code points."""

    text: str
    offsets: dict[str, int]  # pointer -> offset where its value (a member: its key) starts

    def position_of(self, pointer: str) -> tuple[int, int]:
        """Line and column of the deepest existing ancestor of `pointer`; (1, 1) when none is known."""
        offset = _nearest(self.offsets, pointer, None)
        return (1, 1) if offset is None else self.position_at(offset)

    def position_at(self, offset: int) -> tuple[int, int]:
        line_start = max(self.text.rfind("\n", 0, offset), self.text.rfind("\r", 0, offset)) + 1
        return len(_LINE_END.findall(self.text, 0, line_start)) + 1, offset - line_start + 1

    def embedded(self, at: str, pointer: str, sse: bool = False) -> tuple[int, int]:
        """Line and column of `pointer` in a document this file holds at `at` (a recording's body):
        written in place as JSON (a fixture's body.json), or as the text of a JSON string (a HAR's
        postData.text), whose escapes are followed to the character. Where the pointer cannot be
        followed into the text (base64, a string that is no JSON), the holder's own place."""
        offset = self.offsets.get(at)
        if offset is None:
            return self.position_of(at)
        if self.text[offset:offset + 1] == '"':  # a member is found by its key: the value follows it
            _, _, end = _string_literal(self.text, offset)
            after = _after_blank(self.text, end)
            if self.text[after:after + 1] == ":":
                offset = _after_blank(self.text, after + 1)
        if self.text[offset:offset + 1] != '"':
            return self.position_of(join(at, *split(pointer)) if pointer else at)
        decoded, places, _ = _string_literal(self.text, offset)
        if decoded is None:
            return self.position_at(offset)
        return self.position_at(within(decoded, places, pointer, sse, offset))


def within(decoded: str, places: list[int], pointer: str, sse: bool, default: int) -> int:
    """Where `pointer` is written in a file that holds a document as escaped or folded text: `decoded`
    is the document, `places` the file offset of each of its characters; `default` when the pointer
    (or an ancestor) is not in it."""
    inner = _nearest(source(decoded, sse).offsets, pointer, None)
    return default if inner is None or inner >= len(places) else places[inner]


_BLANK = re.compile(r"[ \t\r\n]*")


def _after_blank(text: str, position: int) -> int:
    """The first position from `position` on that is not JSON whitespace."""
    match = _BLANK.match(text, position)
    return position if match is None else match.end()  # (it always matches, the empty string at least)


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "/": "/", "\\": "\\", '"': '"'}


def _string_literal(text: str, start: int) -> tuple[str | None, list[int], int]:
    """The JSON string literal at text[start] decoded, for each decoded character the offset in `text`
    where it is written, and the offset after the literal; None when it is not a well-formed literal."""
    out: list[str] = []
    places: list[int] = []
    position = start + 1
    while position < len(text) and text[position] != '"':
        char = text[position]
        if char != "\\":
            out.append(char)
            places.append(position)
            position += 1
            continue
        escape = text[position + 1:position + 2]
        if escape == "u":
            try:
                code = int(text[position + 2:position + 6], 16)
            except ValueError:
                return None, [], position
            width = 6
            if 0xD800 <= code < 0xDC00 and text[position + 6:position + 8] == "\\u":  # a surrogate pair
                try:
                    low = int(text[position + 8:position + 12], 16)
                except ValueError:
                    return None, [], position
                if 0xDC00 <= low < 0xE000:
                    code, width = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00), 12
            out.append(chr(code))
        elif escape in _ESCAPES:
            out.append(_ESCAPES[escape])
            width = 2
        else:
            return None, [], position
        places.append(position)
        position += width
    if position >= len(text):
        return None, [], position
    return "".join(out), places, position + 1


def source(body: bytes | str, sse: bool = False) -> SourceText:
    """Where each JSON pointer lands in `body`: a JSON document (pointers from its root), or with
    `sse` an event stream whose pointers start with the event's index (`/3/choices/0`), counting
    every event that has data, as streams.parse_events does. Total: any bytes give a map."""
    text = body if isinstance(body, str) else body.decode("utf-8", "replace")
    offsets: dict[str, int] = {}
    if not sse:
        _json_offsets(text, 0, len(text), "", offsets)
        return SourceText(text, offsets)
    index, start = 0, 0
    data_lines: list[tuple[int, int]] = []
    for end in [*(m.start() for m in _LINE_END.finditer(text)), len(text)]:
        line = text[start:end]
        if not line:
            if data_lines:
                _event(text, data_lines, join("", index), offsets)
                index += 1
            data_lines = []
        elif line.startswith("data:"):
            value = start + 5 + (line[5:6] == " ")
            data_lines.append((value, end))
        match = _LINE_END.match(text, end)
        start = match.end() if match else end
    if data_lines:
        _event(text, data_lines, join("", index), offsets)
    return SourceText(text, offsets)


def _event(text: str, data_lines: list[tuple[int, int]], pointer: str, offsets: dict[str, int]) -> None:
    if len(data_lines) == 1:
        _json_offsets(text, *data_lines[0], pointer, offsets)
    offsets[pointer] = data_lines[0][0]


def _json_offsets(text: str, start: int, end: int, root: str, offsets: dict[str, int]) -> None:
    """Record the offset of every value of the JSON text in text[start:end] (a member's: its key's).
    Iterative, and forgiving: text that is not JSON records what it can and stops."""
    # Open containers: [pointer, next array index, or -1 for an object awaiting a key].
    stack: list[list[Any]] = []
    position = start
    pending: str | None = root  # the pointer of the next value, when one is expected
    while position < end:
        char = text[position]
        if char in " \t\r\n,:":
            position += 1
            continue
        if char in "}]":
            if not stack:
                return
            stack.pop()
            position += 1
            if not stack:
                return
            continue
        if stack and stack[-1][1] == -1 and pending is None:  # an object's key
            match = _STRING.match(text, position, end)
            if match is None:
                return
            try:
                key = json.loads(match.group())
            except ValueError:
                key = match.group()[1:-1]
            pending = join(stack[-1][0], key)
            offsets[pending] = position
            position = match.end()
            continue
        if pending is None:  # an array item
            if not stack:
                return
            pending = join(stack[-1][0], stack[-1][1])
            stack[-1][1] += 1
        offsets.setdefault(pending, position)
        if char in "{[":
            stack.append([pending, -1 if char == "{" else 0])
            position += 1
        else:
            match = (_STRING if char == '"' else _SCALAR).match(text, position, end)
            position = match.end() if match and match.end() > position else position + 1
            if not stack:
                return
        pending = None
