"""JSON that must come out as it went in: every path that parses a payload, changes it and writes
it again (repair, translate, fix) reads and writes through here.

orjson is not faithful at its edges: it reads an integer beyond the 64-bit range as a rounded float
(2**64 comes back as 1.8446744073709552e+19) and cannot write more than 254 levels of nesting,
although it reads up to 1024. A rewrite that would hit either edge raises `Unfaithful`, with the
reason, so its caller can relay the payload untouched or refuse it, never send it changed."""

from __future__ import annotations

import re
from typing import Any

import orjson

_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1  # what orjson.loads keeps as int; beyond it, a rounded float
# Outside that range lie only integers of 20+ digits and negative ones of 19 (-9223372036854775809).
# A body without such a run (19-digit nanosecond timestamps and ids are common; they fit) is cleared
# by a byte translation and two substring searches, ~1 ms per MB; the exact scan costs ~8.
_DIGITS_AND_MINUS = bytes(0x30 if 0x30 <= b <= 0x39 else b if b == 0x2D else 0x20 for b in range(256))
_LONG_RUNS = (b"0" * 20, b"-" + b"0" * 19)
# A whole JSON string (skipped: digits inside it are text), or an integer literal of 19+ digits that
# is not part of a fraction or an exponent.
_STRING_OR_LONG_INT = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"|(?<![\d.eE+-])(-?\d{19,})(?![\d.eE])')


TOO_DEEP_TO_READ = "nested more than 1024 levels deep, deeper than can be read"


class Unfaithful(ValueError):
    """The payload cannot go through orjson unchanged; the message says why."""


def too_deep_to_read(error: orjson.JSONDecodeError) -> bool:
    """Whether orjson.loads refused valid JSON only for its nesting (it stops at 1024 levels)."""
    return str(error).startswith("depth limit exceeded")


def wide_integer(text: bytes | str) -> str | None:
    """The first integer literal in a JSON text that does not fit in 64 bits (orjson would round
    it), or None. The text must be valid JSON (parse it first)."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    shape = data.translate(_DIGITS_AND_MINUS)
    if not any(run in shape for run in _LONG_RUNS):
        return None
    for match in _STRING_OR_LONG_INT.finditer(data):
        digits = match.group(1)
        # More than 20 digits never fits (and int() refuses texts of over 4300 digits).
        if digits is not None and (len(digits.lstrip(b"-")) > 20 or not _INT_MIN <= int(digits) <= _INT_MAX):
            return digits.decode("ascii")
    return None


def refuse_wide_integers(text: bytes | str) -> None:
    """Raise Unfaithful when orjson would round an integer of this (valid) JSON text."""
    wide = wide_integer(text)
    if wide is not None:
        shown = wide if len(wide) <= 30 else f"{wide[:12]}…{wide[-6:]} ({len(wide.lstrip('-'))} digits)"
        raise Unfaithful(f"the integer {shown} does not fit in 64 bits and would be rounded")


def loads(text: bytes | str) -> Any:
    """orjson.loads, refusing (Unfaithful) a text whose integers it would round.
    Invalid JSON raises orjson.JSONDecodeError as usual."""
    value = orjson.loads(text)
    refuse_wide_integers(text)
    return value


def dumps(value: Any, option: int | None = None) -> bytes:
    """orjson.dumps, with what it cannot write (too deep, an int beyond 64 bits, a lone surrogate)
    raised as Unfaithful with a readable reason."""
    try:
        return orjson.dumps(value, option=option)
    except orjson.JSONEncodeError as exc:
        raise Unfaithful(_reason(str(exc))) from None


def text(value: Any, *, sort_keys: bool = False, memo: dict[int, bytes] | None = None) -> bytes:
    """Compact JSON text of any value orjson reads, for showing and comparing (a rewrite goes through
    `dumps`, which refuses what it cannot write faithfully): orjson's own where it can write it; past
    its 254 levels (it reads 1024, deeper than Python recurses) or with an integer beyond 64 bits, the
    same text assembled bottom-up without recursion, each such integer in full.

    `memo` (id of a container -> its text) lets a caller that writes every subtree of one document
    (a diff compares each level's) write each node once; the document must outlive it."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else None)
    except orjson.JSONEncodeError:
        pass
    memo = {} if memo is None else memo
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        item, ready = stack.pop()
        if not isinstance(item, (dict, list)) or (not ready and id(item) in memo):
            continue
        if not ready:
            try:  # the shallow parts orjson writes itself: only the deep spine is assembled here
                memo[id(item)] = orjson.dumps(item, option=orjson.OPT_SORT_KEYS if sort_keys else None)
                continue
            except orjson.JSONEncodeError:
                stack.append((item, True))
                stack.extend((child, False) for child in (item.values() if isinstance(item, dict) else item))
        elif isinstance(item, dict):
            names = sorted(item) if sort_keys else item
            memo[id(item)] = b"{" + b",".join(_scalar(name) + b":" + _written(item[name], memo)
                                              for name in names) + b"}"
        else:
            memo[id(item)] = b"[" + b",".join(_written(child, memo) for child in item) + b"]"
    return _written(value, memo)


def _written(value: Any, memo: dict[int, bytes]) -> bytes:
    return memo[id(value)] if isinstance(value, (dict, list)) else _scalar(value)


def _scalar(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:  # an integer beyond 64 bits is exact as its digits; anything else as Python shows it
        return str(value).encode() if isinstance(value, int) else repr(value).encode()


def check_writable(value: Any) -> None:
    """Raise Unfaithful unless `value` can be written back. Also the cheap bound on nesting that
    makes a recursive walk of a parsed payload safe: orjson reads 1024 levels, Python recurses ~1000
    frames, and every level a walker recurses into costs it one or more."""
    dumps(value)


def _reason(message: str) -> str:
    if "Recursion limit" in message:
        return "nested more than 254 levels deep, deeper than can be written back"
    if "64-bit" in message:
        return "an integer does not fit in 64 bits"
    return f"cannot be written as JSON ({message})"
