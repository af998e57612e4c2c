"""The few facts the flow list shows for every request: model, tool count, tool-call count, usage."""

from __future__ import annotations

from typing import Any

from .dialect import Dialect
from .dialects.gemini.fields import field


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def request_facts(payload: Any, dialect: Dialect | None, path: str = "") -> tuple[str, int]:
    """(model, number of tool declarations) of a request body."""
    if not isinstance(payload, dict):
        return "", 0
    model = payload.get("model") if isinstance(payload.get("model"), str) else ""
    if dialect is Dialect.GEMINI:
        if not model and "/models/" in path:
            model = path.split("/models/", 1)[1].split(":", 1)[0]
        # A tool object holds many function declarations, or one built-in tool (googleSearch, …).
        tools = 0
        for tool in _list(payload.get("tools")):
            if isinstance(tool, dict):
                key, declarations = field(tool, "functionDeclarations")
                tools += len(_list(declarations)) + (0 if key in tool else 1)
        return model, tools
    if dialect is Dialect.MCP:
        return "", 0
    return model, len(_list(payload.get("tools"))) + len(_list(payload.get("functions")))


def response_tool_calls(payload: Any, dialect: Dialect | None) -> int:
    """Number of tool calls the model made in a (reassembled) response body."""
    if not isinstance(payload, dict):
        return 0
    if dialect is Dialect.OPENAI_CHAT:
        count = 0
        for choice in _list(payload.get("choices")):
            message = choice.get("message") if isinstance(choice, dict) else None
            if isinstance(message, dict):
                count += len(_list(message.get("tool_calls"))) + (1 if message.get("function_call") else 0)
        return count
    if dialect is Dialect.OPENAI_RESPONSES:
        return sum(1 for item in _list(payload.get("output"))
                   if isinstance(item, dict) and isinstance(item.get("type"), str) and item["type"].endswith("_call"))
    if dialect is Dialect.ANTHROPIC:
        return sum(1 for block in _list(payload.get("content"))
                   if isinstance(block, dict) and block.get("type") in ("tool_use", "server_tool_use"))
    if dialect is Dialect.GEMINI:
        return sum(1 for cand in _list(payload.get("candidates")) if isinstance(cand, dict)
                   and isinstance(cand.get("content"), dict) for part in _list(cand["content"].get("parts"))
                   if isinstance(part, dict) and field(part, "functionCall")[0] in part)
    if dialect is Dialect.MCP:
        result = payload.get("result")
        return len(_list(result.get("tools"))) if isinstance(result, dict) else 0
    return 0


def _count(node: Any, *names: str) -> int | None:
    """The sum of the token counts `names` present in `node` (either Gemini spelling), None if none is."""
    if not isinstance(node, dict):
        return None
    counts = [value for name in names for value in [field(node, name)[1]]
              if isinstance(value, int) and not isinstance(value, bool)]
    return sum(counts) if counts else None


# Per dialect: where the usage object is, the counts that make the input, those that make the output.
_USAGE = {
    Dialect.OPENAI_CHAT: ("usage", ("prompt_tokens",), ("completion_tokens",)),
    Dialect.OPENAI_RESPONSES: ("usage", ("input_tokens",), ("output_tokens",)),
    # Cached input is counted apart from input_tokens; the model read all of it.
    Dialect.ANTHROPIC: ("usage", ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"),
                        ("output_tokens",)),
    # Thinking tokens are output the caller pays for.
    Dialect.GEMINI: ("usageMetadata", ("promptTokenCount",), ("candidatesTokenCount", "thoughtsTokenCount")),
}


def response_usage(payload: Any, dialect: Dialect | None) -> tuple[int | None, int | None]:
    """(tokens in, tokens out) as a (reassembled) response reports them; None where it does not."""
    if not isinstance(payload, dict) or dialect not in _USAGE:
        return None, None
    where, inputs, outputs = _USAGE[dialect]
    usage = field(payload, where)[1]
    return _count(usage, *inputs), _count(usage, *outputs)
