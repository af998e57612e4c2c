"""MCP's repairs: tools/call arguments and tools/list input schemas.

`fix(fixer, payload)` is this dialect's fixer (see `wire.fix`): it repairs `payload` in place."""

from __future__ import annotations

from typing import Any

from ...fix import Fixer, json_schema
from ...pointer import join
from ...rules import arguments


def fix(fixer: Fixer, payload: dict[str, Any]) -> None:
    params = payload.get("params")
    if payload.get("method") == "tools/call" and isinstance(params, dict) and "arguments" in params \
            and params["arguments"] is not None and not isinstance(params["arguments"], dict):
        params["arguments"], note = arguments.as_object(params["arguments"])
        fixer.note("MCP-04", "/params/arguments", "converted", note or "arguments decoded")
    result = payload.get("result")
    if isinstance(result, dict) and isinstance(result.get("tools"), list):
        for index, tool in enumerate(result["tools"]):
            if isinstance(tool, dict) and tool.get("inputSchema") is None:
                tool["inputSchema"] = {"type": "object", "additionalProperties": False}
                fixer.note("MCP-02", join("/result/tools", index, "inputSchema"), "set",
                           "null inputSchema → the recommended no-argument schema")
            elif isinstance(tool, dict) and isinstance(tool.get("inputSchema"), dict):
                tool["inputSchema"] = json_schema(fixer, tool["inputSchema"],
                                                   join("/result/tools", index, "inputSchema"), "XL-01")
