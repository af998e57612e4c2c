"""Tool-call arguments across a bridge (XL-08): read as the checker and the fixer read them
(`rules.arguments`), every change reported as a loss."""

from __future__ import annotations

from typing import Any

from ..rules import arguments
from .model import Loss


def decode_arguments(value: Any, pointer: str, losses: list[Loss]) -> tuple[dict[str, Any], str | None]:
    """(object, the original text when it was exactly one JSON text of an object, so it can be
    sent on byte for byte). Repeated encodings are unwrapped; what is not an object lands under
    arguments.WRAP_KEY. Raises jsonsafe.Unfaithful where the object would not be what the text holds."""
    if value is None or value == "":  # no arguments at all: a call of a tool that takes none
        return {}, None
    obj, note = arguments.as_object(value)
    if note:
        losses.append(Loss(pointer, None, "converted", f"arguments: {note}", "XL-08"))
        return obj, None
    return obj, value if isinstance(value, str) else None


def encode_arguments(obj: dict[str, Any], raw: str | None) -> str:
    return raw if raw is not None else arguments.encode(obj)
