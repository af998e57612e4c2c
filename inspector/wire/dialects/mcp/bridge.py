"""MCP `tools/list` and `tools/call` results -> each dialect's tool declarations and tool-result item: this
module parses the MCP side; the target's home writes its own (`Home.tool_declaration`, `Home.tool_result`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...dialect import Dialect
from ...naming import NAME_RULES, IdMap, NameMap, mint_id
from ...pointer import join
from .. import home
from ...translate.common import Emit, declared_once, dumps
from ...translate.model import Loss, Part, Result, State, Tool, TranslationError

_TOOL_EXTRAS = ("title", "annotations", "outputSchema", "icons", "execution", "_meta")


def _unwrap(document: Any) -> tuple[Any, str, dict[str, Any] | None]:
    """(result, pointer of the result, the tools/call request when the document pairs one)."""
    request = None
    if isinstance(document, list):
        request = next((d for d in document if isinstance(d, dict) and d.get("method") == "tools/call"), None)
        response = next((d for d in document if isinstance(d, dict) and "result" in d), None)
        if response is None:
            raise TranslationError("no JSON-RPC result in the document", "")
        index = document.index(response)
        return response["result"], join("", index, "result"), request
    if isinstance(document, dict) and "result" in document and "jsonrpc" in document:
        return document["result"], "/result", None
    return document, "", None


def kind_of(document: Any) -> str:
    """"tools" for a tools/list result, "result" for a tools/call result."""
    result, _, _ = _unwrap(document)
    if isinstance(result, dict) and isinstance(result.get("tools"), list):
        return "tools"
    if isinstance(result, dict) and isinstance(result.get("content"), list):
        return "result"
    raise TranslationError("not an MCP tools/list or tools/call result", "")


def _emitters(target: Dialect) -> tuple[Callable[[list[Tool], Emit], Any], Callable[[Result, Emit], dict[str, Any]]]:
    """The target's tool-declaration and tool-result emitters (its home's): this bridge only parses."""
    parts = home(target)
    if parts.tool_declaration is None or parts.tool_result is None:
        raise TranslationError(f"MCP documents do not translate to {target.value}", "")
    return parts.tool_declaration, parts.tool_result


def _emit(target: Dialect, names: set[str]) -> Emit:
    state = State(Dialect.MCP, target)
    reserved = {n for n in names if NAME_RULES[target].ok(n)}
    return Emit(state, NameMap(NAME_RULES[target], reserved), IdMap(target, set(), ""), [])


def tools(document: Any, target: Dialect) -> tuple[dict[str, Any], list[Loss]]:
    result, base, _ = _unwrap(document)
    declared: list[Tool] = []
    losses: list[Loss] = []
    seen: set[str] = set()
    for i, tool in enumerate(result.get("tools") or []):
        here = join(base, "tools", i)
        name = tool.get("name") if isinstance(tool, dict) else None
        if not declared_once(name, here, seen, losses, verb="listed"):
            continue
        schema = tool.get("inputSchema")
        if not isinstance(schema, dict):
            raise TranslationError("inputSchema must be an object (MCP-02)", join(here, "inputSchema"))
        # Gemini declares what a function answers (responseJsonSchema); no other dialect does.
        output_schema = tool.get("outputSchema") if target is Dialect.GEMINI else None
        for key in _TOOL_EXTRAS:
            if key in tool and not (key == "outputSchema" and isinstance(output_schema, dict)):
                losses.append(Loss(join(here, key), None, "dropped", f"MCP tool {key} has no counterpart", ""))
        description = tool.get("description") or tool.get("title") or ""
        declared.append(Tool(name, str(description), schema, here, name_src=join(here, "name"),
                             schema_src=join(here, "inputSchema"),
                             output_schema=output_schema if isinstance(output_schema, dict) else None))
    emit = _emit(target, seen)
    out = _emitters(target)[0](declared, emit)
    return {"tools": out}, losses + emit.losses


def _content(result: dict[str, Any], base: str, losses: list[Loss], target: Dialect) -> list[Part]:
    parts: list[Part] = []
    for i, block in enumerate(result.get("content") or []):
        here = join(base, "content", i)
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            parts.append(Part("text", here, text=str(block.get("text", ""))))
        elif kind in ("image", "audio"):
            parts.append(Part(kind, here, mime=str(block.get("mimeType", "")), data=str(block.get("data", ""))))
        elif kind == "resource_link":
            parts.append(Part("file", here, url=str(block.get("uri", "")), mime=str(block.get("mimeType", "")),
                              filename=str(block.get("name", ""))))
        elif kind == "resource":
            resource = block.get("resource") or {}
            if "text" in resource:
                parts.append(Part("text", here, text=str(resource["text"])))
            else:
                parts.append(Part("file", here, mime=str(resource.get("mimeType", "")),
                                  data=str(resource.get("blob", "")), filename=str(resource.get("uri", ""))))
        else:
            raise TranslationError(f"MCP content block {kind!r} has no counterpart", here)
    structured = result.get("structuredContent")
    if structured is not None and target is not Dialect.GEMINI:  # Gemini takes the object (functionResponse)
        if parts:
            losses.append(Loss(join(base, "structuredContent"), None, "dropped",
                               "structuredContent is dropped; the text content carries the result (MCP-06)", "XL-15"))
        else:
            parts.append(Part("text", join(base, "structuredContent"), text=dumps(structured)))
            losses.append(Loss(join(base, "structuredContent"), None, "converted",
                               "structuredContent is carried as its JSON text", "XL-15"))
    return parts


def result_item(document: Any, target: Dialect) -> tuple[dict[str, Any], list[Loss]]:
    result, base, request = _unwrap(document)
    losses: list[Loss] = []
    parts = _content(result, base, losses, target)
    params = (request or {}).get("params") or {}
    name = params.get("name") if isinstance(params.get("name"), str) else None
    rpc_id = (request or {}).get("id", "")
    call_id = mint_id(f"mcp:{rpc_id}:{name}")
    losses.append(Loss(base, None, "synthesised", f"an MCP result carries no tool-call id; {call_id!r} stands in for "
                       "the id of the call it answers", "XL-04"))
    item = Result(call_id, name, parts, base, is_error=result.get("isError") is True,
                  structured=result.get("structuredContent"))
    emit = _emit(target, {name} if name else set())
    out = _emitters(target)[1](item, emit)
    return out, losses + emit.losses
