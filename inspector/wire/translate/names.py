"""Argument decoding (XL-08)."""

from __future__ import annotations

from typing import Any

import orjson

from .. import jsonsafe
from .model import Loss

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
