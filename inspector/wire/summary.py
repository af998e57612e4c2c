"""The few facts the flow list shows for every request: model, tool count, tool-call count, usage.
Where each dialect keeps them is its home's business (`dialects/<name>/summary.py`)."""

from __future__ import annotations

from typing import Any

from . import profiles
from .dialect import Dialect
from .dialects import home
from .dialects.gemini.fields import field


def inside(payload: Any, dialect: Dialect, kind: str) -> Any:
    """The dialect's own document, inside the envelope of any of its profiles that `payload` wears
    (Gemini Code Assist's): the flow list reads a flow without knowing its profile."""
    for each in home(dialect).profiles:
        inner, at = profiles.unwrap(payload, each, kind)
        if at:
            return inner
    return payload


def request_facts(payload: Any, dialect: Dialect | None, path: str = "") -> tuple[str, int]:
    """(model, number of tool declarations) of a request body. A body of no known dialect is read
    as Chat's, the shape most servers speak."""
    if not isinstance(payload, dict):
        return "", 0
    parts = home(dialect or Dialect.OPENAI_CHAT)
    found = payload.get("model")  # an envelope's (Code Assist's) names the model of the request inside
    model = found if isinstance(found, str) else ""
    if not model and parts.paths.model is not None:
        model = parts.paths.model(path)
    return model, parts.summary.tools(inside(payload, parts.dialect, "request"), path)


def response_tool_calls(payload: Any, dialect: Dialect | None) -> int:
    """Number of tool calls the model made in a (reassembled) response body."""
    if not isinstance(payload, dict) or dialect is None:
        return 0
    return home(dialect).summary.tool_calls(inside(payload, dialect, "response"))


def _count(node: Any, *names: str) -> int | None:
    """The sum of the token counts `names` present in `node` (either Gemini spelling), None if none is."""
    if not isinstance(node, dict):
        return None
    counts = [value for name in names for value in [field(node, name)[1]]
              if isinstance(value, int) and not isinstance(value, bool)]
    return sum(counts) if counts else None


def response_usage(payload: Any, dialect: Dialect | None) -> tuple[int | None, int | None]:
    """(tokens in, tokens out) as a (reassembled) response reports them; None where it does not."""
    usage_at = home(dialect).summary.USAGE if dialect is not None else None
    if dialect is None or not isinstance(payload, dict) or usage_at is None:
        return None, None
    where, inputs, outputs = usage_at
    usage = field(inside(payload, dialect, "response"), where)[1]
    return _count(usage, *inputs), _count(usage, *outputs)
