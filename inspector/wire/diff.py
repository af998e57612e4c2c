"""Structural diff of two JSON documents, aligned by JSON path: what the client sent against what
went upstream (translate, repair) or against the fixed request (`F`), and a response against its
replay's. Pure: no I/O, no UI.

Objects align by key; arrays by content first (`difflib` over each element's canonical JSON), so a
message merged away or inserted shifts nothing after it, and the elements of a changed run pair up
by the values they share (`_align`) and are diffed in turn. Every row keeps its pointer on each side it exists on,
so a loss report's or a repair's pointer finds its line."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from enum import Enum
from typing import Any

import orjson

from . import jsonsafe
from .pointer import join, split


class Op(Enum):
    SAME = " "
    ADDED = "+"
    REMOVED = "-"
    CHANGED = "~"  # a scalar whose value changed: the row shows old → new


@dataclass(frozen=True, slots=True)
class Row:
    op: Op
    depth: int
    text: str  # the row as read, without indentation: `"key": value`, `"key": {`, `}`, `… 3 unchanged items`
    left: str | None  # its pointer in the left document; None when it is not there
    right: str | None


@dataclass(slots=True)
class Diff:
    rows: list[Row] = field(default_factory=list)
    _lines: tuple[dict[str, int], dict[str, int]] = field(default_factory=lambda: ({}, {}))
    # While diffing: each container's canonical text, so a deep document is written once, not once per level.
    _texts: dict[int, bytes] = field(default_factory=dict, repr=False)

    @property
    def identical(self) -> bool:
        return all(row.op is Op.SAME for row in self.rows)

    def counts(self) -> dict[Op, int]:
        """Changes by kind, counting a subtree added or removed once (its first row)."""
        found: dict[Op, int] = {op: 0 for op in Op if op is not Op.SAME}
        for row in self.rows:
            parent = row.right if row.op is Op.ADDED else row.left
            if row.op is not Op.SAME and not row.text.startswith(("}", "]")) and \
                    not self._inside_changed(parent, row.op):
                found[row.op] += 1
        return found

    def _inside_changed(self, pointer: str | None, op: Op) -> bool:
        if not pointer:
            return False
        parent = join("", *split(pointer)[:-1])
        lines = self._lines[1] if op is Op.ADDED else self._lines[0]
        line = lines.get(parent)
        return line is not None and self.rows[line].op is op

    def row_of(self, pointer: str, side: str) -> int | None:
        """The row of exactly `pointer` on `side`, None when that side has no such node."""
        return (self._lines[0] if side == "left" else self._lines[1]).get(pointer)

    def line_of(self, pointer: str, side: str) -> int:
        """The row of `pointer` on `side` ("left" or "right"), or of its deepest ancestor shown."""
        lines = self._lines[0] if side == "left" else self._lines[1]
        tokens = split(pointer)
        while True:
            candidate = join("", *tokens)
            if candidate in lines:
                return lines[candidate]
            if not tokens:
                return 0
            tokens.pop()

    def add(self, row: Row) -> None:
        for side, pointer in enumerate((row.left, row.right)):
            if pointer is not None:
                self._lines[side].setdefault(pointer, len(self.rows))
        self.rows.append(row)


# Each step below yields the steps of its children, which `diff` runs to the end before resuming it:
# the walk keeps its stack in a list, not in Python's frames, so a document nested as deep as orjson
# reads (1024 levels) diffs like any other.
Steps = Iterator["Steps"]


def diff(left: Any, right: Any) -> Diff:
    out = Diff()
    stack = [_node(out, left, right, "", "", None, 0)]
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
        else:
            stack.append(child)
    out._texts.clear()  # keyed by ids, valid only while the documents are at hand
    return out


def _canonical(out: Diff, value: Any) -> bytes:
    return jsonsafe.text(value, sort_keys=True, memo=out._texts)


def _scalar(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return repr(value)


def _label(key: str | int | None) -> str:
    if key is None:
        return ""
    return f"[{key}] " if isinstance(key, int) else f"{_scalar(key)}: "


def _folded(value: Any) -> str:
    if isinstance(value, dict):
        return f"{{… {len(value)} key{'s' if len(value) != 1 else ''}}}"
    if isinstance(value, list):
        return f"[… {len(value)} item{'s' if len(value) != 1 else ''}]"
    return _scalar(value)


def _node(out: Diff, left: Any, right: Any, lp: str, rp: str, key: str | int | None, depth: int) -> Steps:
    label = _label(key)
    if type(left) is type(right) and isinstance(left, (dict, list)):
        if _canonical(out, left) == _canonical(out, right):
            out.add(Row(Op.SAME, depth, label + _folded(left), lp, rp))
            return
        opening, closing = ("{", "}") if isinstance(left, dict) else ("[", "]")
        out.add(Row(Op.SAME, depth, label + opening, lp, rp))
        if isinstance(left, dict):
            yield _object(out, left, right, lp, rp, depth + 1)
        else:
            yield _array(out, left, right, lp, rp, depth + 1)
        out.add(Row(Op.SAME, depth, closing, None, None))
    elif isinstance(left, (dict, list)) or isinstance(right, (dict, list)):
        # An object where a string was: one side's subtree goes, the other's comes, each node on its row.
        yield _whole(out, left, lp, None, key, depth, Op.REMOVED)
        yield _whole(out, right, None, rp, key, depth, Op.ADDED)
    elif _canonical(out, left) == _canonical(out, right):  # 1 and 1.0 differ on the wire; so do 1 and true
        out.add(Row(Op.SAME, depth, label + _scalar(left), lp, rp))
    else:
        out.add(Row(Op.CHANGED, depth, f"{label}{_scalar(left)} → {_scalar(right)}", lp, rp))


def _whole(out: Diff, value: Any, lp: str | None, rp: str | None, key: str | int | None, depth: int,
           op: Op) -> Steps:
    """A subtree on one side only, every node on its own row (a pointer inside it finds its line)."""
    label = _label(key)
    if isinstance(value, dict) and value:
        out.add(Row(op, depth, label + "{", lp, rp))
        for name, child in value.items():
            yield _whole(out, child, None if lp is None else join(lp, name), None if rp is None else join(rp, name),
                   name, depth + 1, op)
        out.add(Row(op, depth, "}", None, None))
    elif isinstance(value, list) and value:
        out.add(Row(op, depth, label + "[", lp, rp))
        for index, child in enumerate(value):
            yield _whole(out, child, None if lp is None else join(lp, index), None if rp is None else join(rp, index),
                   index, depth + 1, op)
        out.add(Row(op, depth, "]", None, None))
    else:
        out.add(Row(op, depth, label + _scalar(value), lp, rp))


def _object(out: Diff, left: dict[str, Any], right: dict[str, Any], lp: str, rp: str, depth: int) -> Steps:
    for name, value in left.items():
        if name in right:
            yield _node(out, value, right[name], join(lp, name), join(rp, name), name, depth)
        else:
            yield _whole(out, value, join(lp, name), None, name, depth, Op.REMOVED)
    for name, value in right.items():
        if name not in left:
            yield _whole(out, value, None, join(rp, name), name, depth, Op.ADDED)


def _array(out: Diff, left: list[Any], right: list[Any], lp: str, rp: str, depth: int) -> Steps:
    matcher = SequenceMatcher(None, [_canonical(out, v) for v in left], [_canonical(out, v) for v in right],
                              autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            if i2 - i1 == 1:
                out.add(Row(Op.SAME, depth, _label(j1) + _folded(left[i1]), join(lp, i1), join(rp, j1)))
            else:
                # One row for a run: a 200-turn history that did not change is one line, not 200.
                # Each element's pointer still lands here.
                line = len(out.rows)
                out.add(Row(Op.SAME, depth, f"[{j1}–{j2 - 1}] … {i2 - i1} unchanged items", join(lp, i1),
                            join(rp, j1)))
                for offset in range(1, i2 - i1):
                    out._lines[0].setdefault(join(lp, i1 + offset), line)
                    out._lines[1].setdefault(join(rp, j1 + offset), line)
            continue
        for i, j in _align(out, left[i1:i2], right[j1:j2]):
            if i is not None and j is not None:
                yield _node(out, left[i1 + i], right[j1 + j], join(lp, i1 + i), join(rp, j1 + j), j1 + j, depth)
            elif i is not None:
                yield _whole(out, left[i1 + i], join(lp, i1 + i), None, i1 + i, depth, Op.REMOVED)
            elif j is not None:
                yield _whole(out, right[j1 + j], None, join(rp, j1 + j), j1 + j, depth, Op.ADDED)


# Above this many element pairs a changed run pairs by position: the alignment costs n×m.
ALIGN_LIMIT = 10_000


def _align(out: Diff, left: list[Any], right: list[Any]) -> list[tuple[int | None, int | None]]:
    """A changed run of elements, paired in order by what they share: each element's set of scalar
    values (Jaccard). Across dialects the shapes differ but the values travel (a Chat tool message
    and an Anthropic tool_result block share the id and the text), so a system message dropped to
    a top-level field does not shift every message after it onto its neighbour."""
    if len(left) * len(right) > ALIGN_LIMIT:
        paired = min(len(left), len(right))
        return [(k, k) for k in range(paired)] + [(k, None) for k in range(paired, len(left))] + \
            [(None, k) for k in range(paired, len(right))]
    values = [_values(v) for v in left], [_values(v) for v in right]

    def score(i: int, j: int) -> float:
        a, b = values[0][i], values[1][j]
        return len(a & b) / len(a | b) if a and b else float(_canonical(out, left[i]) == _canonical(out, right[j]))

    # best[i][j]: the best total similarity aligning left[i:] with right[j:] (monotone, like an LCS).
    n, m = len(left), len(right)
    best = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            here = score(i, j)
            best[i][j] = max(best[i + 1][j], best[i][j + 1], here + best[i + 1][j + 1] if here > 0 else 0.0)
    pairs: list[tuple[int | None, int | None]] = []
    i = j = 0
    while i < n and j < m:
        here = score(i, j)
        if here > 0 and best[i][j] == here + best[i + 1][j + 1]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif best[i][j] == best[i + 1][j]:
            pairs.append((i, None))
            i += 1
        else:
            pairs.append((None, j))
            j += 1
    return pairs + [(k, None) for k in range(i, n)] + [(None, k) for k in range(j, m)]


def _values(value: Any) -> frozenset[bytes]:
    found: set[bytes] = set()
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif node is not None and not isinstance(node, bool):
            found.add(jsonsafe.text(node))
    return frozenset(found)
