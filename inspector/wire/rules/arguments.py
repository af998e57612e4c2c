"""Tool-call arguments as the dialects want them: Chat and Responses carry exactly one JSON text of an
object; the checker and the fixer both need to know what a given string really holds."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import orjson

from .. import jsonsafe

# How many nested JSON-in-a-string layers are unwrapped before giving up (the seed runtime's bound).
MAX_DEPTH = 4
# Where a fixer puts arguments that are not an object (the seed runtime's choice): {"value": …}.
WRAP_KEY = "value"

OBJECT, EMPTY, INVALID, CONCATENATED, ARRAY, SCALAR, NULL, TOO_DEEP = (
    "object", "empty", "invalid", "concatenated", "array", "scalar", "null", "too-deep")


@dataclass(frozen=True, slots=True)
class Decoded:
    kind: str
    value: Any  # the innermost decoded value (the raw text for invalid / concatenated / empty)
    layers: int  # JSON decodes it took to reach `value`
    # Why `value` is not what the text holds ("" when it is): a wide integer came out rounded, or
    # the text is nested deeper than orjson reads. Checking may go on; rewriting must not.
    unfaithful: str = ""

    @property
    def ok(self) -> bool:
        return self.kind == OBJECT and self.layers == 1

    def describe(self) -> str:
        encoded = {2: "double-encoded ", 3: "triple-encoded "}.get(self.layers, f"{self.layers}× encoded "
                                                                       if self.layers > 3 else "")
        if self.kind == OBJECT:
            return f"a {encoded}JSON object (a JSON string that decodes to a string first)"
        if self.kind == EMPTY:
            return "an empty string, not a JSON text" if self.layers == 0 else f"a {encoded}empty string"
        if self.kind == INVALID:
            return "not JSON (e.g. Python literal syntax or truncated text)"
        if self.kind == CONCATENATED:
            return "several JSON values concatenated ({…}{…})"
        if self.kind == TOO_DEEP:
            return f"a string still encoded after {MAX_DEPTH} decodes"
        noun = {ARRAY: "array", NULL: "null", SCALAR: "scalar"}[self.kind]
        return f"a {encoded}JSON {noun}, not an object"


def decode(text: str) -> Decoded:
    """What a JSON-text argument string holds, unwrapping repeated encodings up to MAX_DEPTH."""
    if not text.strip():
        return Decoded(EMPTY, text, 0)
    value: Any = text
    layers = 0
    unfaithful = ""
    while isinstance(value, str):
        if layers == MAX_DEPTH:
            return Decoded(TOO_DEEP, value, layers, unfaithful)
        try:
            inner = jsonsafe.loads(value)
        except jsonsafe.Unfaithful as exc:
            inner, unfaithful = orjson.loads(value), unfaithful or str(exc)
        except orjson.JSONDecodeError as exc:
            if layers == 0:
                if jsonsafe.too_deep_to_read(exc):
                    return Decoded(INVALID, value, 0, jsonsafe.TOO_DEEP_TO_READ)
                return Decoded(CONCATENATED if _concatenated(value) else INVALID, value, 0)
            # A JSON string whose content is not JSON: a string argument, encoded `layers` times.
            return Decoded(EMPTY if not value.strip() else SCALAR, value, layers, unfaithful)
        layers += 1
        value = inner
    if isinstance(value, dict):
        return Decoded(OBJECT, value, layers, unfaithful)
    if isinstance(value, list):
        return Decoded(ARRAY, value, layers, unfaithful)
    return Decoded(NULL if value is None else SCALAR, value, layers, unfaithful)


def _concatenated(text: str) -> bool:
    try:
        _, end = json.JSONDecoder().raw_decode(text.lstrip())
    except (ValueError, RecursionError):  # the standard library's parser recurses once per level
        return False
    rest = text.lstrip()[end:].strip()
    return bool(rest) and rest[0] in "{[\""


def as_object(value: Any) -> tuple[dict[str, Any], str]:
    """The arguments as an object, whatever they were, and a note of what was done ("" if nothing).
    Strings are decoded (repeated encodings unwrapped); anything else lands under WRAP_KEY.
    Raises jsonsafe.Unfaithful for a string whose decoded object would not be what it holds."""
    if isinstance(value, dict):
        return value, ""
    if not isinstance(value, str):
        return {WRAP_KEY: value}, f"non-object arguments wrapped under {WRAP_KEY!r}"
    decoded = decode(value)
    if decoded.unfaithful:
        raise jsonsafe.Unfaithful(f"arguments: {decoded.unfaithful}")
    if decoded.kind == OBJECT:
        note = "" if decoded.layers == 1 else f"unwrapped {decoded.layers} JSON encodings"
        return decoded.value, note
    if decoded.kind == EMPTY and decoded.layers == 0:
        return {}, "empty arguments replaced by {}"
    if decoded.kind in (INVALID, CONCATENATED, TOO_DEEP):
        return {WRAP_KEY: value}, f"unparseable arguments kept as text under {WRAP_KEY!r}"
    return {WRAP_KEY: decoded.value}, f"{decoded.describe()} wrapped under {WRAP_KEY!r}"


def encode(arguments: dict[str, Any]) -> str:
    """One JSON text, the form Chat and Responses carry."""
    return jsonsafe.dumps(arguments).decode()
