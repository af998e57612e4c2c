"""Tool-name aliases (XL-02/03), call-id hygiene (XL-04) and argument decoding (XL-08)."""

from __future__ import annotations

import hashlib
import re
from typing import Any

import orjson

from .. import jsonsafe
from ..dialect import Dialect
from .model import Loss

# Names every target accepts as they are; anything else is aliased for that target.
_NAME_RULES = {
    Dialect.OPENAI_CHAT: re.compile(r"^[A-Za-z0-9_-]{1,64}$"),
    Dialect.OPENAI_RESPONSES: re.compile(r"^[A-Za-z0-9_-]{1,64}$"),
    Dialect.ANTHROPIC: re.compile(r"^[A-Za-z0-9_-]{1,64}$"),
    Dialect.GEMINI: re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$"),
}
_NAME_BAD_CHAR = {
    Dialect.GEMINI: re.compile(r"[^A-Za-z0-9_.:-]"),
}
_DEFAULT_BAD_CHAR = re.compile(r"[^A-Za-z0-9_-]")

# (charset, max length) of a call id each dialect accepts. Chat's 40 is the strictest endpoint
# seen (OC-16); Gemini ids are free-form and optional.
_ID_RULES = {
    Dialect.OPENAI_CHAT: (re.compile(r"^[\x21-\x7e]{1,40}$"), 40),
    Dialect.OPENAI_RESPONSES: (re.compile(r"^[\x21-\x7e]{1,64}$"), 64),
    Dialect.ANTHROPIC: (re.compile(r"^[A-Za-z0-9_-]{1,64}$"), 64),
    Dialect.GEMINI: (re.compile(r"^[\x21-\x7e]{1,64}$"), 64),
}


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def name_ok(name: str, dialect: Dialect) -> bool:
    return bool(_NAME_RULES[dialect].match(name))


class NameMap:
    """Injective, deterministic aliases for the names one target rejects. The alias depends on
    the name alone, so the same name is aliased the same way in tools, history and tool_choice,
    and again when the client replays a history the response handed back un-aliased."""

    def __init__(self, target: Dialect, reserved: set[str]) -> None:
        self.target = target
        self.forward: dict[str, str] = {}
        self.reverse: dict[str, str] = {}
        self._reserved = reserved  # valid names in use: an alias must never equal one of them

    def alias(self, name: str) -> str:
        if name in self.forward:
            return self.forward[name]
        if name_ok(name, self.target) and name not in self.reverse:
            alias = name
        else:
            alias = self._mint(name)
        self.forward[name] = alias
        self.reverse[alias] = name
        return alias

    def _mint(self, name: str) -> str:
        bad = _NAME_BAD_CHAR.get(self.target, _DEFAULT_BAD_CHAR)
        stem = bad.sub("_", name) or "tool"
        if self.target is Dialect.GEMINI and not re.match(r"[A-Za-z_]", stem):
            stem = "_" + stem
        digest = _digest(name)
        for width in range(8, 65, 4):
            alias = f"{stem[: 63 - width]}_{digest[:width]}"
            if alias not in self.reverse and alias not in self._reserved:
                return alias
        raise AssertionError("sha256 prefixes of 64 hex chars cannot all collide")


class IdMap:
    """Call ids rewritten for one target: kept when valid, otherwise minted from the source id so
    that a call and its result still pair (deterministic), two ids never merge (injective), and a
    minted id never equals an id already in the history (XL-04)."""

    def __init__(self, target: Dialect, taken: set[str], seed: str) -> None:
        self.pattern, self.limit = _ID_RULES[target]
        self.forward: dict[str, str] = {}
        self.reverse: dict[str, str] = {}
        self._taken = taken
        self._seed = seed

    def map(self, source_id: str) -> str:
        if source_id in self.forward:
            return self.forward[source_id]
        if self.pattern.match(source_id) and source_id not in self.reverse:
            target = source_id
        else:
            target = self._mint("id:" + source_id)
        self.forward[source_id] = target
        self.reverse[target] = source_id
        return target

    def mint(self, basis: str) -> str:
        """A fresh id for a call that had none (legacy function_call, Gemini functionCall)."""
        target = self._mint(f"new:{self._seed}:{basis}")
        self.forward[target] = target
        self.reverse[target] = target
        return target

    def _mint(self, basis: str) -> str:
        digest = _digest(basis)
        for width in range(24, 60, 4):
            candidate = "call_" + digest[: min(width, self.limit - 5)]
            if candidate not in self.reverse and candidate not in self._taken:
                return candidate
        raise AssertionError("sha256 prefixes cannot all collide")


def id_ok(call_id: str, dialect: Dialect) -> bool:
    return bool(_ID_RULES[dialect][0].match(call_id))


# --- arguments (XL-08) -------------------------------------------------------------------------

_UNWRAP_DEPTH = 4


def decode_arguments(text: Any, pointer: str, losses: list[Loss]) -> tuple[dict[str, Any], str | None]:
    """(object, the original text when it was exactly one JSON object). Repeated encodings are
    unwrapped to a bounded depth; arrays and scalars land under the stable key "value"."""
    if isinstance(text, dict):
        return text, None
    if text is None or text == "":
        return {}, None
    if not isinstance(text, str):
        losses.append(Loss(pointer, None, "converted", "arguments were a JSON value, not a JSON text; "
                           "kept under the key \"value\"", "XL-08"))
        return {"value": text}, None
    value: Any = text
    depth = 0
    while isinstance(value, str) and depth < _UNWRAP_DEPTH:
        try:
            value = jsonsafe.loads(value)
        except jsonsafe.Unfaithful as exc:
            raise jsonsafe.Unfaithful(f"arguments: {exc}") from None
        except orjson.JSONDecodeError as exc:
            if jsonsafe.too_deep_to_read(exc):  # valid JSON: keeping it as text would change it
                raise jsonsafe.Unfaithful(f"arguments: {jsonsafe.TOO_DEEP_TO_READ}") from None
            break
        depth += 1
    if isinstance(value, dict):
        if depth == 1:
            return value, text
        losses.append(Loss(pointer, None, "converted",
                           f"arguments were JSON-encoded {depth} times; unwrapped to one object", "XL-08"))
        return value, None
    if depth == 0:
        why = "arguments are not JSON; kept as text under the key \"value\""
    else:
        why = f"arguments decode to a JSON {_json_kind(value)}, not an object; kept under the key \"value\""
    losses.append(Loss(pointer, None, "converted", why, "XL-08"))
    return {"value": value}, None


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return "number"


def encode_arguments(arguments: dict[str, Any], raw: str | None) -> str:
    return raw if raw is not None else jsonsafe.dumps(arguments).decode()
