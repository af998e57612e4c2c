"""How to tell an MCP response from a request: a request names its `method`."""

from __future__ import annotations

from typing import Any

from ...naming import NameRule
from .. import gist

NAMES = NameRule("A-Za-z0-9_.-", 128, "A-Z a-z 0-9 _ - .")
JUDGED: dict[str, tuple[str, ...]] = {"request": ("method", "params"), "response": ("result", "error")}


def is_response(payload: dict[str, Any]) -> bool:
    return "method" not in payload


def claims(path: str) -> bool:
    return path.endswith("/mcp") or "/mcp/" in path + "/"


def stream_event(event: dict[str, Any]) -> bool:
    return event.get("jsonrpc") == "2.0"


def marks(document: dict[str, Any]) -> int:
    """A JSON-RPC message, a tools/ method, or a tool list whose every tool has an inputSchema."""
    method, tools = document.get("method"), document.get("tools")
    if document.get("jsonrpc") == "2.0" or (isinstance(method, str) and method.startswith("tools/")):
        return 2
    return 2 if isinstance(tools, list) and tools and all(isinstance(t, dict) and "inputSchema" in t
                                                          for t in tools) else 0


def describe(event: dict[str, Any]) -> str | None:
    """A JSON-RPC message over SSE: its method, or whether it is a result or an error."""
    if "jsonrpc" not in event:
        return None
    return gist(str(event.get("method") or ("error" if "error" in event else "result")),
                event.get("index", event.get("output_index")), None)
